from django.apps import AppConfig

from apps.approvals.gathering import set_gate_gatherer, set_policy_facts_reader
from apps.core.signals import verification_recorded
from apps.costs.throughput import set_throughput_reader
from apps.evidence.requirement import set_requirement_reader
from apps.packets.composition import PacketComposer, set_composer


class CaseworkConfig(AppConfig):
    """What is about the whole case: its page and standing, the work lists, the packet's
    chapters, the offer matrix, search and the demo; above every domain app."""

    name = "apps.casework"
    label = "casework"

    def ready(self) -> None:
        # Every tracked write raises the mark of the cases it touches (connected there), and
        # one touching what a vendor's tier weighs keeps that tier (vendor_tiers).
        from apps.casework import (  # noqa: F401  (standing: signals)
            policy_facts,
            requirement,
            standing,
            stored_gates,
            throughput,
            vendor_tiers,
        )
        from apps.casework.packet import chapters
        from apps.casework.reassessments import on_verification_recorded

        # A passing verification may complete the vendor's open reassessment.
        verification_recorded.connect(
            on_verification_recorded, dispatch_uid="casework-settle-reassessments"
        )

        # The approval gates and issuing a packet read every area; they ask the layer,
        # which gathers from each (docs/layers.md); the pages a decision is taken on read
        # the whole case's gates kept since the last write that touched it.
        set_gate_gatherer(stored_gates.gather)
        # An approval policy's conditions read the contract value and the assessments.
        set_policy_facts_reader(policy_facts.read)
        # The unit costs divide the bills by what the chosen offer's load test served.
        set_throughput_reader(throughput.offer_throughput)
        # The verification checks measured floors against the case's requirement spec.
        set_requirement_reader(requirement.case_requirement)
        set_composer(
            PacketComposer(
                document_sections=chapters.document_sections,
                has_chapters=chapters.document_has_chapters,
                decision_line=chapters.decision_line,
            )
        )

from django.apps import AppConfig

from apps.approvals.gathering import set_gate_gatherer
from apps.packets.composition import PacketComposer, set_composer


class CaseworkConfig(AppConfig):
    """What is about the whole case: its page and standing, the work lists, the packet's
    chapters, the offer matrix, search and the demo; above every domain app."""

    name = "apps.casework"
    label = "casework"

    def ready(self) -> None:
        # Every tracked write raises the mark of the cases it touches (connected there).
        from apps.casework import gates, standing  # noqa: F401  (standing: its signal receivers)
        from apps.casework.packet import chapters

        # The approval gates and issuing a packet read every area; they ask the layer,
        # which gathers from each (docs/layers.md).
        set_gate_gatherer(gates.gather_case_gates)
        set_composer(
            PacketComposer(
                document_sections=chapters.document_sections,
                has_chapters=chapters.document_has_chapters,
            )
        )

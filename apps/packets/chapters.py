"""The packet's chapters, in order: the foundation's own, then every app that adds one.

Each module listed in ``PACKET_SECTION_PROVIDERS`` has
``packet_section(case) -> PacketSection | None``. A module missing from the
code base is an import error at start-up, never a chapter silently left out.
"""

from apps.acceptance import packet as acceptance_packet
from apps.access import packet as access_packet
from apps.approvals import packet as approvals_packet
from apps.assessments import packet as assessments_packet
from apps.audit import packet as audit_packet
from apps.comments import packet as comments_packet
from apps.contracts import packet as contracts_packet
from apps.costs import packet as costs_packet
from apps.evidence import packet as evidence_packet
from apps.offers.selectors import offers_of_case
from apps.packets.sections import (
    PacketSection,
    comparison_section,
    declared_specs_section,
    demand_section,
)
from apps.packets.summary import summary_section
from apps.workloads import packet as workloads_packet

PACKET_SECTION_PROVIDERS = (
    contracts_packet,
    assessments_packet,
    access_packet,
    evidence_packet,
    approvals_packet,
    acceptance_packet,
    workloads_packet,
    comments_packet,
    audit_packet,
    costs_packet,
)


def case_sections(case) -> list[PacketSection]:
    """Every section before the history and the manifest, in packet order."""
    offers = offers_of_case(case)
    sections = [demand_section(case, offers), comparison_section(case)]
    sections.append(declared_specs_section(offers))
    for module in PACKET_SECTION_PROVIDERS:
        section = module.packet_section(case)
        if section is not None:
            sections.append(section)
    # The executive summary comes first, drawn from what the other chapters gathered.
    sections.append(summary_section(sections))
    return sorted(sections, key=lambda section: section.order)

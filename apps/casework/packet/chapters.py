"""The packet's chapters, in order: the layer's own, then every app that adds one.

Each module listed in ``PACKET_SECTION_PROVIDERS`` has
``packet_section(case) -> PacketSection | None``. A module missing from the
code base is an import error at start-up, never a chapter silently left out.

Each deliverable issued on its own (``DOCUMENT_CHAPTERS``) is a selection of
the same chapter functions, so it says exactly what the whole-case packet says
in those chapters.
"""

from collections.abc import Callable
from dataclasses import dataclass

from apps.acceptance import packet as acceptance_packet
from apps.access import packet as access_packet
from apps.approvals import packet as approvals_packet
from apps.assessments import packet as assessments_packet
from apps.audit import packet as audit_packet
from apps.casework.packet.sections import (
    PacketSection,
    comparison_section,
    declared_specs_section,
    demand_section,
)
from apps.casework.packet.summary import summary_section
from apps.comments import packet as comments_packet
from apps.contracts import packet as contracts_packet
from apps.costs import packet as costs_packet
from apps.evidence import packet as evidence_packet
from apps.offers.selectors import offers_of_case
from apps.packets.models import DocumentKind
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
    sections.append(declared_specs_section(offers, case))
    for module in PACKET_SECTION_PROVIDERS:
        section = module.packet_section(case)
        if section is not None:
            sections.append(section)
    # The executive summary comes first, drawn from what the other chapters gathered.
    sections.append(summary_section(sections))
    return sorted(sections, key=lambda section: section.order)


SectionBuilder = Callable[..., PacketSection | None]


def _demand(case, offers) -> PacketSection:
    return demand_section(case, offers)


def _comparison(case, offers) -> PacketSection:
    return comparison_section(case)


def _declared_specs(case, offers) -> PacketSection:
    return declared_specs_section(offers)


def _provided_by(module) -> SectionBuilder:
    def section(case, offers) -> PacketSection | None:
        return module.packet_section(case)

    return section


@dataclass(frozen=True)
class DocumentChapters:
    """A deliverable's chapters: its own (at least one must have something recorded, or
    there is nothing to issue) and those that support them."""

    lead: tuple[SectionBuilder, ...]
    supporting: tuple[SectionBuilder, ...] = ()


# The chapters of each deliverable (docs/rules/audit.md#deliverables names the four and what each
# holds).
DOCUMENT_CHAPTERS: dict[str, DocumentChapters] = {
    # What is needed and what each offer declares and was measured to deliver.
    DocumentKind.SPEC_SHEET: DocumentChapters(
        lead=(_demand, _declared_specs),
        supporting=(_comparison, _provided_by(evidence_packet)),
    ),
    # The self-check record: clause by clause, then the data-export questions.
    DocumentKind.COMPLIANCE_RECORD: DocumentChapters(
        lead=(_provided_by(contracts_packet), _provided_by(assessments_packet)),
    ),
    DocumentKind.NETWORK_PLAN: DocumentChapters(lead=(_provided_by(access_packet),)),
    # The acceptance, and the load-test evidence its results rest on.
    DocumentKind.ACCEPTANCE_REPORT: DocumentChapters(
        lead=(_provided_by(acceptance_packet),),
        supporting=(_provided_by(evidence_packet),),
    ),
}


def document_sections(case, kind: str) -> list[PacketSection]:
    """The sections of a document of ``kind`` before its history and manifest, in order;
    none when a deliverable's own chapters have nothing recorded."""
    if kind == DocumentKind.PACKET:
        return case_sections(case)
    chapters = DOCUMENT_CHAPTERS[kind]
    offers = offers_of_case(case)
    lead = [section for build in chapters.lead if (section := build(case, offers)) is not None]
    if not lead:
        return []
    supporting = [build(case, offers) for build in chapters.supporting]
    sections = lead + [section for section in supporting if section is not None]
    return sorted(sections, key=lambda section: section.order)


def document_has_chapters(case, kind: str) -> bool:
    """Whether a document of ``kind`` would have something of its own to say."""
    if kind == DocumentKind.PACKET:
        return True
    offers = offers_of_case(case)
    return any(build(case, offers) is not None for build in DOCUMENT_CHAPTERS[kind].lead)

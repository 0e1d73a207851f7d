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
from types import ModuleType

from django.template.loader import render_to_string

from apps.acceptance import packet as acceptance_packet
from apps.access import packet as access_packet
from apps.approvals import packet as approvals_packet
from apps.approvals.selectors import case_approvals, current_approval
from apps.assessments import packet as assessments_packet
from apps.audit import packet as audit_packet
from apps.casework.packet.sections import (
    PacketSection,
    comparison_section,
    declared_specs_section,
    demand_section,
)
from apps.casework.packet.summary import SUMMARY_ORDER, summary_section
from apps.comments import packet as comments_packet
from apps.contracts import packet as contracts_packet
from apps.costs import packet as costs_packet
from apps.evidence import packet as evidence_packet
from apps.offers.selectors import offers_of_case
from apps.packets.models import DocumentKind
from apps.workloads import packet as workloads_packet


def _demand(case, offers) -> PacketSection:
    return demand_section(case, offers)


def _comparison(case, offers) -> PacketSection:
    return comparison_section(case)


def _declared_specs(case, offers) -> PacketSection:
    return declared_specs_section(offers, case)


def _declared_specs_listed(case, offers) -> PacketSection:
    # The spec sheet lists the declared specs without the requirement check beside them.
    return declared_specs_section(offers)


# The layer's own chapters, then every app that adds one: the order the packet prints
# its chapters in, after the executive summary (drawn from them) and before the change
# history and the manifest. This is the one place that order is set: each chapter's
# ``order`` is its place here.
OWN_CHAPTERS = (_demand, _comparison, _declared_specs)
PACKET_SECTION_PROVIDERS = (
    contracts_packet,
    assessments_packet,
    access_packet,
    evidence_packet,
    approvals_packet,
    acceptance_packet,
    comments_packet,
    costs_packet,
    workloads_packet,
    audit_packet,
)
_SAME_PLACE = {_declared_specs_listed: _declared_specs}

# A chapter: one of the layer's own functions ``(case, offers)``, or a providing module
# with ``packet_section(case)``.
Chapter = Callable[..., PacketSection | None] | ModuleType


def _built(chapters, case, offers) -> list[PacketSection]:
    """The sections of ``chapters`` that have something recorded, each numbered by its
    place in the packet."""
    places = {
        chapter: place
        for place, chapter in enumerate(
            (*OWN_CHAPTERS, *PACKET_SECTION_PROVIDERS), start=SUMMARY_ORDER + 1
        )
    }
    sections = []
    for chapter in chapters:
        if isinstance(chapter, ModuleType):
            section = chapter.packet_section(case)
        else:
            section = chapter(case, offers)
        if section is not None:
            section.order = places[_SAME_PLACE.get(chapter, chapter)]
            sections.append(section)
    return sorted(sections, key=lambda section: section.order)


def case_sections(case) -> list[PacketSection]:
    """Every section before the history and the manifest, in packet order."""
    offers = offers_of_case(case)
    sections = _built((*OWN_CHAPTERS, *PACKET_SECTION_PROVIDERS), case, offers)
    # The executive summary comes first, drawn from what the other chapters gathered.
    return [summary_section(sections), *sections]


@dataclass(frozen=True)
class DocumentChapters:
    """A deliverable's chapters: its own (at least one must have something recorded, or
    there is nothing to issue) and those that support them."""

    lead: tuple[Chapter, ...]
    supporting: tuple[Chapter, ...] = ()


# The chapters of each deliverable (docs/rules/audit.md#deliverables names the four and what each
# holds), printed in the packet's order.
DOCUMENT_CHAPTERS: dict[str, DocumentChapters] = {
    # What is needed and what each offer declares and was measured to deliver.
    DocumentKind.SPEC_SHEET: DocumentChapters(
        lead=(_demand, _declared_specs_listed),
        supporting=(_comparison, evidence_packet),
    ),
    # The self-check record: clause by clause, then the data-export questions.
    DocumentKind.COMPLIANCE_RECORD: DocumentChapters(lead=(contracts_packet, assessments_packet)),
    DocumentKind.NETWORK_PLAN: DocumentChapters(lead=(access_packet,)),
    # The acceptance, and the load-test evidence its results rest on.
    DocumentKind.ACCEPTANCE_REPORT: DocumentChapters(
        lead=(acceptance_packet,), supporting=(evidence_packet,)
    ),
}


def document_sections(case, kind: str) -> list[PacketSection]:
    """The sections of a document of ``kind`` before its history and manifest, in order;
    none when a deliverable's own chapters have nothing recorded."""
    if kind == DocumentKind.PACKET:
        return case_sections(case)
    chapters = DOCUMENT_CHAPTERS[kind]
    offers = offers_of_case(case)
    lead = _built(chapters.lead, case, offers)
    if not lead:
        return []
    return sorted(
        lead + _built(chapters.supporting, case, offers), key=lambda section: section.order
    )


def document_has_chapters(case, kind: str) -> bool:
    """Whether a document of ``kind`` would have something of its own to say."""
    if kind == DocumentKind.PACKET:
        return True
    return bool(_built(DOCUMENT_CHAPTERS[kind].lead, case, offers_of_case(case)))


def decision_line(case) -> str:
    """The decision in force, as the cover of the packet and of every deliverable prints
    it: who decided what on which offer, and whether subject to acceptance."""
    approval = current_approval(case_approvals(case))
    if approval is None:
        return ""
    return render_to_string("approvals/cover_decision.html", {"approval": approval}).strip()

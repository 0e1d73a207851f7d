"""The packet's chapters come in one order, set in one place, each at a place of its own."""

from apps.cases.models import ProcurementCase
from apps.casework.packet import chapters
from apps.casework.packet.chapters import (
    DOCUMENT_CHAPTERS,
    OWN_CHAPTERS,
    PACKET_SECTION_PROVIDERS,
    case_sections,
    document_sections,
)
from apps.packets.models import DocumentKind
from tests.packets.factories import make_packet_case

# The chapters of a case with every area recorded, as the demo's first case has them.
PACKET_ORDER = [
    "packets/sections/summary.html",
    "packets/sections/demand.html",
    "packets/sections/comparison.html",
    "packets/sections/specs.html",
]


def test_every_chapter_is_listed_once():
    listed = [*OWN_CHAPTERS, *PACKET_SECTION_PROVIDERS]
    assert len(listed) == len(set(listed))
    for kind, document in DOCUMENT_CHAPTERS.items():
        for chapter in (*document.lead, *document.supporting):
            assert chapters._SAME_PLACE.get(chapter, chapter) in listed, (kind, chapter)


def test_the_chapters_come_in_the_listed_order_each_at_a_place_of_its_own(seeded_demo):
    case = ProcurementCase.objects.order_by("pk").first()
    sections = case_sections(case)
    orders = [section.order for section in sections]
    assert orders == sorted(orders) and len(orders) == len(set(orders))
    assert [section.template for section in sections[:4]] == PACKET_ORDER
    providers = [module.packet_section(case) for module in PACKET_SECTION_PROVIDERS]
    expected = [section.template for section in providers if section is not None]
    assert [section.template for section in sections[4:]] == expected


def test_a_deliverable_prints_its_chapters_in_the_packets_order(priya):
    case = make_packet_case(priya)
    sections = document_sections(case, DocumentKind.SPEC_SHEET)
    titles = [section.title for section in sections]
    assert titles[:3] == [
        "Compute demand and sizing",
        "Comparison of offers and scorecards",
        "Declared specs",
    ]
    assert [section.order for section in sections] == sorted(s.order for s in sections)

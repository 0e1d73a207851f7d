"""The executive summary is read first: right after the cover, before the contents. It lists
the waivers the decision relies on: the case's own and the approved offer's, never those of
an offer that was not chosen."""

import re

import pytest
from django.utils import timezone

from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.contracts.services import red_flag_waive
from apps.core.services import tracked_update
from apps.packets.document import packet_document
from apps.packets.signing import get_signer
from tests.approvals.factories import make_ready_case
from tests.contracts.factories import all_acceptable, item, make_checklist, set_statuses

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PACKET_SIGNING_DIR = tmp_path / "signing"


def _document(case, actor):
    return packet_document(
        case,
        number="DIL-2026-000011",
        requested_by=actor,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def decided(people):
    """An approved offer, and a losing offer whose red flag is waived."""
    priya, lena, tariq = people["priya"], people["lena"], people["tariq"]
    case, winner, made = make_ready_case(people)
    case = tracked_update(
        case,
        actor=priya,
        reason="Waiver",
        fields={"offer_minimum_waiver": "Only two vendors serve this region"},
    )
    loser = made[1]
    checklist = make_checklist(lena, offer=loser)
    set_statuses(lena, checklist, {**all_acceptable(checklist), "sla": "needs_negotiation"})
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Loser's service credits")
    case = case_submit_for_approval(actor=priya, case=case)
    approval_decide(actor=tariq, case=case, offer=winner, decision="approved", comment="Best")
    case.refresh_from_db()
    return case, winner, loser


def test_the_summary_sits_between_the_cover_and_the_contents(people, decided):
    case, _winner, _loser = decided
    document = _document(case, people["aude"])
    for html in (document.html, document.front_html([3] * len(document.chapters), 40)):
        cover = html.index('class="cover"')
        summary = html.index("<h1>1. Executive summary</h1>")
        contents = html.index('<nav class="toc">')
        attached = html.index('<section class="attached">')
        assert cover < summary < contents < attached
        # The contents list the summary first, at the page it is laid out on.
        toc = html[contents : html.index("</nav>", contents)]
        entries = re.findall(r'<li><a href="#([^"]+)"( data-page="\d+")?>([^<]+)</a>', toc)
        assert entries[0] == ("section-1", "", "Executive summary")
        assert entries[1][2] == "Compute demand and sizing"
    # It is laid out with the front matter, not as a chapter of its own.
    assert [c.title for c in document.opening] == ["Executive summary"]
    assert "Executive summary" not in [c.title for c in document.chapters]
    assert document.html.count("<h1>1. Executive summary</h1>") == 1


def test_the_summary_lists_only_the_waivers_the_decision_relies_on(people, decided):
    case, winner, loser = decided
    document = _document(case, people["aude"])
    summary = _text(
        next(s for s in document.sections if s.template == "packets/sections/summary.html").html
    )
    relied = summary.split("Waivers relied on", 1)[1].split("Acceptance", 1)[0]
    assert "Three-offer minimum : Only two vendors serve this region" in relied
    assert "Loser's service credits" not in relied and str(loser.vendor) not in relied
    # The approval chapter still shows every waiver in force, the losing offer's too.
    approval = next(c for c in document.chapters if c.title.startswith("Approval"))
    assert "Loser&#x27;s service credits" in approval.html

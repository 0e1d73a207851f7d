import html
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from apps.approvals.findings import Severity, Status
from apps.approvals.models import FindingAcceptance
from apps.approvals.selectors import case_gates, case_register
from apps.cases.models import ProcurementCase
from apps.casework.demo import (
    BLOCKED_CASE_NAME,
    DEMO_CASE_NAME,
    FINDINGS_CASE_NAME,
    MIDWAY_CASE_NAME,
)
from apps.casework.findings import AREA_RULES
from apps.core.roles import Role
from apps.costs.models import CostImport
from apps.evidence.models import EvidenceBundle
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_case
from apps.portal.selectors import offer_claims
from apps.scorecards.models import Scorecard
from apps.sizing.selectors import demand_result
from apps.vendors.models import Vendor
from tests.pages import whole_case

HARD_RULE = "cannot be skipped or waived (export-control law)"


@pytest.fixture
def demo(demo_once, db):
    """The demo, seeded once for this module; each test's changes to it are undone."""
    return demo_once


def _counts() -> dict:
    return {
        "cases": ProcurementCase.objects.count(),
        "offers": Offer.objects.count(),
        "bundles": EvidenceBundle.objects.count(),
        "scorecards": Scorecard.objects.count(),
    }


def test_seed_demo_builds_the_cases_once(demo):
    before = _counts()
    call_command("seed_demo", stdout=StringIO())
    assert _counts() == before
    assert before["cases"] == 4 and Vendor.objects.count() == 3 and Offer.objects.count() == 7
    assert get_user_model().objects.count() == 6
    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    result, error = demand_result(case.compute_demand)
    assert error == "" and result.total_cards == 64  # a 70B model on about 64 H200
    unconfirmed = [o for o in offers_of_case(case) if not o.spec_status.confirmed]
    assert [o.spec_status.missing for o in unconfirmed] == [("driver version",)]
    assert Scorecard.objects.values("reviewer").distinct().count() == 2
    assert "diligence-demo" in demo


def test_the_first_case_can_be_approved_on_aurora(demo, client):
    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    assert case.status == ProcurementCase.Status.PENDING_APPROVAL
    ready = [entry for entry in case_gates(case) if entry.all_held]
    assert [str(entry.offer.vendor) for entry in ready] == ["Aurora Compute Pte. Ltd."]
    bundles = EvidenceBundle.objects.filter(offer=ready[0].offer).select_related("verification")
    [bundle] = [b for b in bundles if b.summary.get("run_role") != "gateway"]
    assert bundle.verification.verdict == "verified" and bundle.demo_note.startswith("Demo data")
    # The probe from the office gateway composes with it: another host, on purpose.
    [gateway] = [b for b in bundles if b.summary.get("run_role") == "gateway"]
    assert gateway.verification.verdict == "verified" and gateway.verification.findings == []
    # The between-nodes run and the environment measure the network and runtime claims.
    claims = {row.claim.name: row for row in offer_claims(ready[0].offer)[0]}
    for name in ("inter_node_network", "inter_node_bandwidth_gbit", "runtime_versions"):
        assert claims[name].measured_status == "pass", name
    # Nothing is billed, and nothing accepted, before an approval.
    assert not CostImport.objects.filter(case=case).exists()
    client.force_login(get_user_model().objects.get(username="tariq"))
    approval = client.get(f"/cases/{case.pk}/approval/").content.decode()
    assert "Aurora Compute Pte. Ltd." in approval and HARD_RULE not in approval
    page = whole_case(client, case.pk).content.decode()
    assert 'Aurora Compute Pte. Ltd.: <span class="badge ok">every gate held' in page
    assert "Pending approval: a tech lead approves one offer or rejects." in page
    assert "Demo data" in page
    detail = client.get(reverse("evidence:detail", args=[bundle.pk]))
    assert "Demo data" in detail.content.decode()


def test_every_claim_of_the_approvable_offer_is_measured(demo, client):
    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    offer = Offer.objects.get(case=case, vendor__name="Aurora Compute Pte. Ltd.")
    bundles = EvidenceBundle.objects.filter(offer=offer).select_related("verification")
    [bundle] = [b for b in bundles if b.summary.get("run_role") != "gateway"]
    checks = {c["key"]: c for c in bundle.verification.checks}
    for key in ("interconnect.topology", "interconnect.bandwidth", "interconnect.integrity"):
        assert checks[key]["status"] == "pass", checks[key]
    for key in ("disk.capacity", "disk.throughput"):
        assert checks[key]["status"] == "pass", checks[key]
    # Every declared value has its measurement beside it: judged, or (the cards of a
    # two-node offer, one node measured) shown; the vendor's document is no figure.
    rows, _verification = offer_claims(offer)
    for row in rows:
        if not row.value or not row.measurable:
            continue
        if row.claim.name == "accelerator_count":
            declared = offer.accelerator_count
            assert row.measured == f"8 cards on the node measured, of the {declared} declared"
            continue
        assert row.measured_status == "pass", (row.claim.name, row.measured)
    client.force_login(get_user_model().objects.get(username="aude"))
    claims = client.get(reverse("portal:claims", args=[offer.pk])).content.decode()
    assert "not measured yet" not in claims
    for label in ("Intra-node interconnect", "Intra-node bandwidth", "Local NVMe per node"):
        row = next(r for r in claims.split("<tr>") if label in r)
        assert '<span class="badge ok">pass</span>' in row, row
    # An offer with nothing measured says so for each declared value.
    other = Offer.objects.filter(case=case).exclude(pk=offer.pk).first()
    page = client.get(reverse("portal:claims", args=[other.pk])).content.decode()
    assert "not measured yet" in page or "Nothing has been measured" in page


def test_the_approvable_offers_training_step_is_measured_and_held_to_its_plan(demo, client):
    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    offer = Offer.objects.get(case=case, vendor__name="Aurora Compute Pte. Ltd.")
    bundles = EvidenceBundle.objects.filter(offer=offer).select_related("verification")
    [bundle] = [b for b in bundles if b.summary.get("run_role") != "gateway"]
    checks = {c["key"]: c for c in bundle.verification.checks}
    assert checks["training.throughput"]["status"] == "pass", checks["training.throughput"]
    assert checks["training.checkpoint"]["status"] == "pass", checks["training.checkpoint"]
    assert bundle.demo_note and bundle.client_summary_disagreements == []
    assert 0.92 < bundle.summary["training"]["scaling_efficiency"] < 0.94
    client.force_login(get_user_model().objects.get(username="tariq"))
    page = client.get(reverse("evidence:detail", args=[bundle.pk])).content.decode()
    assert "Reference training step" in page and "Demo data" in page
    plan = offer.acceptance_plan
    text = client.get(reverse("acceptance:plan", args=[plan.pk])).content.decode()
    for title in ("Training samples/s per card", "Checkpoint restore time"):
        row = next(r for r in text.split("<tr>") if title in r)
        assert "Passed" in row or "passed" in row, row


def test_the_second_case_is_blocked_by_the_hard_rule(demo, client):
    case = ProcurementCase.objects.get(name=BLOCKED_CASE_NAME)
    [entry] = case_gates(case)
    gate = next(g for g in entry.gates if g.key == "hardware_compliance")
    assert not gate.held and HARD_RULE in gate.reason
    client.force_login(get_user_model().objects.get(username="priya"))
    page = whole_case(client, case.pk).content.decode()
    assert HARD_RULE in page
    assert HARD_RULE in client.get(f"/cases/{case.pk}/approval/").content.decode()


def test_the_third_case_is_half_way_with_work_for_every_role(demo, client):
    case = ProcurementCase.objects.get(name=MIDWAY_CASE_NAME)
    assert case.status == ProcurementCase.Status.EVALUATING
    assert all(not entry.all_held for entry in case_gates(case))
    waiting = {
        "priya": "Not scored yet: score the offer",  # and only two offers so far
        "lena": "Data-export assessment not signed off",  # the assessment is a draft
        "tariq": "Access matrix not reviewed",
    }
    for username, work in waiting.items():
        client.force_login(get_user_model().objects.get(username=username))
        board = client.get("/dashboard/").content.decode()
        assert MIDWAY_CASE_NAME in board and work in board, username
    client.force_login(get_user_model().objects.get(username="tariq"))
    page = whole_case(client, case.pk).content.decode()
    assert "Not sized yet." not in page and "14 days" in page


def test_every_demo_user_can_sign_in(demo, client):
    for username in ("priya", "lena", "tariq", "fiona", "aude", "admin"):
        response = client.post(
            "/accounts/login/", {"username": username, "password": "diligence-demo"}
        )
        assert response.status_code == 302, username
        client.post("/accounts/logout/")


def test_the_first_case_has_no_blocking_finding_on_aurora(demo):
    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    aurora = Offer.objects.get(case=case, vendor__name="Aurora Compute Pte. Ltd.")
    register = case_register(case)
    assert register  # the other offers' findings are there
    on_aurora = [e for e in register if e.finding.offer_id in (aurora.pk, None)]
    assert [e.line() for e in on_aurora if e.blocking] == []


def test_the_fourth_case_shows_a_finding_of_each_weight(demo, client):
    case = ProcurementCase.objects.get(name=FINDINGS_CASE_NAME)
    [offer] = offers_of_case(case)
    areas = {e.rule.code: e for e in case_register(case) if not e.rule.code.startswith("gate.")}
    assert {code: (e.rule.severity, e.status) for code, e in areas.items()} == {
        "contracts.export_window_short": (Severity.BLOCKS, Status.OPEN),
        "contracts.sla_below_need": (Severity.NEEDS_ACCEPTANCE, Status.OPEN),
        "contracts.premium_in_range": (Severity.NEEDS_ACCEPTANCE, Status.ACCEPTED),
        # Borealis's SOC 2 Type II report runs out within 60 days.
        "vendors.certification_expiring": (Severity.INFORMS, Status.INFORMS),
    }
    assert all(e.finding.offer_id == offer.pk for e in areas.values())
    assert areas["contracts.sla_below_need"].awaiting == (Role.PROCUREMENT,)
    accepted = areas["contracts.premium_in_range"].acceptances
    assert {(a.role, a.accepted_by) for a in accepted} == {
        (Role.PROCUREMENT, "Priya Raman"),
        (Role.FINANCE, "Fiona Okafor"),
    }
    # 90 days from the day the demo accepted it (a run may pass midnight after seeding).
    seeded = {
        timezone.localdate(row.accepted_at) for row in FindingAcceptance.objects.filter(case=case)
    }
    assert {a.expires_on for a in accepted} == {day + timedelta(days=90) for day in seeded}
    # Every rule of the areas that only informs is shown here.
    informing = {r.code for r in AREA_RULES.values() if r.severity is Severity.INFORMS}
    assert informing <= set(areas), f"{informing} only inform: show each in the fourth case"
    # The approval page names the accepted finding beside its gate, and the open ones.
    client.force_login(get_user_model().objects.get(username="fiona"))
    page = html.unescape(client.get(f"/cases/{case.pk}/approval/").content.decode())
    assert "accepted by Priya Raman (Procurement reviewer)" in page
    assert "Fiona Okafor (Finance approver)" in page
    assert "Awaits acceptance by: Procurement reviewer." in page
    assert "fewer than the 60 days the case needs to leave" in page


def test_the_portfolio_compares_two_vendors_on_the_demo(demo, client):
    """Aurora's 64 cards picked for the chat case, Borealis's 16 for the speech-to-text
    case: 80 % and 20 % of the cards, two jurisdictions, four cases with open findings,
    and no bill yet (the page says only the commitments are shown)."""
    client.force_login(get_user_model().objects.get(username="fiona"))
    page = html.unescape(client.get(reverse("cases:portfolio")).content.decode())
    assert "1,737,984.00 USD" in page  # 64 × 12 × 730 × 3.10
    assert "364,416.00 USD" in page  # 16 × 12 × 730 × 2.60
    assert "Singapore" in page and "Japan" in page
    assert "80 %" in page and "20 %" in page
    assert "only the committed spend is shown" in page
    assert page.count("/findings/?open=") >= 4


def test_the_demo_vendors_carry_their_master_data(demo, client):
    borealis = Vendor.objects.get(name="Borealis GPU Cloud K.K.")
    assert borealis.owner.username == "priya"
    assert borealis.contact_people.count() == 1 and borealis.sub_processors.count() == 2
    assert all(v.certifications.exists() for v in Vendor.objects.all())
    client.force_login(get_user_model().objects.get(username="lena"))
    page = client.get(f"/vendors/{borealis.pk}/").content.decode()
    assert "Kenji Sato" in page and "Sakura Fiber K.K." in page
    assert "Expires within 60 days" in page and "Vendor certification expires" in page

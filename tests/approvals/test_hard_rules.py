"""Hard requirements hold end to end: approvable → blocked → approvable, through the API.

Exit readiness needs every item "yes" with its evidence; the hardware's export-control
status and authorisation documents can be neither skipped nor waived.
"""

import copy
import html

import pytest
from django.template.loader import render_to_string

from apps.approvals import packet as approvals_packet
from apps.approvals.services import case_submit_for_approval
from apps.contracts.models import RedFlagWaiver
from tests.approvals.factories import make_ready_case
from tests.contracts.factories import set_statuses
from tests.pages import whole_case

ASSESSMENTS = "/api/v1/data-export-assessments/"


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return case, offer


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready)


def _gates(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return {g["key"]: g for g in entry["gates"]}


def _packet_chapter(case) -> str:
    """The approval chapter as the signed packet prints it."""
    section = approvals_packet.packet_section(case)
    return html.unescape(
        render_to_string(section.template, {**section.context, "section": section})
    )


def _answer(api, assessment_pk: int, key: str, answer: dict):
    current = api.get(f"{ASSESSMENTS}{assessment_pk}/").json()
    return api.patch(
        f"{ASSESSMENTS}{assessment_pk}/",
        {"answers": {key: answer}, "change_reason": "Re-read", "version": current["version"]},
        format="json",
    )


@pytest.mark.parametrize(
    "key,answer,named",
    [
        ("image_rebuildable", {"value": "no", "note": "Vendor images only"}, "(answered 'No')"),
        (
            "data_fully_exportable",
            {"value": "not_applicable", "note": "n/a"},
            "(answered 'Not applicable')",
        ),
        ("orchestration_portable", {"value": "yes", "note": ""}, "no evidence note"),
    ],
)
def test_an_exit_item_not_confirmed_blocks_the_approval_and_names_itself(
    api_as, people, ready, key, answer, named
):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    assert _gates(tech, case, offer)["exit_readiness"]["held"] is True
    assessment = case.data_export_assessments.get()
    assert _answer(legal, assessment.pk, key, answer).status_code == 200
    gate = _gates(tech, case, offer)["exit_readiness"]
    assert gate["held"] is False and named in gate["reason"]
    case_submit_for_approval(actor=people["priya"], case=case)
    body = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    refused = tech.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")
    assert refused.status_code == 400 and named in str(refused.json()["offer"])
    # Back to "yes" with its evidence: approvable again.
    fixed = {"value": "yes", "note": "Exported 2 TB to our bucket in a test run"}
    assert _answer(legal, assessment.pk, key, fixed).status_code == 200
    # The edit voided the legal sign-off: the reviewer signs off what the answers now say.
    version = legal.get(f"{ASSESSMENTS}{assessment.pk}/").json()["version"]
    signed = legal.post(
        f"{ASSESSMENTS}{assessment.pk}/sign-off/", {"version": version}, format="json"
    )
    assert signed.status_code == 200, signed.content
    assert all(g["held"] for g in _gates(tech, case, offer).values())
    assert tech.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json").status_code == 201


def test_an_exit_slower_than_the_cases_window_blocks_the_approval(
    api_as, browser_as, people, ready
):
    """The assessment says we can leave in 30 days; the case needs to leave within 20."""
    case, offer = ready
    owner, tech = api_as("priya"), api_as("tariq")
    version = owner.get(f"/api/v1/cases/{case.pk}/").json()["version"]
    narrowed = owner.patch(
        f"/api/v1/cases/{case.pk}/",
        {"exit_window_days": 20, "version": version, "change_reason": "Exit needs"},
        format="json",
    )
    assert narrowed.status_code == 200, narrowed.content
    named = "(30 days, longer than the 20 days the case needs)"
    gate = _gates(tech, case, offer)["exit_readiness"]
    assert gate["held"] is False and named in gate["reason"]
    page = whole_case(browser_as("tariq"), case.pk)
    assert named in html.unescape(page.content.decode())
    case.refresh_from_db()  # the packet task reads the case as stored
    assert named in _packet_chapter(case)
    case_submit_for_approval(actor=people["priya"], case=case)
    body = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    refused = tech.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")
    assert refused.status_code == 400 and named in str(refused.json()["offer"])
    # The need widened to what the vendor can do: approvable again.
    version = owner.get(f"/api/v1/cases/{case.pk}/").json()["version"]
    widened = owner.patch(
        f"/api/v1/cases/{case.pk}/",
        {"exit_window_days": 30, "version": version, "change_reason": "Exit needs"},
        format="json",
    )
    assert widened.status_code == 200, widened.content
    assert _gates(tech, case, offer)["exit_readiness"]["held"] is True
    assert tech.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json").status_code == 201


def test_the_exit_window_is_a_positive_number_of_days(api_as, ready):
    case, _offer = ready
    owner = api_as("priya")
    version = owner.get(f"/api/v1/cases/{case.pk}/").json()["version"]
    refused = owner.patch(
        f"/api/v1/cases/{case.pk}/",
        {"exit_window_days": 0, "version": version, "change_reason": "Exit needs"},
        format="json",
    )
    assert refused.status_code == 400 and "exit_window_days" in refused.json()


def test_unknown_hardware_origin_blocks_approval(api_as, ready):
    case, offer = ready
    tech = api_as("tariq")
    assert _gates(tech, case, offer)["hardware_compliance"]["held"] is True
    assessment = case.data_export_assessments.get()
    _answer(api_as("lena"), assessment.pk, "authorization_documents", {"value": "no"})
    gate = _gates(tech, case, offer)["hardware_compliance"]
    assert gate["held"] is False and "cannot be skipped or waived" in gate["reason"]


def test_the_authorisation_documents_item_cannot_be_waived(api_as, people, ready):
    case, offer = ready
    checklist = offer.clause_checklist
    set_statuses(people["lena"], checklist, {"authorization_documents": "missing"})
    item = checklist.items.get(key="authorization_documents")
    response = api_as("lena").post(
        "/api/v1/red-flag-waivers/", {"item": item.pk, "reason": "We trust them"}, format="json"
    )
    assert response.status_code == 400
    assert "cannot be waived: export-control law" in str(response.json())
    assert not RedFlagWaiver.objects.filter(item=item).exists()
    other = checklist.items.get(key="sla")
    set_statuses(people["lena"], checklist, {"sla": "missing"})
    allowed = api_as("lena").post(
        "/api/v1/red-flag-waivers/", {"item": other.pk, "reason": "Credits suffice"}, format="json"
    )
    assert allowed.status_code == 201  # other red flags stay waivable


def test_only_compared_offers_count_towards_the_three(api_as, people, browser_as, ready):
    """An offer counts when priced and scored on every criterion by at least one reviewer."""
    case, offer = ready
    tech = api_as("tariq")
    assert _gates(tech, case, offer)["offer_minimum"]["held"] is True
    third = case.offers.order_by("pk").last()
    unpriced = api_as("priya").patch(
        f"/api/v1/offers/{third.pk}/",
        {"unit_price": None, "change_reason": "Quote withdrawn", "version": third.version},
        format="json",
    )
    assert unpriced.status_code == 200, unpriced.content
    gate = _gates(tech, case, offer)["offer_minimum"]
    assert gate["held"] is False
    assert "Only 2 of 3 offers compared" in gate["reason"]
    assert f"{third.vendor}: not priced" in gate["reason"]
    page = whole_case(browser_as("tariq"), case.pk).content.decode()
    assert f"{third.vendor}: not priced" in page  # the case page says the same
    waived = api_as("priya").post(
        f"/api/v1/cases/{case.pk}/waive-offer-minimum/",
        {"reason": "Only two vendors hold the export licence"},
        format="json",
    )
    assert waived.status_code == 200
    assert _gates(tech, case, offer)["offer_minimum"]["held"] is True


def test_an_offer_scored_on_some_criteria_only_is_not_compared(people):
    from apps.scorecards.selectors import case_comparison, not_comparable_reasons
    from apps.scorecards.services import scorecard_save
    from tests.factories import FULL_SPEC, make_case, make_offer

    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case, spec=FULL_SPEC)
    scorecard_save(actor=people["priya"], offer=offer, scores={"pricing": {"score": 4}})
    reasons = not_comparable_reasons(case_comparison(case))
    assert reasons == {offer.pk: f"{offer.vendor}: no reviewer scored it on every criterion"}

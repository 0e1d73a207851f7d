"""The data-export decision aid is a checked step, end to end through the API.

An approvable offer is blocked when the answers contradict each other on data
leaving the country, then while the mechanism the aid names has no status or is
in progress, and is approvable again once it is done. The approval gate, the case
page and the packet section give the same reason.
"""

import copy
from dataclasses import replace
from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from apps.approvals.gates import AssessmentFacts, evaluate_gates
from apps.approvals.services import case_submit_for_approval
from apps.assessments import packet as assessments_packet
from tests.approvals.factories import make_ready_case
from tests.approvals.test_gates import HELD

ASSESSMENTS = "/api/v1/data-export-assessments/"
LEAVES = "“Must raw training or inference data be sent abroad?” answered 'Yes'"
PI = "“Does the training or inference data contain personal information?” answered 'Yes'"
NOT_DONE = "“Has the required data-export assessment been completed?” answered 'No'"
SECURITY_ASSESSMENT = "Security assessment (declared via the provincial CAC)"


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return case, offer


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready)


def _gate(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return {g["key"]: g for g in entry["gates"]}


def _all_held(api, case, offer) -> bool:
    return all(g["held"] for g in _gate(api, case, offer).values())


def _answer(api, pk: int, answers: dict):
    current = api.get(f"{ASSESSMENTS}{pk}/").json()
    response = api.patch(
        f"{ASSESSMENTS}{pk}/",
        {
            "answers": answers,
            "change_reason": "Re-read the data flows",
            "version": current["version"],
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()


def _sign_off(api, pk: int, **mechanism):
    version = api.get(f"{ASSESSMENTS}{pk}/").json()["version"]
    return api.post(
        f"{ASSESSMENTS}{pk}/sign-off/", {"version": version, **mechanism}, format="json"
    )


def _shown_everywhere(client, api, case, offer, text: str) -> None:
    """The same words on the approval gate, the case page and the packet section."""
    gate = _gate(api, case, offer)["assessment"]
    assert gate["held"] is False and text in gate["reason"]
    page = client.get(reverse("cases:detail", args=[case.pk])).content.decode()
    assert escape(text) in page
    section = assessments_packet.packet_section(case)
    packet = render_to_string(section.template, {**section.context, "section": section})
    assert escape(text) in packet


def test_from_approvable_to_blocked_and_back(api_as, browser_as, people, ready):
    case, offer = ready
    legal, tech, page = api_as("lena"), api_as("tariq"), browser_as("aude")
    assessment = case.data_export_assessments.get()
    assert _all_held(tech, case, offer)

    # Personal information now goes abroad raw, without a completed export assessment.
    body = _answer(
        legal,
        assessment.pk,
        {"personal_information": {"value": "yes"}, "export_assessment_completed": {"value": "no"}},
    )
    contradiction = body["export_contradiction"]
    for words in (LEAVES, PI, NOT_DONE, "Personal Information Protection Law of the PRC"):
        assert words in contradiction
    assert body["prc_decision_aid"]["mechanism"] == "security_assessment"  # a CIIO
    _shown_everywhere(page, tech, case, offer, contradiction)
    refused = _sign_off(legal, assessment.pk, mechanism_status="done", mechanism_reference="X")
    assert refused.status_code == 400
    assert contradiction in refused.json()["sign_off"]

    # The assessment is completed: no contradiction, but the mechanism has no status.
    body = _answer(legal, assessment.pk, {"export_assessment_completed": {"value": "yes"}})
    assert body["export_contradiction"] == ""
    status = body["mechanism_status"]
    assert status["named"] and not status["held"] and "status not stated" in status["text"]
    assert status["text"].startswith(SECURITY_ASSESSMENT)
    _shown_everywhere(page, tech, case, offer, status["text"])
    refused = _sign_off(legal, assessment.pk)
    assert refused.status_code == 400
    assert "State the status of" in refused.json()["mechanism_status"][0]

    # In progress: a date already passed is refused; a coming one is recorded and waits.
    yesterday = timezone.localdate() - timedelta(days=1)
    refused = _sign_off(
        legal, assessment.pk, mechanism_status="in_progress", mechanism_expected_on=str(yesterday)
    )
    assert refused.status_code == 400 and "has passed" in str(refused.json())
    expected = timezone.localdate() + timedelta(days=45)
    signed = _sign_off(
        legal, assessment.pk, mechanism_status="in_progress", mechanism_expected_on=str(expected)
    )
    assert signed.status_code == 200, signed.content
    text = signed.json()["mechanism_status"]["text"]
    assert f"in progress, expected by {expected.isoformat()}" in text
    _shown_everywhere(page, tech, case, offer, text)
    case_submit_for_approval(actor=people["priya"], case=case)
    decision = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    refused = tech.post(f"/api/v1/cases/{case.pk}/decision/", decision, format="json")
    assert refused.status_code == 400 and expected.isoformat() in str(refused.json())

    # Done needs its reference; with it, the offer is approvable again.
    refused = _sign_off(legal, assessment.pk, mechanism_status="done", mechanism_reference=" ")
    assert refused.status_code == 400 and "reference" in str(refused.json()["mechanism_reference"])
    signed = _sign_off(
        legal, assessment.pk, mechanism_status="done", mechanism_reference="CAC-SA-2026-0042"
    )
    assert signed.status_code == 200, signed.content
    gate = _gate(tech, case, offer)["assessment"]
    assert gate["held"] and "done, reference CAC-SA-2026-0042" in gate["reason"]
    assert _all_held(tech, case, offer)
    approved = tech.post(f"/api/v1/cases/{case.pk}/decision/", decision, format="json")
    assert approved.status_code == 201, approved.content


def test_a_different_mechanism_needs_its_status_stated_again(api_as, browser_as, ready):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    assessment = case.data_export_assessments.get()
    _answer(legal, assessment.pk, {"personal_information": {"value": "yes"}})
    signed = _sign_off(legal, assessment.pk, mechanism_status="done", mechanism_reference="SA-1")
    assert signed.status_code == 200 and _all_held(tech, case, offer)
    # Not a CIIO, 200,000 individuals: now a standard contract or certification.
    body = _answer(
        legal,
        assessment.pk,
        {"prc_ciio": {"value": "no"}, "prc_individuals_non_sensitive": {"number": 200_000}},
    )
    status = body["mechanism_status"]
    assert status["mechanism"] == "standard_contract_or_certification"
    assert status["status"] == "done" and status["applies"] is False and not status["held"]
    assert "no longer call for" in status["text"]
    _shown_everywhere(browser_as("aude"), tech, case, offer, status["text"])
    # The status recorded for the security assessment does not carry over.
    assert _sign_off(legal, assessment.pk).status_code == 400
    signed = _sign_off(
        legal, assessment.pk, mechanism_status="done", mechanism_reference="SCC filing 110"
    )
    assert signed.status_code == 200 and _all_held(tech, case, offer)


def test_moving_the_status_back_blocks_again(api_as, ready):
    case, offer = ready
    legal, tech = api_as("lena"), api_as("tariq")
    assessment = case.data_export_assessments.get()
    _answer(legal, assessment.pk, {"personal_information": {"value": "yes"}})
    assert _sign_off(legal, assessment.pk, mechanism_status="not_needed").status_code == 200
    gate = _gate(tech, case, offer)["assessment"]
    assert gate["held"] and "not needed, as the legal reviewer stated" in gate["reason"]
    assert _all_held(tech, case, offer)
    back = timezone.localdate() + timedelta(days=10)
    signed = _sign_off(
        legal, assessment.pk, mechanism_status="in_progress", mechanism_expected_on=str(back)
    )
    assert signed.status_code == 200
    gate = _gate(tech, case, offer)["assessment"]
    assert not gate["held"] and "in progress, expected by" in gate["reason"]


# --- the gate on plain data -----------------------------------------------------------------


@pytest.mark.parametrize(
    "facts,held,words",
    [
        (dict(contradiction="Contradictory answers: A, yet B."), False, "Contradictory answers"),
        (dict(mechanism_held=False, mechanism_text="SA: status not stated."), False, "not stated"),
        (dict(mechanism_held=True, mechanism_text="SA: done, reference R-1."), True, "R-1"),
        (dict(), True, "Signed off; review by 2026-08-01."),
    ],
)
def test_gate_assessment_gives_the_checked_step_in_its_words(facts, held, words):
    inputs = replace(HELD, assessment=replace(HELD.assessment, **facts))
    gate = next(g for g in evaluate_gates(inputs) if g.key == "assessment")
    assert gate.held is held and words in gate.reason


def test_gate_names_every_problem_of_an_unsigned_assessment():
    facts = AssessmentFacts(
        True,
        signed_off=False,
        contradiction="Contradictory answers: A, yet B.",
        mechanism_held=False,
        mechanism_text="SA: status not stated.",
    )
    gate = next(g for g in evaluate_gates(replace(HELD, assessment=facts)) if g.key == "assessment")
    assert gate.reason == (
        "Contradictory answers: A, yet B. SA: status not stated. The assessment is not signed off."
    )

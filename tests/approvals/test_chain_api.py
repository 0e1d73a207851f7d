"""A later step of an approval chain decided through the API, as on the page: the person
the step waits for gets 201 and the case moves on; anyone else who reads approvals is
refused with 403, a role without approvals too, and an anonymous caller with 401."""

import pytest

from apps.approvals.models import ChainDecision
from apps.approvals.services import case_submit_for_approval
from apps.cases.models import ProcurementCase
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case
from tests.approvals.test_chains import make_policy, tech_lead_approves

pytestmark = pytest.mark.django_db

BODY = {"step": 1, "decision": "approved", "comment": "Covered by the assessment"}


@pytest.fixture
def chain_waits_for_legal(people):
    case, offer, _made = make_ready_case(people)
    case = case_submit_for_approval(actor=people["priya"], case=case)
    make_policy(people["ada"], {"role": Role.LEGAL, "label": "Legal review"})
    tech_lead_approves(people, case, offer)
    return case


def _url(case) -> str:
    return f"/api/v1/cases/{case.pk}/chain-decision/"


def test_the_step_s_approver_decides_it_and_the_case_is_approved(api_as, chain_waits_for_legal):
    case = chain_waits_for_legal

    made = api_as("lena").post(_url(case), BODY, format="json")

    assert made.status_code == 201, made.content
    body = made.json()
    assert body["step"] == 1 and body["decision"] == "approved"
    assert body["decided_by"] == "lena" and body["on_behalf_of"] is None
    assert body["chain_state"] == "approved" and body["case_status"] == "approved"
    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.APPROVED
    again = api_as("lena").post(_url(case), BODY, format="json")
    assert again.status_code == 409  # the case is no longer pending approval


@pytest.mark.parametrize("role", ["priya", "tariq", "aude"])
def test_anyone_else_is_refused_and_nothing_is_recorded(api_as, chain_waits_for_legal, role):
    case = chain_waits_for_legal

    refused = api_as(role).post(_url(case), BODY, format="json")

    assert refused.status_code == 403
    assert not ChainDecision.objects.filter(chain__case=case).exists()


def test_a_bad_body_is_refused_by_field_and_an_anonymous_caller_with_401(
    api_as, client, chain_waits_for_legal
):
    case = chain_waits_for_legal
    bad = api_as("lena").post(_url(case), {"step": 0, "decision": "maybe"}, format="json")
    assert bad.status_code == 400 and {"step", "decision", "comment"} <= set(bad.json())
    not_due = api_as("lena").post(_url(case), {**BODY, "step": 2}, format="json")
    assert not_due.status_code == 400 and "step" in not_due.json()
    anonymous = client.post(_url(case), BODY, content_type="application/json")
    assert anonymous.status_code == 401

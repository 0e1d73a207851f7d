"""Submitting, deciding, binding to the approved state, and staleness (docs/rules/approvals.md)."""

import copy

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from apps.approvals.binding import changes_for
from apps.approvals.models import Approval
from apps.approvals.services import (
    approval_decide,
    case_submit_for_approval,
    stale_approvals_record,
)
from apps.approvals.tasks import record_stale_approvals_task
from apps.cases.models import ProcurementCase
from tests.approvals.factories import make_ready_case, make_verification
from tests.contracts.factories import set_statuses
from tests.factories import make_case, make_offer

Status = ProcurementCase.Status


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, offers = make_ready_case(module_people)
    case = case_submit_for_approval(actor=module_people["priya"], case=case)
    return case, offer, offers


@pytest.fixture
def ready(_ready, people):
    """The case submitted for approval, built once for the module; each test its copy."""
    return copy.deepcopy(_ready)


def test_the_owner_submits_and_the_case_waits_for_a_decision(people):
    case, _offer, _offers = make_ready_case(people)
    case = case_submit_for_approval(actor=people["priya"], case=case, note="All gates green")
    assert case.status == Status.PENDING_APPROVAL
    row = case.history.first()
    assert row.history_user == people["priya"]
    assert row.history_change_reason == "Submitted for approval: All gates green"


def test_submission_is_refused_for_others_and_from_draft(people):
    case = make_case(people["priya"])
    with pytest.raises(ValidationError) as refused:
        case_submit_for_approval(actor=people["priya"], case=case)
    assert "status" in refused.value.message_dict
    make_offer(people["priya"], case)
    case.refresh_from_db()
    with pytest.raises(PermissionDenied):
        case_submit_for_approval(actor=people["lena"], case=case)
    case.refresh_from_db()
    assert case.status == Status.EVALUATING


def test_approval_is_refused_while_any_gate_is_open_with_the_reasons(ready, people):
    case, _offer, offers = ready
    unready = offers[1]  # no checklist, no verification
    with pytest.raises(ValidationError) as refused:
        approval_decide(
            actor=people["tariq"],
            case=case,
            offer=unready,
            decision="approved",
            comment="Looks fine",
        )
    reasons = refused.value.message_dict["offer"]
    assert any("No clause checklist for this offer yet." in r for r in reasons)
    assert any("No spec verification for this offer yet." in r for r in reasons)
    assert any("Endpoint refuses unauthenticated" in r for r in reasons)
    assert len(reasons) == 3
    assert Approval.objects.count() == 0
    case.refresh_from_db()
    assert case.status == Status.PENDING_APPROVAL


def test_the_tech_lead_approves_a_ready_offer_bound_to_its_state(ready, people):
    case, offer, _offers = ready
    approval = approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Best value"
    )
    case.refresh_from_db()
    assert case.status == Status.APPROVED
    assert approval.decided_by == people["tariq"]
    assert all(g["held"] for g in approval.gates) and len(approval.gates) == 10
    models = {r["model"] for r in approval.bound_state["records"]}
    assert {
        "cases.procurementcase",
        "offers.offer",
        "offers.declaredspec",
        "contracts.clausechecklist",
        "contracts.checklistitem",
        "assessments.dataexportassessment",
        "assessments.assessmentanswer",
        "access.accessmatrix",
        "access.accessgrant",
        "evidence.specverification",
        "evidence.evidencebundle",
    } <= models
    assert all(r["history_id"] for r in approval.bound_state["records"] if r["field"] == "id")
    assert len(approval.bound_state["evidence"]) == 1
    assert len(approval.bound_state["evidence"][0]["sha256"]) == 64
    assert changes_for([approval])[approval.pk] == []
    row = approval.history.first()
    assert (row.history_user, row.history_change_reason) == (
        people["tariq"],
        "Approved: Best value",
    )
    assert case.history.first().history_change_reason.startswith("Approved (")


def test_no_one_decides_a_request_they_raised(people):
    case, offer, _offers = make_ready_case(people)
    # The admin holds every permission, yet may not decide a case they own.
    case.owner = people["ada"]
    case.save()
    case_submit_for_approval(actor=people["ada"], case=case)
    case.refresh_from_db()
    for decision in ("approved", "rejected"):
        with pytest.raises(PermissionDenied, match="You raised this request"):
            approval_decide(
                actor=people["ada"], case=case, offer=offer, decision=decision, comment="Mine"
            )
    with pytest.raises(PermissionDenied):
        approval_decide(
            actor=people["priya"], case=case, offer=offer, decision="approved", comment="x"
        )
    assert Approval.objects.count() == 0


def test_a_decision_needs_a_comment_and_a_pending_case(ready, people):
    case, offer, _offers = ready
    with pytest.raises(ValidationError) as refused:
        approval_decide(
            actor=people["tariq"], case=case, offer=offer, decision="approved", comment=" "
        )
    assert "comment" in refused.value.message_dict
    with pytest.raises(ValidationError) as refused:
        approval_decide(actor=people["tariq"], case=case, decision="approved", comment="No offer")
    assert "offer" in refused.value.message_dict
    other = make_case(people["priya"])
    with pytest.raises(ValidationError) as refused:
        approval_decide(actor=people["tariq"], case=other, decision="rejected", comment="No")
    assert "status" in refused.value.message_dict
    assert Approval.objects.count() == 0


def test_rejection_stays_in_history_and_a_later_approval_supersedes_it(ready, people):
    case, offer, _offers = ready
    rejected = approval_decide(
        actor=people["tariq"], case=case, decision="rejected", comment="Prepayment too high"
    )
    case.refresh_from_db()
    assert case.status == Status.REJECTED
    case = case_submit_for_approval(actor=people["priya"], case=case, note="Renegotiated")
    approved = approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Now fine"
    )
    rejected.refresh_from_db()
    assert rejected.superseded_by == approved and rejected.superseded_at is not None
    assert (
        rejected.history.first().history_change_reason == f"Superseded by decision #{approved.pk}"
    )
    assert Approval.objects.count() == 2


def test_a_later_change_makes_the_approval_stale_everywhere(ready, people, browser_as):
    case, offer, _offers = ready
    approval = approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Go"
    )
    checklist = offer.clause_checklist
    set_statuses(
        people["lena"], checklist, {"sla": "needs_negotiation"}, reason="Vendor cut the SLA"
    )
    changes = changes_for([approval])[approval.pk]
    item = next(c for c in changes if c.model == "contracts.checklistitem")
    assert (item.reason, item.user, item.action) == ("Vendor cut the SLA", "lena", "changed")
    for url in (
        reverse("approvals:case", args=[case.pk]),
        reverse("cases:area", args=[case.pk, "approval"]),
    ):
        page = browser_as("aude").get(url).content.decode()
        assert "Stale approval" in page and "Vendor cut the SLA" in page
    # The beat task records it once: history, and the case needs a fresh decision.
    assert record_stale_approvals_task() == [approval.pk]
    assert record_stale_approvals_task() == []
    approval.refresh_from_db()
    assert approval.stale_at is not None
    assert "Vendor cut the SLA" in {c["reason"] for c in approval.stale_changes}
    assert approval.history.first().history_change_reason.startswith("Stale: ")
    case.refresh_from_db()
    assert case.status == Status.PENDING_APPROVAL
    assert "is stale" in case.history.first().history_change_reason
    # The red flag now keeps the offer from approval; a rejection is the fresh decision.
    with pytest.raises(ValidationError):
        approval_decide(
            actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Again"
        )
    approval_decide(actor=people["tariq"], case=case, decision="rejected", comment="SLA cut")
    approval.refresh_from_db()
    assert approval.superseded_at is not None


def test_new_evidence_makes_an_approval_stale_and_a_re_decision_works_at_once(ready, people):
    case, offer, _offers = ready
    approval = approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Go"
    )
    make_verification(
        people["tariq"], offer
    )  # a newer run: the approved evidence is no longer the latest
    assert "evidence.specverification" in {c.model for c in changes_for([approval])[approval.pk]}
    case.refresh_from_db()
    assert case.status == Status.APPROVED
    again = approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="New run ok"
    )
    approval.refresh_from_db()
    assert approval.stale_at is not None and approval.superseded_by == again
    assert changes_for([again])[again.pk] == []
    assert stale_approvals_record() == []


def test_the_cases_own_status_moves_are_not_a_change_but_an_edit_is(ready, people):
    from apps.core.services import tracked_update

    case, offer, _offers = ready
    approval = approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Go"
    )
    case.refresh_from_db()
    # Acceptance moves the case on and, when a sign-off is voided, back: the decision stands.
    case = tracked_update(
        case, actor=people["tariq"], reason="Accepted", fields={"status": Status.ACCEPTED}
    )
    case = tracked_update(
        case, actor=people["tariq"], reason="Sign-off void", fields={"status": Status.APPROVED}
    )
    assert changes_for([approval])[approval.pk] == []
    assert record_stale_approvals_task() == []
    # An edit to what was judged still makes it stale, status moves or not.
    case = tracked_update(
        case,
        actor=people["priya"],
        reason="Doubled the concurrency",
        fields={"requirements": "1,200 concurrent conversations"},
    )
    [change] = [c for c in changes_for([approval])[approval.pk] if c.model.startswith("cases.")]
    assert change.reason == "Doubled the concurrency"

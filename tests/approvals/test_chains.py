"""Approval chains (docs/rules/approvals.md#approval-chains): after the tech lead approves
an offer, the policy in force asks its steps in order (those of one order number side by
side), each until its quorum; a rejection at any step rejects the case. The chain copies
the policy when it starts, so an edit of the policy changes nothing already running."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from apps.approvals import policies
from apps.approvals.models import (
    Approval,
    ApprovalChain,
    ApprovalPolicy,
    ChainDecision,
    Delegation,
    PolicyStep,
)
from apps.approvals.services import (
    approval_decide,
    case_submit_for_approval,
    chain_step_decide,
    policy_record_create,
    policy_record_update,
)
from apps.assessments.services import assessment_create
from apps.cases.models import ProcurementCase
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case
from tests.assessments.factories import complete_answers

pytestmark = pytest.mark.django_db

Status = ProcurementCase.Status
APPROVED, REJECTED = Approval.Decision.APPROVED, Approval.Decision.REJECTED


def make_policy(ada, *steps, name="Chain") -> ApprovalPolicy:
    """A policy in force; each step a dict of PolicyStep fields (``order`` and ``label``
    given or numbered)."""
    policy = policy_record_create(
        ApprovalPolicy, actor=ada, fields={"name": name, "in_force": True}
    )
    for number, fields in enumerate(steps, start=1):
        fields = {"order": number, "label": f"Step {number}", **fields}
        policy_record_create(PolicyStep, actor=ada, fields={"policy": policy, **fields})
    return policy


def finance_person(username: str):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(username=username, password="pw")
    user.groups.add(Group.objects.get(name=Role.FINANCE))
    return user


@pytest.fixture
def pending(people):
    case, offer, _made = make_ready_case(people)
    case = case_submit_for_approval(actor=people["priya"], case=case)
    return case, offer


def tech_lead_approves(people, case, offer):
    return approval_decide(
        actor=people["tariq"], case=case, decision=APPROVED, comment="Gates hold", offer=offer
    )


def decide(person, case, step, decision=APPROVED, comment="Fine by me"):
    return chain_step_decide(actor=person, case=case, step=step, decision=decision, comment=comment)


def status(case) -> str:
    return ProcurementCase.objects.get(pk=case.pk).status


def open_steps(case) -> set[int]:
    chain = ApprovalChain.objects.get(case=case)
    return policies.open_positions(chain, list(chain.decisions.all()))


def test_steps_in_sequence_each_wait_for_the_one_before(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.LEGAL}, {"role": Role.FINANCE})
    chain = tech_lead_approves(people, case, offer)
    assert isinstance(chain, ApprovalChain) and chain.state == ApprovalChain.State.RUNNING
    assert status(case) == Status.PENDING_APPROVAL
    assert not Approval.objects.filter(case=case).exists()  # nothing in force yet
    assert open_steps(case) == {1}
    # Finance's step is not due before legal's.
    with pytest.raises(ValidationError, match="does not wait"):
        decide(people["fiona"], case, 2)
    decide(people["lena"], case, 1)
    assert open_steps(case) == {2} and status(case) == Status.PENDING_APPROVAL
    decide(people["fiona"], case, 2)
    assert status(case) == Status.APPROVED
    approval = Approval.objects.get(case=case)
    # The decision in force is the tech lead's, bound to what the gates read.
    assert approval.decided_by == people["tariq"] and approval.offer == offer
    assert approval.bound_state["records"]
    chain.refresh_from_db()
    assert chain.state == ApprovalChain.State.APPROVED and chain.approval == approval


def test_steps_of_one_order_run_in_parallel(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.LEGAL, "order": 1}, {"role": Role.FINANCE, "order": 1})
    tech_lead_approves(people, case, offer)
    assert open_steps(case) == {1, 2}
    decide(people["fiona"], case, 2)
    assert open_steps(case) == {1} and status(case) == Status.PENDING_APPROVAL
    decide(people["lena"], case, 1)
    assert status(case) == Status.APPROVED


def test_a_step_waits_for_its_quorum_and_nobody_counts_twice(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.FINANCE, "quorum": 2})
    tech_lead_approves(people, case, offer)
    decide(people["fiona"], case, 1)
    assert status(case) == Status.PENDING_APPROVAL
    with pytest.raises(PermissionDenied):
        decide(people["fiona"], case, 1)  # her approval counts once
    decide(finance_person("farah"), case, 1)
    assert status(case) == Status.APPROVED
    assert ChainDecision.objects.filter(chain__case=case).count() == 2


def test_the_tech_lead_owner_and_submitter_decide_no_later_step(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.TECH_LEAD}, {"role": Role.PROCUREMENT})
    tech_lead_approves(people, case, offer)
    with pytest.raises(PermissionDenied):
        decide(people["tariq"], case, 1)  # never twice in one chain
    other = finance_person("theo")
    other.groups.set([Group.objects.get(name=Role.TECH_LEAD)])
    decide(other, case, 1)
    # priya raised and submitted the case; pablo, another procurement reviewer, may decide.
    with pytest.raises(PermissionDenied):
        decide(people["priya"], case, 2)
    decide(people["pablo"], case, 2)
    assert status(case) == Status.APPROVED


def test_a_named_person_decides_their_step_and_only_they(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"person": people["aude"]})
    tech_lead_approves(people, case, offer)
    with pytest.raises(PermissionDenied):
        decide(people["lena"], case, 1)
    decide(people["aude"], case, 1)
    assert status(case) == Status.APPROVED


def test_conditions_decide_which_steps_apply(people, pending):
    """The factory's offer: 64 cards × 3.10 USD an hour × 12 months, 30 % prepaid, no
    personal data, no finding accepted."""
    case, offer = pending
    make_policy(
        people["ada"],
        {"role": Role.FINANCE, "value_above": Decimal("2000000"), "value_currency": "USD"},
        {"role": Role.FINANCE, "value_above": Decimal("1000000"), "value_currency": "USD"},
        # No exchange rate is recorded: another currency's threshold counts as passed.
        {"role": Role.FINANCE, "value_above": Decimal("9000000"), "value_currency": "EUR"},
        {"role": Role.LEGAL, "if_prepayment": True},
        {"role": Role.LEGAL, "term_above_months": 12},
        {"role": Role.LEGAL, "term_above_months": 6},
        {"role": Role.LEGAL, "finding_code": "contract.sla"},
        {"role": Role.LEGAL, "if_personal_data": True},
    )
    chain = tech_lead_approves(people, case, offer)
    applies = [step["applies"] for step in chain.snapshot["steps"]]
    assert applies == [False, True, True, True, False, True, False, False]
    value = next(c for c in chain.snapshot["steps"][1]["conditions"] if c["kind"] == "value")
    assert Decimal(value["value"]) == Decimal("1737984.00")  # 64 × 3.10 × 12 × 730
    assert chain.snapshot["facts"]["personal_data"] is False


def test_no_step_applies_the_approval_is_at_once_and_the_chain_says_why(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.LEGAL, "if_personal_data": True})
    approval = tech_lead_approves(people, case, offer)
    assert isinstance(approval, Approval) and status(case) == Status.APPROVED
    chain = ApprovalChain.objects.get(case=case)
    assert chain.state == ApprovalChain.State.APPROVED and chain.approval == approval
    assert chain.snapshot["steps"][0]["applies"] is False


def test_personal_data_is_read_from_the_assessments(people, pending):
    case, offer = pending
    from apps.casework import policy_facts

    assert policy_facts.read(case, offer)["personal_data"] is False
    assessment_create(
        actor=people["lena"],
        case=case,
        offer=offer,
        answers=complete_answers(personal_information="yes"),
        conclusion="Names may appear in prompts.",
    )
    assert policy_facts.read(case, offer)["personal_data"] is True


def test_an_active_delegate_decides_on_behalf_and_an_expired_one_cannot(people, pending):
    case, offer = pending
    today = timezone.localdate()
    make_policy(people["ada"], {"role": Role.FINANCE}, {"role": Role.LEGAL})
    expired = policy_record_create(
        Delegation,
        actor=people["ada"],
        fields={
            "delegator": people["lena"],
            "delegate": people["aude"],
            "starts_on": today - timedelta(days=10),
            "ends_on": today - timedelta(days=1),
            "note": "Holiday",
        },
    )
    policy_record_create(
        Delegation,
        actor=people["ada"],
        fields={
            "delegator": people["fiona"],
            "delegate": people["pablo"],
            "starts_on": today,
            "ends_on": today + timedelta(days=7),
            "note": "Fiona is away this week",
        },
    )
    tech_lead_approves(people, case, offer)
    made = decide(people["pablo"], case, 1)
    assert made.on_behalf_of == people["fiona"] and made.decided_by == people["pablo"]
    # Fiona's approval was given through pablo: she does not give it again in this chain.
    assert people["fiona"].pk in policies.taken(made.chain)
    with pytest.raises(PermissionDenied):
        decide(people["aude"], case, 2)  # lena's delegation ended yesterday
    assert expired.ends_on < today
    decide(people["lena"], case, 2)
    assert status(case) == Status.APPROVED


def test_a_rejection_mid_chain_rejects_the_case(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.LEGAL}, {"role": Role.FINANCE})
    tech_lead_approves(people, case, offer)
    decide(people["lena"], case, 1, REJECTED, "The transfer mechanism is not in place")
    assert status(case) == Status.REJECTED
    rejection = Approval.objects.get(case=case)
    assert rejection.decision == REJECTED and rejection.decided_by == people["lena"]
    chain = ApprovalChain.objects.get(case=case)
    assert chain.state == ApprovalChain.State.REJECTED and chain.approval == rejection
    with pytest.raises(ValidationError):
        decide(people["fiona"], case, 2)
    assert ChainDecision.objects.filter(chain=chain).count() == 1


def test_a_policy_edited_mid_chain_changes_nothing_already_running(people, pending):
    case, offer = pending
    ada = people["ada"]
    policy = make_policy(ada, {"role": Role.LEGAL}, {"role": Role.FINANCE})
    chain = tech_lead_approves(people, case, offer)
    snapshot = chain.snapshot
    decide(people["lena"], case, 1)
    finance = policy.steps.get(role=Role.FINANCE)
    policy_record_update(
        finance,
        actor=ada,
        fields={"value_above": Decimal("50000000"), "value_currency": "USD"},
        reason="Finance only for the largest contracts",
        expected_version=finance.version,
    )
    policy_record_create(
        PolicyStep,
        actor=ada,
        fields={"policy": policy, "order": 3, "label": "Board", "role": Role.AUDITOR},
    )
    policy_record_update(
        policy, actor=ada, fields={"in_force": False}, reason="Retired", expected_version=1
    )
    chain.refresh_from_db()
    assert chain.snapshot == snapshot
    assert open_steps(case) == {2}  # finance is still asked, the board is not
    assert ChainDecision.objects.get(chain=chain).decided_by == people["lena"]
    decide(people["fiona"], case, 2)
    assert status(case) == Status.APPROVED


def test_the_tech_lead_cannot_decide_again_while_the_chain_runs(people, pending):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.LEGAL})
    tech_lead_approves(people, case, offer)
    other = finance_person("tomas")
    other.groups.set([Group.objects.get(name=Role.TECH_LEAD)])
    with pytest.raises(ValidationError, match="later steps"):
        approval_decide(actor=other, case=case, decision=REJECTED, comment="Again", offer=offer)


def test_a_step_names_a_role_or_a_person_and_a_delegation_runs_forward(people):
    ada = people["ada"]
    policy = policy_record_create(ApprovalPolicy, actor=ada, fields={"name": "P"})
    with pytest.raises(ValidationError):
        policy_record_create(
            PolicyStep, actor=ada, fields={"policy": policy, "order": 1, "label": "Nobody"}
        )
    with pytest.raises(ValidationError):
        policy_record_create(
            PolicyStep,
            actor=ada,
            fields={"policy": policy, "order": 1, "label": "X", "person": ada, "quorum": 2},
        )
    today = timezone.localdate()
    with pytest.raises(ValidationError):
        policy_record_create(
            Delegation,
            actor=ada,
            fields={
                "delegator": people["fiona"],
                "delegate": people["pablo"],
                "starts_on": today,
                "ends_on": today - timedelta(days=1),
                "note": "Backwards",
            },
        )
    # Only one policy is in force at a time; only an administrator sets them.
    policy_record_create(ApprovalPolicy, actor=ada, fields={"name": "A", "in_force": True})
    with pytest.raises(ValidationError):
        policy_record_create(ApprovalPolicy, actor=ada, fields={"name": "B", "in_force": True})
    with pytest.raises(PermissionDenied):
        policy_record_create(ApprovalPolicy, actor=people["fiona"], fields={"name": "C"})
    assert not PolicyStep.objects.exists() and not Delegation.objects.exists()


def test_the_api_answers_a_tech_leads_approval_under_a_policy_with_the_chain(
    people, pending, api_as
):
    case, offer = pending
    make_policy(people["ada"], {"role": Role.LEGAL, "label": "Legal review"})
    response = api_as("tariq").post(
        f"/api/v1/cases/{case.pk}/decision/",
        {"decision": "approved", "comment": "Gates hold", "offer": offer.pk},
        format="json",
    )
    assert response.status_code == 202, response.content
    assert response.json()["waiting_for"] == ["Legal review"]
    assert status(case) == Status.PENDING_APPROVAL

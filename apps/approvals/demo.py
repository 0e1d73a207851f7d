"""Demo: the approval policy in force, and priya submits the demo case for approval, so
tariq finds it waiting.

The policy: after the tech lead, legal approves when personal data is handled, then
finance when the contract is worth more than 1,000,000 USD. The demo case's leading
offer meets both (employee names may appear in prompts; 64 cards for a year), so once
tariq approves it, lena and then fiona are asked in turn. Nothing is decided here.

No offer of the demo case passes every gate (no evidence has been uploaded),
so the gates page shows what each offer still needs.
"""

from decimal import Decimal

from apps.approvals.models import ApprovalPolicy, PolicyStep
from apps.approvals.services import case_submit_for_approval, policy_record_create
from apps.cases.models import ProcurementCase
from apps.core.roles import Role

DEMO_POLICY = "Data and spend"
FINANCE_ABOVE = Decimal("1000000")


def seed_policy(*, admin) -> ApprovalPolicy:
    found = ApprovalPolicy.objects.filter(name=DEMO_POLICY).first()
    if found is not None:
        return found
    policy = policy_record_create(
        ApprovalPolicy,
        actor=admin,
        fields={
            "name": DEMO_POLICY,
            "description": "Legal approves when personal data is handled; finance when the "
            "contract is worth more than 1,000,000 USD.",
            "in_force": not ApprovalPolicy.objects.filter(in_force=True).exists(),
        },
    )
    for order, label, role, conditions in (
        (1, "Legal review", Role.LEGAL, {"if_personal_data": True}),
        (
            2,
            "Finance",
            Role.FINANCE,
            {"value_above": FINANCE_ABOVE, "value_currency": "USD"},
        ),
    ):
        policy_record_create(
            PolicyStep,
            actor=admin,
            fields={"policy": policy, "order": order, "label": label, "role": role, **conditions},
        )
    return policy


def seed(*, case, users) -> None:
    seed_policy(admin=users["admin"])
    case.refresh_from_db()  # the offers created earlier moved the case on from draft
    if case.status == ProcurementCase.Status.EVALUATING:
        case_submit_for_approval(
            actor=users["priya"], case=case, note="Three offers compared; please review the gates"
        )

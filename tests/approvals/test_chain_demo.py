"""The demo ships its approval policy: after the tech lead, legal when personal data is
handled, then finance above 1,000,000 USD. The demo case meets both conditions, so its
approval runs all three steps; running the demo twice adds no second policy."""

import pytest
from django.contrib.auth import get_user_model

from apps.approvals.demo import DEMO_POLICY, seed_policy
from apps.approvals.models import ApprovalChain, ApprovalPolicy
from apps.approvals.services import approval_decide, chain_step_decide
from apps.cases.models import ProcurementCase

pytestmark = pytest.mark.django_db


def person(name):
    return get_user_model().objects.get(username=name)


def test_the_demo_policy_asks_legal_then_finance_of_the_demo_case(demo_case):
    policy = ApprovalPolicy.objects.get(in_force=True)
    assert policy.name == DEMO_POLICY
    assert seed_policy(admin=person("admin")) == policy  # seeding again adds nothing
    case = demo_case
    assert case.status == ProcurementCase.Status.PENDING_APPROVAL  # nothing decided yet
    aurora = case.offers.get(vendor__name__startswith="Aurora")
    chain = approval_decide(
        actor=person("tariq"), case=case, decision="approved", comment="Gates hold", offer=aurora
    )
    assert isinstance(chain, ApprovalChain)
    assert [(s["label"], s["applies"]) for s in chain.snapshot["steps"]] == [
        ("Legal review", True),
        ("Finance", True),
    ]
    chain_step_decide(actor=person("lena"), case=case, step=1, decision="approved", comment="Ok")
    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.PENDING_APPROVAL
    chain_step_decide(actor=person("fiona"), case=case, step=2, decision="approved", comment="Ok")
    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.APPROVED

"""Two approvers of one step at once: exactly one decision is recorded, the other is told
the step is decided (never a 500, never two). Each thread on its own connection; the
case's row lock decides on PostgreSQL, the database file's lock on SQLite."""

import threading

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection

from apps.approvals.models import ChainDecision
from apps.approvals.services import case_submit_for_approval, chain_step_decide
from apps.cases.models import ProcurementCase
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case
from tests.approvals.test_chains import finance_person, make_policy, tech_lead_approves
from tests.test_concurrency import _default_checklist_template  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def test_two_approvers_of_one_step_at_once_give_one_decision(people):
    case, offer, _made = make_ready_case(people)
    case = case_submit_for_approval(actor=people["priya"], case=case)
    make_policy(people["ada"], {"role": Role.FINANCE})
    tech_lead_approves(people, case, offer)
    deciders = [people["fiona"], finance_person("farah")]
    barrier = threading.Barrier(len(deciders))
    outcomes: list = [None] * len(deciders)

    def run(index, person):
        try:
            barrier.wait(timeout=30)
            chain_step_decide(
                actor=person, case=case, step=1, decision="approved", comment="Within budget"
            )
            outcomes[index] = "decided"
        except (ValidationError, PermissionDenied) as error:
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, p)) for i, p in enumerate(deciders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(map(str, outcomes)).count("decided") == 1, outcomes
    refused = next(o for o in outcomes if o != "decided")
    # The second finds the case approved (no longer pending) or the step decided.
    assert isinstance(refused, ValidationError)
    assert ChainDecision.objects.filter(chain__case=case).count() == 1
    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.APPROVED

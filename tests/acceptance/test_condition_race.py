"""Two settlements of one lapsing approval at once, as two workers of the quarter-hourly
check would run them: the approval lapses once, the case reopens once, and each person is
told once. Each thread on its own connection; the case's row lock decides on PostgreSQL,
the database file's lock on SQLite."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.acceptance.conditions import settle_conditions
from apps.approvals.models import Approval
from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.cases.models import ProcurementCase
from tests.approvals.factories import make_ready_case
from tests.test_concurrency import _default_checklist_template  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def test_two_settlements_at_once_let_an_approval_lapse_once(people):
    case, offer, _made = make_ready_case(people)
    case = case_submit_for_approval(actor=people["priya"], case=case)
    approval = approval_decide(
        actor=people["tariq"],
        case=case,
        decision="approved",
        comment="Order now",
        offer=offer,
        conditions=["soak"],
        condition_deadline=timezone.localdate(),
    )
    tomorrow = timezone.localdate() + timedelta(days=1)
    barrier = threading.Barrier(2)
    outcomes: list = [None, None]

    def run(index):
        try:
            barrier.wait(timeout=30)
            outcomes[index] = settle_conditions(today=tomorrow)
        except Exception as error:
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert all(isinstance(outcome, tuple) for outcome in outcomes), outcomes
    assert sum(len(lapsed) for _met, lapsed in outcomes) == 1
    approval.refresh_from_db()
    assert approval.lapsed_at is not None
    assert approval.history.filter(history_change_reason__startswith="Lapsed").count() == 1
    case.refresh_from_db()
    assert case.status == ProcurementCase.Status.PENDING_APPROVAL
    reopened = case.history.filter(history_change_reason__contains="lapsed").count()
    assert reopened == 1
    assert Approval.objects.filter(case=case, lapsed_at__isnull=False).count() == 1

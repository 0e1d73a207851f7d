"""Two schedulers at once on the due day, as two workers of the hourly run would: the
reassessment starts once, with one invitation and one harness token. Each thread on its own
connection; the vendor's row lock decides on PostgreSQL, the database file's lock on SQLite."""

import threading

import pytest
from django.db import connection
from django.utils import timezone

from apps.casework.models import Reassessment
from apps.casework.reassessments import reassessments_run
from apps.evidence.models import HarnessToken
from apps.portal.models import VendorInvitation
from tests.casework.factories import at, vendor_in_use, with_emails
from tests.test_concurrency import _default_checklist_template  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def test_two_runs_at_once_start_the_reassessment_once(people, monkeypatch):
    world = vendor_in_use(with_emails(people))
    invitations = VendorInvitation.objects.filter(offer=world.offer).count()
    tokens = HarnessToken.objects.filter(offer=world.offer).count()
    monkeypatch.setattr(timezone, "now", lambda: at(world.due_on))
    barrier = threading.Barrier(2)
    outcomes: list = [None, None]

    def run(index):
        try:
            barrier.wait(timeout=30)
            outcomes[index] = reassessments_run(world.due_on)
        except Exception as error:
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not any(isinstance(outcome, Exception) for outcome in outcomes), outcomes
    assert sum(len(outcome.started) for outcome in outcomes) == 1
    assert Reassessment.objects.count() == 1
    assert VendorInvitation.objects.filter(offer=world.offer).count() == invitations + 1
    assert HarnessToken.objects.filter(offer=world.offer).count() == tokens + 1

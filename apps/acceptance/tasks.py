"""Beat tasks: void sign-offs whose evidence or records changed outside this app, and
settle approvals subject to acceptance (apps.acceptance.conditions).

Writes through the acceptance services void a sign-off at once; a new evidence
bundle or a new approval decision arrives through other apps, so pages show
the sign-off void on read and this task records it and moves an accepted case
back to approved. In the embedded default tasks run eagerly, in-process.
"""

from celery import shared_task
from django.db import transaction

from apps.acceptance.conditions import open_conditional_approvals, settle_conditions
from apps.acceptance.services import stale_signoffs_void
from apps.core.background import dispatch

STALE_SIGNOFFS_TASK = "apps.acceptance.tasks.void_stale_signoffs_task"

# Scheduled by Celery beat: see CELERY_BEAT_SCHEDULE in config/settings.py.


@shared_task(name=STALE_SIGNOFFS_TASK, acks_late=True)
def void_stale_signoffs_task() -> list[int]:
    """Void every current sign-off whose bound records changed; returns their ids."""
    return [signoff.pk for signoff in stale_signoffs_void()]


SETTLE_CONDITIONS_TASK = "apps.acceptance.tasks.settle_conditions_task"


@shared_task(name=SETTLE_CONDITIONS_TASK, acks_late=True)
def settle_conditions_task(offer_id: int | None = None) -> dict[str, list[int]]:
    """Close the approvals subject to acceptance whose acceptance passed, and let lapse
    those past their deadline (of one offer, or of every offer on the beat)."""
    met, lapsed = settle_conditions(offer_id=offer_id)
    return {"met": [a.pk for a in met], "lapsed": [a.pk for a in lapsed]}


def settle_after_commit(offer_id: int) -> None:
    """Once the current transaction commits, settle the offer's approvals subject to
    acceptance, if it has one whose condition is open (one query otherwise)."""

    def settle() -> None:
        if open_conditional_approvals(offer_id).exists():
            dispatch(settle_conditions_task, offer_id)

    transaction.on_commit(settle)


def on_verification_recorded(sender, offer_id: int, **kwargs) -> None:
    settle_after_commit(offer_id)

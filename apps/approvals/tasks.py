"""Beat tasks: recording stale approvals, and expired finding acceptances, in history.

Pages show staleness as soon as a bound record changes (computed on read);
this task writes it into the approval's history and sends the case back to
pending approval. In the embedded default tasks run eagerly, in-process.
"""

from celery import shared_task

from apps.approvals.acceptances import record_expired_acceptances
from apps.approvals.services import stale_approvals_record

STALENESS_TASK = "apps.approvals.tasks.record_stale_approvals_task"
EXPIRY_TASK = "apps.approvals.tasks.record_expired_acceptances_task"

# Scheduled by Celery beat: see CELERY_BEAT_SCHEDULE in config/settings.py.


@shared_task(name=STALENESS_TASK, acks_late=True)
def record_stale_approvals_task() -> list[int]:
    """Record every approval whose bound records changed; returns their ids."""
    return [approval.pk for approval in stale_approvals_record()]


@shared_task(name=EXPIRY_TASK, acks_late=True)
def record_expired_acceptances_task() -> int:
    """Record in the history each finding acceptance that ran out
    (docs/rules/findings.md#accepting-a-finding); returns how many."""
    return record_expired_acceptances()

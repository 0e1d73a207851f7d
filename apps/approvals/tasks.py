"""Beat task: recording stale approvals in history.

Pages show staleness as soon as a bound record changes (computed on read);
this task writes it into the approval's history and sends the case back to
pending approval. In the embedded default tasks run eagerly, in-process.
"""

from celery import shared_task

from apps.approvals.services import stale_approvals_record

STALENESS_TASK = "apps.approvals.tasks.record_stale_approvals_task"

# Scheduled by Celery beat: see CELERY_BEAT_SCHEDULE in config/settings.py.


@shared_task(name=STALENESS_TASK, acks_late=True)
def record_stale_approvals_task() -> list[int]:
    """Record every approval whose bound records changed; returns their ids."""
    return [approval.pk for approval in stale_approvals_record()]

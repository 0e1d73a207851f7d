"""Beat tasks: daily reminders, and recording stale approvals in history.

Pages show staleness as soon as a bound record changes (computed on read);
this task writes it into the approval's history and sends the case back to
pending approval. In the embedded default tasks run eagerly, in-process.
"""

from celery import shared_task
from django.utils import timezone

from apps.approvals.inbox import digests_send
from apps.approvals.reminders import provided_reminders_send
from apps.approvals.services import reminders_send, stale_approvals_record

REMINDERS_TASK = "apps.approvals.tasks.send_reminders_task"
STALENESS_TASK = "apps.approvals.tasks.record_stale_approvals_task"
DIGEST_TASK = "apps.approvals.tasks.send_daily_digests_task"

# Scheduled by Celery beat: see CELERY_BEAT_SCHEDULE in config/settings.py.


@shared_task(name=REMINDERS_TASK, acks_late=True)
def send_reminders_task() -> int:
    """Send the reminders due today; returns how many were sent (0 when run again)."""
    return len(reminders_send()) + len(provided_reminders_send(timezone.localdate()))


@shared_task(name=STALENESS_TASK, acks_late=True)
def record_stale_approvals_task() -> list[int]:
    """Record every approval whose bound records changed; returns their ids."""
    return [approval.pk for approval in stale_approvals_record()]


@shared_task(name=DIGEST_TASK, acks_late=True)
def send_daily_digests_task() -> int:
    """E-mail each person what waits for them (unless they turned it off); returns how many."""
    return digests_send()

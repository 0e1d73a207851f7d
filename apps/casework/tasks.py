"""Beat tasks: the daily reminders and the daily digests of what waits for each person.

In the embedded default tasks run eagerly, in-process.
"""

from celery import shared_task
from django.utils import timezone

from apps.casework.assignments_due import assignments_due_tell
from apps.casework.inbox import digests_send
from apps.casework.reassessments import reassessments_run
from apps.casework.reminders import provided_reminders_send, reminders_send

REMINDERS_TASK = "apps.casework.tasks.send_reminders_task"
DIGEST_TASK = "apps.casework.tasks.send_daily_digests_task"
REASSESSMENTS_TASK = "apps.casework.tasks.run_reassessments_task"

# Scheduled by Celery beat: see CELERY_BEAT_SCHEDULE in config/settings.py.


@shared_task(name=REMINDERS_TASK, acks_late=True)
def send_reminders_task() -> int:
    """Send the reminders due today and the notices of assigned work due soon or overdue;
    returns how many were sent (0 when run again)."""
    today = timezone.localdate()
    sent = len(reminders_send()) + len(provided_reminders_send(today))
    return sent + assignments_due_tell(today)


@shared_task(name=DIGEST_TASK, acks_late=True)
def send_daily_digests_task() -> int:
    """E-mail each person what waits for them (unless they turned it off); returns how many."""
    return digests_send()


@shared_task(name=REASSESSMENTS_TASK, acks_late=True)
def run_reassessments_task() -> int:
    """Complete, start and record the lapse of the vendors' reassessments due today
    (docs/rules/reassessment.md); returns how many changed (0 when run again)."""
    result = reassessments_run(timezone.localdate())
    return len(result.completed) + len(result.started) + len(result.lapsed)

"""Beat task: void sign-offs whose evidence or records changed outside this app.

Writes through the acceptance services void a sign-off at once; a new evidence
bundle or a new approval decision arrives through other apps, so pages show
the sign-off void on read and this task records it and moves an accepted case
back to approved. In the embedded default tasks run eagerly, in-process.
"""

from celery import shared_task

from apps.acceptance.services import stale_signoffs_void

STALE_SIGNOFFS_TASK = "apps.acceptance.tasks.void_stale_signoffs_task"

# Scheduled by Celery beat: see CELERY_BEAT_SCHEDULE in config/settings.py.


@shared_task(name=STALE_SIGNOFFS_TASK, acks_late=True)
def void_stale_signoffs_task() -> list[int]:
    """Void every current sign-off whose bound records changed; returns their ids."""
    return [signoff.pk for signoff in stale_signoffs_void()]

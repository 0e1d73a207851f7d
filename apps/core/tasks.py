"""Celery tasks of the shared layer: telling people and webhooks of events.

The e-mail of one notification and the attempts at a webhook delivery are started
when the event's write commits (``apps.core.notifications``); the daily digest of
events is scheduled by Celery beat (``CELERY_BEAT_SCHEDULE`` in config/settings.py).
In the embedded default tasks run eagerly, in-process.
"""

from celery import shared_task

from apps.core.notifications import notification_digests_send, send_notification_email_task
from apps.core.webhooks import deliver_webhook_task

DIGEST_TASK = "apps.core.tasks.send_notification_digests_task"

__all__ = ["deliver_webhook_task", "send_notification_digests_task", "send_notification_email_task"]


@shared_task(name=DIGEST_TASK, acks_late=True)
def send_notification_digests_task() -> int:
    """E-mail each person who chose the daily digest the events since their last; how many."""
    return notification_digests_send()

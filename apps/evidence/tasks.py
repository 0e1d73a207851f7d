"""The Celery task that reads, recomputes and verifies a received upload.

Acknowledged late, so a worker that dies mid-reading leaves the message to be
delivered again; ``upload_verify`` locks the upload and reads it once, so a
second delivery returns what the first one finished. A database outage, or a
file store that cannot be reached, is retried with back-off; any other error
marks the upload failed (the harness is told to send it again) rather than
reading again what will fail the same way.
"""

import logging

from celery import shared_task
from django.db import DatabaseError

from apps.core.storage import StorageUnavailable
from apps.evidence.services import upload_fail, upload_verify, uploads_prune, uploads_waiting

logger = logging.getLogger(__name__)

MAX_RETRIES = 5


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=MAX_RETRIES)
def verify_upload_task(self, upload_pk: int) -> str | None:
    """Returns the upload's final state, or None while a retry is pending."""
    try:
        return upload_verify(upload_pk).state
    except (DatabaseError, StorageUnavailable) as error:
        if self.request.retries < MAX_RETRIES and not self.request.is_eager:
            raise self.retry(exc=error, countdown=2 ** (self.request.retries + 1)) from error
        logger.exception("Evidence upload %s could not be read after retries", upload_pk)
        if self.request.is_eager:
            raise  # in the request: the harness sees a 5xx and sends it again
        _fail(upload_pk, error)
    except Exception as error:  # the upload must end, whatever broke
        logger.exception("Evidence upload %s could not be read", upload_pk)
        _fail(upload_pk, error)
    return None


@shared_task
def requeue_waiting_uploads_task() -> int:
    """Ask again for uploads still waiting long after they arrived (a message lost with
    its broker, say); reading one twice is harmless. Returns how many were asked for."""
    waiting = uploads_waiting()
    for upload_pk in waiting:
        verify_upload_task.delay(upload_pk)
    if waiting:
        logger.warning("Asked again to verify %d waiting evidence uploads", len(waiting))
    return len(waiting)


@shared_task
def prune_finished_uploads_task() -> int:
    """Forget refused and failed uploads past ``EVIDENCE_UPLOAD_KEEP_DAYS``; how many."""
    return uploads_prune()


def _fail(upload_pk: int, error: Exception) -> None:
    upload_fail(upload_pk, error=type(error).__name__)

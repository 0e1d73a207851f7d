"""Nightly verification of the audit chain (Celery beat) and the "verify now" button.

Walking the whole chain is too slow to do on every case page view, so the
result is recorded in ``ChainVerification`` and pages show the latest one.
In the embedded default the task runs eagerly, in-process.
"""

from celery import shared_task
from django.contrib.auth import get_user_model

from apps.audit.services import chain_verification_run

TASK_NAME = "apps.audit.tasks.verify_audit_chain_task"

# Run nightly by Celery beat: see CELERY_BEAT_SCHEDULE in config/settings.py.


@shared_task(name=TASK_NAME, acks_late=True)
def verify_audit_chain_task(requested_by_pk: int | None = None) -> int:
    """Verify the chain and record the result; returns the ``ChainVerification`` pk."""
    actor = get_user_model().objects.filter(pk=requested_by_pk).first() if requested_by_pk else None
    record, _report = chain_verification_run(actor=actor)
    return record.pk

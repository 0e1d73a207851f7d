"""Writes of the audit app: recording a chain verification run."""

from django.utils import timezone

from apps.audit.models import ChainVerification
from apps.audit.verification import ChainReport, verify_chain


def chain_verification_run(*, actor=None) -> tuple[ChainVerification, ChainReport]:
    """Verify the whole chain now and record the result for the case page and packets."""
    started = timezone.now()
    report = verify_chain()
    first = report.first_problem
    record = ChainVerification.objects.create(
        started_at=started,
        finished_at=timezone.now(),
        requested_by=actor,
        intact=report.intact,
        rows_checked=report.rows,
        head_seq=report.head_seq,
        head_hash=report.head_hash,
        problem_count=report.problem_count,
        first_problem=(dict(first.as_dict(), text=first.describe()) if first else None),
    )
    return record, report

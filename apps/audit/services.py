"""Writes of the audit app: recording a chain verification run, and the heads packets record."""

from functools import partial

from django.db import transaction
from django.utils import timezone

from apps.audit.heads import recorded_head_write
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


def chain_head_record(*, source: str, reference: str, head_seq: int, head_hash: str) -> None:
    """Keep the head a packet or export states in its manifest, once its transaction commits.

    Only after commit: a packet rolled back never existed, and its head (which
    may count rows rolled back with it) must not later read as a rewind. A
    failure to write is logged and does not undo the packet or export.
    """
    transaction.on_commit(
        partial(
            recorded_head_write,
            source=source,
            reference=reference,
            seq=head_seq,
            entry_hash=head_hash,
        ),
        robust=True,
    )

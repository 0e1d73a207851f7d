"""Writing the hash chain over history rows (docs/rules/audit.md#audit-trail).

Every history row of every tracked model is linked into one chain as it is
written, in the same transaction: ``row_digest`` is the SHA-256 of a canonical
JSON of the row's stored columns, and ``entry_hash`` covers the previous hash,
the digest, the table, the row id and the sequence number. An UPDATE of a
history row changes its digest; a DELETE leaves an entry without its row; an
INSERT behind the application's back leaves a row without an entry; editing
the chain itself breaks the links. ``apps.audit.verification`` finds each.
"""

import hashlib
import json
import logging
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from uuid import UUID

from django.apps import apps as django_apps
from django.contrib.contenttypes.models import ContentType
from django.db import DatabaseError, connection, transaction
from django.db.models import Max, Model
from django.dispatch import Signal
from simple_history.models import HistoricalChanges

from apps.audit.models import ChainEntry, ChainHead

logger = logging.getLogger(__name__)

HEAD_PK = 1

# Sent for every history row linked into the chain, inside the transaction that wrote
# it, with ``history_row`` and ``seq`` (its link's sequence number): what keeps a stored
# reading of the records current (``apps.casework.standing``) listens here.
history_linked = Signal()


def tracked_history_models() -> list[type[Model]]:
    """Every installed history table written by django-simple-history, in a stable order."""
    models = [
        model
        for model in django_apps.get_models()
        if issubclass(model, HistoricalChanges) and hasattr(model, "instance_type")
    ]
    return sorted(models, key=lambda model: model._meta.label_lower)


def row_fields(history_model) -> list[str]:
    return [field.attname for field in history_model._meta.concrete_fields]


def _plain(value):
    # One spelling per value, whatever the database driver returns.
    if isinstance(value, datetime):
        return (value.astimezone(UTC) if value.tzinfo else value).isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, Decimal | UUID):
        return str(value)
    if isinstance(value, timedelta):
        return value // timedelta(microseconds=1)
    if isinstance(value, bytes | memoryview | bytearray):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def plain_value(value):
    """One value as the chain digests it (a date as ISO text, a decimal as text...)."""
    return _plain(value)


def plain_values(values: dict) -> dict:
    """A history row's values as the chain digests them: JSON-ready, one spelling each."""
    return _plain(values)


def canonical_json(values: dict) -> bytes:
    return json.dumps(
        _plain(values), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode("utf-8")


def late_columns(history_model) -> frozenset[str]:
    """History columns added after rows were already chained.

    A tracked model names them in ``late_history_columns``; each must be
    nullable. A row whose late column is NULL digests as if the column did not
    exist, so adding one keeps every digest written before it valid.
    """
    instance_model = getattr(history_model, "instance_type", None)
    return frozenset(getattr(instance_model, "late_history_columns", ()))


def row_digest(values: dict, *, late: frozenset[str] = frozenset()) -> str:
    """SHA-256 of a history row's stored columns (as read back with ``values()``)."""
    if late:
        values = {
            key: value for key, value in values.items() if key not in late or value is not None
        }
    return hashlib.sha256(canonical_json(values)).hexdigest()


def link_hash(*, prev_hash: str, row_digest: str, table: str, history_id, seq: int) -> str:
    material = "|".join([prev_hash, row_digest, table, str(history_id), str(seq)])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def _locked_head() -> ChainHead:
    head = ChainHead.objects.select_for_update().filter(pk=HEAD_PK).first()
    if head is None:
        # A flushed test database has no head row; production gets it from the migration.
        head, _created = ChainHead.objects.get_or_create(pk=HEAD_PK)
        head = ChainHead.objects.select_for_update().get(pk=HEAD_PK)
    return head


def _link(head: ChainHead, *, content_type, history_id, digest: str) -> ChainEntry:
    seq = head.seq + 1
    entry = ChainEntry.objects.create(
        seq=seq,
        content_type=content_type,
        history_id=history_id,
        row_digest=digest,
        prev_hash=head.entry_hash,
        entry_hash=link_hash(
            prev_hash=head.entry_hash,
            row_digest=digest,
            table=content_type.app_label + "." + content_type.model,
            history_id=history_id,
            seq=seq,
        ),
    )
    head.seq, head.entry_hash = seq, entry.entry_hash
    return entry


def append_history_row(history_row) -> ChainEntry:
    """Link one freshly written history row into the chain (same transaction as the row)."""
    model = type(history_row)
    content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
    with transaction.atomic():
        # Read back what the database stored, so the digest is the one the
        # verifier will recompute (decimal places, time zones, JSON spelling).
        values = model._base_manager.filter(pk=history_row.pk).values(*row_fields(model)).get()
        head = _locked_head()
        entry = _link(
            head,
            content_type=content_type,
            history_id=history_row.pk,
            digest=row_digest(values, late=late_columns(model)),
        )
        head.save(update_fields=["seq", "entry_hash"])
        history_linked.send(sender=model, history_row=history_row, seq=entry.seq)
    return entry


def on_history_created(sender, history_instance, **kwargs) -> None:
    append_history_row(history_instance)


# --- Rows written by data migrations --------------------------------------
# Data migrations write history through frozen models, without signals. Rows
# that appear *during* a migrate run are linked at its end; rows that were
# already there and are unlinked stay unlinked, so an insertion made behind
# the application's back is never adopted by a later deployment.

_watermarks: dict[str, int] | None = None


def _table_exists(model) -> bool:
    return model._meta.db_table in connection.introspection.table_names()


def remember_history_watermarks(sender=None, **kwargs) -> None:
    global _watermarks
    chained_before = _table_exists(ChainEntry)
    marks = {}
    for model in tracked_history_models():
        if chained_before and _table_exists(model):
            marks[model._meta.label_lower] = (
                model._base_manager.aggregate(top=Max("pk"))["top"] or 0
            )
        else:
            marks[model._meta.label_lower] = 0
    _watermarks = marks


def link_rows_written_by_migrations(sender=None, **kwargs) -> None:
    global _watermarks
    marks, _watermarks = _watermarks, None
    if marks is None or not _table_exists(ChainEntry):
        return
    try:
        with transaction.atomic():
            head = _locked_head()
            for model in tracked_history_models():
                if not _table_exists(model):
                    continue
                _link_unchained(model, head, after=marks.get(model._meta.label_lower, 0))
            head.save(update_fields=["seq", "entry_hash"])
    except DatabaseError:
        # A partial migrate (to an older target) can leave live models ahead of
        # the tables; the rows are then reported as unchained by the verifier.
        logger.warning("History rows written by migrations could not be chained", exc_info=True)


def _link_unchained(model, head: ChainHead, *, after: int) -> None:
    content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
    chained = ChainEntry.objects.filter(content_type=content_type).values("history_id")
    pk_name = model._meta.pk.attname
    rows = (
        model._base_manager.filter(pk__gt=after)
        .exclude(pk__in=chained)
        .order_by("pk")
        .values(*row_fields(model))
    )
    late = late_columns(model)
    for values in rows.iterator(chunk_size=2000):
        _link(
            head,
            content_type=content_type,
            history_id=values[pk_name],
            digest=row_digest(values, late=late),
        )

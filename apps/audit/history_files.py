"""A case's full history as files: one CSV and one JSON per record type, streamed.

The one writer of these files: the signed packet embeds them as attachments
(``history-<app.model>.csv`` / ``.json``) and the case export carries the same
bytes under ``history/<app.model>.csv`` / ``.json``.

- **JSON** — an array, one object per history row, oldest first: every stored
  column of the history row, spelled exactly as the audit chain digests it
  (datetimes in UTC ISO 8601 with microseconds, decimals as strings), plus
  ``chain``: the row's chain entry (``seq``, ``row_digest``, ``prev_hash``,
  ``entry_hash``) or ``null``. Dropping ``chain`` and hashing the rest the way
  ``apps.audit.chain.row_digest`` does gives ``chain.row_digest`` again.
- **CSV** — the same rows and columns, plus ``history_user_username`` and the
  chain entry's four values; text a spreadsheet would run as a formula is
  written with a leading single quote (``apps.core.csv_safe``), so readers
  that need the exact values use the JSON.

Both files of a record type are written from one query (``write_history``),
read with ``.iterator()`` (a server-side cursor on PostgreSQL, chunked reads
on SQLite) and written as it is read: memory does not grow with the history,
and neither does the number of queries.
"""

import io
import json
from collections.abc import Iterator
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import F, OuterRef, QuerySet, Subquery

from apps.audit.chain import plain_value, row_fields
from apps.audit.models import ChainEntry
from apps.core import csv_safe

CHAIN_FIELDS = ("seq", "row_digest", "prev_hash", "entry_hash")
USERNAME_COLUMN = "history_user_username"
FETCH_ROWS = 2000
FLUSH_CHARS = 256 * 1024  # text held before it is written out
CSV_MEDIA_TYPE = "text/csv"
JSON_MEDIA_TYPE = "application/json"
FORMATS = {"csv": CSV_MEDIA_TYPE, "json": JSON_MEDIA_TYPE}


def attachment_name(key: str, extension: str) -> str:
    """The file's name inside the packet: flat, so any reader can save it as it is."""
    return f"history-{key}.{extension}"


def export_path(key: str, extension: str) -> str:
    """The same file's path inside the case export."""
    return f"history/{key}.{extension}"


def _chain_column(name: str) -> str:
    return f"chain_{name}"


def history_rows(queryset: QuerySet) -> Iterator[dict[str, Any]]:
    """Every row of ``queryset`` (a history table), oldest first, with its chain entry.

    One query: the chain entry and the user name are read in the same statement.
    """
    history_model = queryset.model
    fields = row_fields(history_model)
    content_type = ContentType.objects.get_for_model(history_model, for_concrete_model=False)
    entries = ChainEntry.objects.filter(
        content_type=content_type, history_id=OuterRef("history_id")
    )
    chain = {_chain_column(name): Subquery(entries.values(name)[:1]) for name in CHAIN_FIELDS}
    rows = (
        queryset.order_by("history_id")
        .values(*fields)
        .annotate(**chain, **{USERNAME_COLUMN: F("history_user__username")})
    )
    yield from rows.iterator(chunk_size=FETCH_ROWS)


def _split(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, str | None]:
    chain = {name: row.pop(_chain_column(name)) for name in CHAIN_FIELDS}
    username = row.pop(USERNAME_COLUMN)
    return row, (chain if chain["seq"] is not None else None), username


# Values JSON spells as they are; the rest goes through the chain's spelling.
_AS_THEY_ARE = (str, int, float, bool, type(None))


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    # ``plain_values`` for a flat row, faster: most values need no change, and only
    # the others (dates, decimals, nested JSON) go through the chain's spelling.
    return {
        name: value if type(value) in _AS_THEY_ARE else plain_value(value)
        for name, value in values.items()
    }


def write_history(queryset: QuerySet, *, json_out=None, csv_out=None) -> int:
    """Write the JSON and/or the CSV file of ``queryset`` as its rows are read (one query).

    ``json_out`` and ``csv_out`` take ``write(bytes)``. Returns the number of rows.
    """
    fields = row_fields(queryset.model)
    json_text: list[str] = []
    csv_text = io.StringIO()
    table = csv_safe.writer(csv_text)
    if csv_out is not None:
        table.writerow([*fields, USERNAME_COLUMN, *(_chain_column(n) for n in CHAIN_FIELDS)])
    if json_out is not None:
        json_text.append("[")
    count, pending = 0, 0
    for row in history_rows(queryset):
        values, chain, username = _split(row)
        plain = _plain(values)
        if json_out is not None:
            record = {**plain, "chain": chain}
            line = (
                ("," if count else "")
                + "\n"
                + json.dumps(record, ensure_ascii=False, sort_keys=True)
            )
            json_text.append(line)
            pending += len(line)
        if csv_out is not None:
            table.writerow(
                [
                    *(_csv_value(plain[name]) for name in fields),
                    username,
                    *((chain or {}).get(name) for name in CHAIN_FIELDS),
                ]
            )
        count += 1
        if pending + csv_text.tell() > FLUSH_CHARS:
            _flush(json_out, json_text, csv_out, csv_text)
            pending = 0
    if json_out is not None:
        json_text.append("\n]\n")
    _flush(json_out, json_text, csv_out, csv_text)
    return count


def _flush(json_out, json_text: list[str], csv_out, csv_text: io.StringIO) -> None:
    if json_out is not None and json_text:
        json_out.write("".join(json_text).encode("utf-8"))
        json_text.clear()
    if csv_out is not None and csv_text.tell():
        csv_out.write(csv_text.getvalue().encode("utf-8"))
        csv_text.seek(0)
        csv_text.truncate()


def write_history_json(out, queryset: QuerySet) -> int:
    """Write the JSON file of ``queryset`` to ``out`` (anything with ``write(bytes)``)."""
    return write_history(queryset, json_out=out)


def write_history_csv(out, queryset: QuerySet) -> int:
    """Write the CSV file of ``queryset`` to ``out`` (anything with ``write(bytes)``)."""
    return write_history(queryset, csv_out=out)


WRITERS = {"csv": write_history_csv, "json": write_history_json}


def _csv_value(value):
    if type(value) in _AS_THEY_ARE:
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value

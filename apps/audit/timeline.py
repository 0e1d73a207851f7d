"""The audit timeline: every change to a case's records, paged in the database.

A case's timeline is read page by page after a cursor (``CaseTimeline``): each
history table gives at most a page and one more of its rows older than the
cursor, newest first (a range of its (case link, date) index), and those few are
merged here; the last row shown is the next page's cursor. No row is counted or
skipped, so a page costs the same however long the history is.

A record's own history pages by number (``Timeline`` as a sequence): one UNION of
the per-table querysets (only ids, dates and a table number) is ordered and
sliced by the database. Either way, the rows of the page and their predecessors
(for field diffs) are then fetched in one query, whichever tables are on the page, and
the records and people they name in one query per kind.
"""

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from operator import attrgetter
from typing import Any, overload

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core import signing
from django.db import connection
from django.db.models import IntegerField, QuerySet, Value
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext

from apps.audit.history_rows import SKIPPED_FIELDS, record_label
from apps.audit.sources import HistorySource, case_link, sources_of
from apps.core.formats import humanised
from apps.core.prepared import prepared_cursor

ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}
HIDDEN_FIELDS = SKIPPED_FIELDS | {"created_at", "history_relation_id"}
NEWEST_FIRST = ("-history_date", "-history_id")


@dataclass(frozen=True)
class TimelineFilter:
    """What the reader narrowed the timeline to; empty means everything."""

    user_id: int | None = None
    since: date | None = None
    until: date | None = None
    record_types: tuple[str, ...] = ()


@dataclass
class Change:
    field: str
    name: str
    old: Any
    new: Any


@dataclass
class TimelineEntry:
    """One history row, with who, when, why and the fields it changed."""

    when: datetime
    source: HistorySource
    history_id: int
    object_id: Any
    record: str
    action: str
    user: str
    reason: str
    changes: list[Change] = field(default_factory=list)

    @property
    def record_type(self) -> str:
        return self.source.label

    def as_dict(self) -> dict:
        return {
            "when": self.when.isoformat(),
            "record_type": self.source.key,
            "record_id": self.object_id,
            "record": self.record,
            "history_id": self.history_id,
            "action": self.action,
            "user": self.user,
            "reason": self.reason,
            "changes": [
                {"field": c.name, "old": _text(c.old), "new": _text(c.new)} for c in self.changes
            ],
        }


# Rows one save writes (a form of twelve clauses, a plan and its links) carry the same
# person and reason and are written within this much of each other.
ONE_SAVE = timedelta(seconds=2)


@dataclass
class TimelineEvent:
    """One save as a person made it: the history rows it wrote, newest first."""

    entries: list[TimelineEntry]

    @property
    def first(self) -> TimelineEntry:
        return self.entries[0]

    @property
    def records(self) -> str:
        """What the save touched, by kind: "network plan, 3 workload links"."""
        counts: dict[HistorySource, int] = {}
        for entry in reversed(self.entries):  # oldest first: the order it was written in
            counts[entry.source] = counts.get(entry.source, 0) + 1
        return ", ".join(
            source.label
            if n == 1
            else gettext("%(count)s %(records)s") % {"count": n, "records": source.label_plural}
            for source, n in counts.items()
        )


def events(entries: Iterable[TimelineEntry]) -> list[TimelineEvent]:
    """``entries`` (newest first) with the rows of each save gathered into one event."""
    grouped: list[TimelineEvent] = []
    for entry in entries:
        last = grouped[-1].entries[-1] if grouped else None
        if (
            last is not None
            and (last.user, last.reason) == (entry.user, entry.reason)
            and grouped[-1].first.when - entry.when <= ONE_SAVE
        ):
            grouped[-1].entries.append(entry)
        else:
            grouped.append(TimelineEvent([entry]))
    return grouped


CURSOR_SALT = "apps.audit.timeline.cursor"


class BadCursor(ValueError):
    """A page cursor that was not made here, or was changed on the way."""


@dataclass(frozen=True)
class Cursor:
    """Where a page of a timeline ends: its last row's date, history id and table.

    Rows are ordered newest first by (date, history id, table key): the key breaks
    ties between tables, so rows written at the same instant keep one order.
    """

    when: datetime
    history_id: int
    key: str

    def text(self) -> str:
        """Signed, so a reader can hand it back but not make one up."""
        return signing.dumps([self.when.isoformat(), self.history_id, self.key], salt=CURSOR_SALT)

    @classmethod
    def read(cls, text: str) -> "Cursor":
        try:
            when, history_id, key = signing.loads(text, salt=CURSOR_SALT)
            cursor = cls(datetime.fromisoformat(when), history_id, key)
        except (signing.BadSignature, ValueError, TypeError) as error:
            raise BadCursor(str(error)) from error
        if not isinstance(cursor.history_id, int) or not isinstance(cursor.key, str):
            raise BadCursor("a cursor holds a history id and a table key")
        return cursor


@dataclass
class TimelinePage:
    """One page read after a cursor, and the cursor of the page after it (None at the end)."""

    entries: list[TimelineEntry]
    next_cursor: Cursor | None

    @property
    def object_list(self) -> list[TimelineEntry]:
        """The entries, under the name a Django page gives them."""
        return self.entries


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def _narrow(queryset: QuerySet, flt: TimelineFilter) -> QuerySet:
    if flt.user_id is not None:
        queryset = queryset.filter(history_user_id=flt.user_id)
    if flt.since is not None:
        queryset = queryset.filter(history_date__gte=_day_start(flt.since))
    if flt.until is not None:
        queryset = queryset.filter(history_date__lt=_day_start(flt.until + timedelta(days=1)))
    return queryset


class Timeline:
    """A lazily paged, filtered timeline over several history querysets.

    Behaves as a sequence for ``django.core.paginator.Paginator``: ``count()``
    is one query and a slice is two queries plus one per table on the page. A
    record's history pages so; a case's, far longer, reads after a cursor
    (``CaseTimeline``).
    """

    def __init__(self, parts: list[tuple[HistorySource, QuerySet]], flt: TimelineFilter):
        if flt.record_types:
            parts = [(s, qs) for s, qs in parts if s.key in flt.record_types]
        # By key, so that the table number breaks ties in the order a cursor does.
        parts = sorted(parts, key=lambda part: part[0].key)
        self.sources = [source for source, _qs in parts]
        self.selects = [
            _narrow(queryset, flt)
            .order_by()
            .annotate(src=Value(index, output_field=IntegerField()))
            .values_list("history_date", "history_id", "src")
            for index, (_source, queryset) in enumerate(parts)
        ]
        self.union = _union(self.selects)
        self._count: int | None = None

    def count(self) -> int:
        if self._count is None:
            self._count = 0 if self.union is None else self.union.count()
        return self._count

    def __len__(self) -> int:
        return self.count()

    def __iter__(self) -> Iterator[TimelineEntry]:
        return self.iterate()

    @overload
    def __getitem__(self, key: int) -> TimelineEntry: ...
    @overload
    def __getitem__(self, key: slice) -> list[TimelineEntry]: ...
    def __getitem__(self, key: int | slice) -> TimelineEntry | list[TimelineEntry]:
        if not isinstance(key, slice):
            return self[key : key + 1][0]
        if self.union is None:
            return []
        union = self.union
        if (
            key.stop is not None
            and len(self.selects) > 1
            and connection.features.supports_slicing_ordering_in_compound
        ):
            # No table can give the page more than its own newest ``stop``
            # rows, so each is cut there by its date index before the merge,
            # instead of the database sorting every row of the case.
            newest = [select.order_by(*NEWEST_FIRST)[: key.stop] for select in self.selects]
            merged = newest[0].union(*newest[1:], all=True)
            # union() drops empty querysets and hands back a lone survivor as is.
            if not merged.query.is_sliced:
                union = merged.order_by(*NEWEST_FIRST, "-src")
        return self._entries(list(union[key]))

    def iterate(self, batch: int = 500) -> Iterator[TimelineEntry]:
        """Every entry, newest first, a batch of rows at a time."""
        start = 0
        while True:
            entries = self[start : start + batch]
            yield from entries
            if len(entries) < batch:
                return
            start += batch

    def _entries(self, page: list[tuple]) -> list[TimelineEntry]:
        return _entries(self.sources, page)


def _entries(sources: list[HistorySource], page: list[tuple]) -> list[TimelineEntry]:
    """The entries of ``page`` ((date, history id, table number) rows, in order), each
    with its changes: one query for the rows of every table present, one per kind of
    record named (the people who wrote the rows among them)."""
    wanted = defaultdict(list)
    for _when, history_id, src in page:
        wanted[src].append(history_id)
    rows = _rows_with_predecessors(sources, wanted)
    entries, writers = [], []
    for _when, history_id, src in page:
        entry, writer = _entry(sources[src], rows[src], history_id)
        entries.append(entry)
        writers.append(writer)
    name_related(entries, writers)
    return entries


class CaseTimeline:
    """A case's timeline read newest first, a page at a time after a cursor.

    Each table's newest rows past the cursor are read straight from SQL built once per
    table (its joins to the case do not change): building fifty ORM querysets for every
    page cost more than running them. The tables' rows are asked for in one UNION ALL,
    each branch its own ``LIMIT``, and merged here.
    """

    def __init__(self, case_pk: int, sources: Iterable[HistorySource], flt: TimelineFilter):
        self.case_pk = case_pk
        self.flt = flt
        self.sources = sorted(
            (s for s in sources if not flt.record_types or s.key in flt.record_types),
            key=lambda source: source.key,
        )

    def page_after(self, cursor: Cursor | None, size: int) -> TimelinePage:
        """The ``size`` newest entries older than ``cursor`` (the newest without one).

        Each table is asked for its ``size + 1`` newest rows past the cursor: no
        table can give the page more, and the one extra says whether a page follows.
        """
        heads = self._heads(cursor, size + 1)
        heads.sort(key=lambda row: (row[0], row[1], self.sources[row[2]].key), reverse=True)
        page = heads[:size]
        entries = _entries(self.sources, page)
        if len(heads) <= size:
            return TimelinePage(entries, None)
        when, history_id, src = page[-1]
        return TimelinePage(entries, Cursor(when, history_id, self.sources[src].key))

    def iterate(self, batch: int = 500) -> Iterator[TimelineEntry]:
        """Every entry, newest first, a batch of rows at a time (for exports)."""
        cursor = None
        while True:
            page = self.page_after(cursor, batch)
            yield from page.entries
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def branch(self, index: int, cursor: Cursor | None, limit: int) -> tuple[str, list]:
        """Table ``index``'s ``limit`` newest rows of the case past ``cursor``, as SQL:
        a range of its (case link, date, history id) index, read backwards."""
        source = self.sources[index]
        tables, link = case_link(source)
        where, params = [f"{link} = %s"], [self.case_pk]
        flt = self.flt
        if flt.user_id is not None:
            where.append("h.history_user_id = %s")
            params.append(flt.user_id)
        if flt.since is not None:
            where.append("h.history_date >= %s")
            params.append(_db_date(_day_start(flt.since)))
        if flt.until is not None:
            where.append("h.history_date < %s")
            params.append(_db_date(_day_start(flt.until + timedelta(days=1))))
        if cursor is not None:
            # (date, history id, key) below the cursor's; the key is the same on every
            # row of a table, so it only says whether the cursor's own (date, id) is past.
            # The plain upper bound on the date makes it a range of the index.
            same = "<=" if source.key < cursor.key else "<"
            where.append(
                "h.history_date <= %s AND (h.history_date < %s OR "
                f"(h.history_date = %s AND h.history_id {same} %s))"
            )
            when = _db_date(cursor.when)
            params += [when, when, when, cursor.history_id]
        # Names come from the models, quoted; every value is a parameter.
        sql = (
            f"SELECT h.history_date, h.history_id, {int(index)} AS src FROM {tables} "  # noqa: S608
            f"WHERE {' AND '.join(where)} "
            f"ORDER BY h.history_date DESC, h.history_id DESC LIMIT {int(limit)}"
        )
        return sql, params

    def _heads(self, cursor: Cursor | None, limit: int) -> list[tuple]:
        """Each table's ``limit`` newest rows past ``cursor`` (date, history id, table
        number), all in one query."""
        if not self.sources:
            return []
        branches = [self.branch(index, cursor, limit) for index in range(len(self.sources))]
        # Each branch in a subquery of its own: SQLite takes a LIMIT there, not in a
        # UNION's own terms; PostgreSQL reads each through its index all the same.
        sql = " UNION ALL ".join(
            f"SELECT * FROM ({branch}) AS b{index}"  # noqa: S608
            for index, (branch, _params) in enumerate(branches)
        )
        params = [param for _branch, branch_params in branches for param in branch_params]
        # Planning fifty branches costs more than reading them: planned once per connection.
        with prepared_cursor() as db:
            db.execute(sql, params)
            return [(_read_date(when), history_id, src) for when, history_id, src in db.fetchall()]


def _db_date(value: datetime):
    """A date as the database compares it with a stored one (SQLite: text in UTC)."""
    return connection.ops.adapt_datetimefield_value(value)


def _read_date(value) -> datetime:
    """A date read back by plain SQL: SQLite hands it back as its stored text."""
    if isinstance(value, datetime):
        return value
    parsed = parse_datetime(value)
    assert parsed is not None, value
    if settings.USE_TZ and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, UTC)
    return parsed


def history_timeline(querysets: list[QuerySet]) -> Timeline:
    """A record's or a page's own history (given querysets, no filter), paged lazily."""
    return Timeline(sources_of(querysets), TimelineFilter())


def _union(selects: list[QuerySet]) -> QuerySet | None:
    if not selects:
        return None
    union = selects[0] if len(selects) == 1 else selects[0].union(*selects[1:], all=True)
    # The table number breaks ties between tables, so equal dates keep one order.
    return union.order_by(*NEWEST_FIRST, "-src")


def _rows_with_predecessors(
    sources: list[HistorySource], wanted: dict[int, list[int]]
) -> dict[int, list]:
    """The history rows ``wanted`` (by table number) and the row before each of them, by
    table number, oldest first: one query over every table, however many are present.

    Each table's rows come back as one JSON object of its columns (the tables' columns
    differ; a UNION needs the same ones), read back into history records here; then
    one query for the people who wrote them.
    """
    if not wanted:
        return {}
    branches, params = [], []
    for index, (src, ids) in enumerate(sorted(wanted.items())):
        sql, branch_params = _rows_branch(sources[src], src, ids)
        branches.append(f"SELECT * FROM ({sql}) AS r{index}")  # noqa: S608
        params += branch_params
    with connection.cursor() as db:
        db.execute(" UNION ALL ".join(branches), params)
        fetched = db.fetchall()
    rows: dict[int, list] = defaultdict(list)
    for src, text in fetched:
        rows[src].append(_history_row(sources[src].history_model, text))
    for src, found in rows.items():
        found.sort(key=attrgetter(sources[src].model._meta.pk.attname, "history_id"))
    return rows


def _rows_branch(source: HistorySource, src: int, ids: list[int]) -> tuple[str, list]:
    """SQL for the rows ``ids`` of one history table and the row before each.

    The version before a row is the same record's previous history id: rows are
    numbered as they are written, and an (object id, history id) lookup is one index
    probe where a date order would sort every revision. One IN over the UNION of both id
    lists: an OR of two IN conditions hides the primary key index.
    """
    model = source.history_model
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    object_column = quote(str(source.model._meta.pk.column))
    marks = ", ".join(["%s"] * len(ids))
    pairs = []
    for model_field in model._meta.concrete_fields:
        name = str(model_field.column)
        column = f"h.{quote(name)}"
        if model_field.get_internal_type() == "JSONField" and connection.vendor == "postgresql":
            column = f"{column}::text"  # as text, read as the field reads it (floats as floats)
        pairs.append(f"'{name}', {column}")
    build = "json_build_object" if connection.vendor == "postgresql" else "json_object"
    as_text = "::text" if connection.vendor == "postgresql" else ""
    # Names come from the models, quoted; every value is a parameter.
    sql = (
        f"SELECT {int(src)} AS src, {build}({', '.join(pairs)}){as_text} AS row "  # noqa: S608
        f"FROM {table} h WHERE h.history_id IN ("
        f"SELECT c.history_id FROM {table} c WHERE c.history_id IN ({marks}) UNION "
        f"SELECT (SELECT p.history_id FROM {table} p WHERE p.{object_column} = "
        f"c.{object_column} AND p.history_id < c.history_id "
        f"ORDER BY p.history_id DESC LIMIT 1) FROM {table} c WHERE c.history_id IN ({marks}))"
    )
    return sql, [*ids, *ids]


def _history_row(model, text: str):
    """A history record from its columns as JSON, each value as its field reads it."""
    values = json.loads(text, parse_float=Decimal)
    fields = model._meta.concrete_fields
    return model.from_db(
        connection.alias,
        [f.attname for f in fields],
        [_column_value(f, values.get(f.column)) for f in fields],
    )


def _column_value(model_field, value):
    if value is None:
        return None
    kind = model_field.get_internal_type()
    if kind == "DateTimeField":
        return _read_date(value)
    if kind == "DateField":
        return value if isinstance(value, date) else date.fromisoformat(value)
    if kind == "DecimalField":
        exponent = Decimal(1).scaleb(-model_field.decimal_places)
        return Decimal(value).quantize(exponent, context=model_field.context)
    if kind == "BooleanField":
        return bool(value)
    if kind == "JSONField":
        return json.loads(value, cls=model_field.decoder)
    return value


def _entry(source: HistorySource, rows: list, history_id: int) -> tuple[TimelineEntry, Any]:
    """The entry of one history row, and the id of who wrote it (named later, with the
    other people the page names)."""
    object_pk = source.model._meta.pk.attname
    row = next(r for r in rows if r.history_id == history_id)
    earlier = [
        candidate
        for candidate in rows
        if getattr(candidate, object_pk) == getattr(row, object_pk)
        and candidate.history_id < row.history_id
    ]
    before = max(earlier, key=lambda candidate: candidate.history_id, default=None)
    return TimelineEntry(
        when=row.history_date,
        source=source,
        history_id=row.history_id,
        object_id=getattr(row, object_pk),
        record=_label(row, object_pk),
        action=ACTIONS.get(row.history_type, row.history_type),
        user="",
        reason=row.history_change_reason or "",
        changes=diff(before, row) if before is not None else _as_created(source, row),
    ), row.history_user_id


def _as_created(source: HistorySource, row) -> list[Change]:
    """A new record's fields that say what it is (a comment's text), where its model
    names them in ``shown_when_created``; others show no fields when created."""
    changes = []
    for name in getattr(source.model, "shown_when_created", ()):
        model_field = row._meta.get_field(name)
        value = getattr(row, model_field.attname)
        changes.append(
            Change(
                model_field.attname,
                str(model_field.verbose_name),
                None,
                _display(model_field, value),
            )
        )
    return changes


def diff(before, after) -> list[Change]:
    changes = []
    # A record's progress (a packet request's step and percentage) is not history: the
    # rows that carry it for another reason do not show it as a change.
    progress = set(getattr(getattr(type(after), "instance_type", None), "progress_fields", ()))
    for model_field in after._meta.concrete_fields:
        if (
            model_field.attname in HIDDEN_FIELDS
            or model_field.attname in progress
            or model_field.primary_key
        ):
            continue
        old, new = getattr(before, model_field.attname), getattr(after, model_field.attname)
        if old != new:
            changes.append(
                Change(
                    model_field.attname,
                    str(model_field.verbose_name),
                    _display(model_field, old),
                    _display(model_field, new),
                )
            )
    return changes


def name_related(entries: list[TimelineEntry], writers: Sequence[Any]) -> None:
    """Show a reference to another record by that record's name, not its number, and
    each entry's writer (``writers``: their ids, one per entry, None for the system) by
    their user name.

    One query per kind of record referred to on the page (a person, an offer, a
    checklist...), however many entries refer to it; the writers are read with the
    other people named. A record deleted since is shown by its number, as "#7".
    """
    wanted: dict[Any, set] = defaultdict(set)
    references = []
    for entry in entries:
        fields = _reference_fields(entry.source.history_model)
        for change in entry.changes:
            related = fields.get(change.field)
            if related is None:
                continue
            references.append((change, related))
            wanted[related].update(v for v in (change.old, change.new) if v is not None)
    people = get_user_model()
    wanted[people].update(writer for writer in writers if writer is not None)
    names = {
        # ``select_related()`` follows the required references a name is made of
        # (an offer's vendor, a record's case), in the same query.
        related: {
            obj.pk: _name_of(obj)
            for obj in related._base_manager.select_related().filter(pk__in=ids)
        }
        for related, ids in wanted.items()
        if ids
    }
    for change, related in references:
        change.old = _named(names.get(related, {}), change.old)
        change.new = _named(names.get(related, {}), change.new)
    for entry, writer in zip(entries, writers, strict=True):
        entry.user = "system" if writer is None else _named(names.get(people, {}), writer)


def _reference_fields(history_model) -> dict[str, Any]:
    """The record's references to other records, by column: the model each points to."""
    return {
        model_field.attname: model_field.related_model
        for model_field in history_model._meta.concrete_fields
        if model_field.is_relation
        and model_field.related_model is not None
        and model_field.attname not in HIDDEN_FIELDS
    }


def _name_of(obj) -> str:
    if isinstance(obj, AbstractBaseUser):
        return obj.get_username()
    return str(obj)


def _named(names: dict, value):
    if value is None:
        return None
    return names.get(value, f"#{value}")


def _display(model_field, value):
    if value is not None and model_field.choices:
        return dict(model_field.flatchoices).get(value, value)
    if isinstance(value, dict | list):
        return readable(value)
    return value


def readable(value) -> str | None:
    """A stored structure (a list of chapters, a dictionary of figures) in words a reader
    follows: "Title: Demand, Pages: 2; Title: Manifest, Pages: —", never as code."""
    if isinstance(value, dict):
        if not value:
            return None
        return ", ".join(f"{humanised(str(key))}: {_nested(item)}" for key, item in value.items())
    if isinstance(value, list):
        if not value:
            return None
        return "; ".join(_nested(item) for item in value)
    return None if value is None else str(value)


def _nested(value) -> str:
    if isinstance(value, dict | list):
        text = readable(value)
        if text is None:
            return "—"
        return f"({text})" if isinstance(value, list) and len(value) > 1 else text
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    return str(value)


def _text(value) -> str | None:
    return None if value is None else str(value)


def _label(row, object_pk: str) -> str:
    label = record_label(row)
    return label[:80] if label else f"#{getattr(row, object_pk)}"

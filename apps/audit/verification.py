"""Walking the hash chain and every history table to find what changed behind the app's back.

Four checks, each in bounded memory:

- the chain itself in sequence order (links, sequence gaps, the head), in
  keyset-paged reads of a few thousand entries;
- each history table merged with its chain entries in id order (rows altered,
  rows deleted, rows inserted without an entry);
- each tracked table against its history: every live row must equal its
  record's newest history row on the fields history copies (an UPDATE of the
  live row behind the app's back leaves them apart), two set-based queries
  per table whatever its size;
- the heads packets and exports recorded (``apps.audit.heads``): each must
  still be in the chain, unchanged, or the chain was moved back (a database
  restored from an older backup, say).

The earliest problem in chain order is reported as the first broken row.
"""

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models import Model
from django.utils.translation import gettext as _

from apps.audit.chain import (
    HEAD_PK,
    late_columns,
    link_hash,
    row_digest,
    row_fields,
    tracked_history_models,
)
from apps.audit.heads import RecordedHead, recorded_heads
from apps.audit.models import GENESIS_HASH, ChainEntry, ChainHead, ChainVerification

CHUNK = 5000
# Enough to describe a tampering; the count of all problems is kept regardless.
KEPT_PROBLEMS = 100


class Kind:
    ALTERED = "altered"
    DELETED = "deleted"
    INSERTED = "inserted"
    LINK = "link"
    SEQUENCE = "sequence"
    HEAD = "head"
    ANCHOR = "anchor"
    LIVE = "live"
    REWIND = "rewind"


@dataclass
class Problem:
    """One thing the verifier found wrong, located as precisely as it can be."""

    kind: str
    table: str = ""
    history_id: int | None = None
    seq: int | None = None
    detail: str = ""
    record_id: int | None = None  # a live row's primary key
    fields: list[str] = field(default_factory=list)  # the live row's fields that differ

    def describe(self) -> str:
        where = []
        if self.table:
            where.append(self.table)
        if self.record_id is not None:
            where.append(_("record %(id)s") % {"id": self.record_id})
        if self.history_id is not None:
            where.append(_("history row %(id)s") % {"id": self.history_id})
        if self.seq is not None:
            where.append(_("chain entry #%(seq)s") % {"seq": self.seq})
        return f"{', '.join(where)}: {self.detail}" if where else self.detail

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class ChainReport:
    """The verifier's result: how much it checked, the head, and the problems found."""

    rows: int = 0
    records: int = 0  # live rows compared with their newest history row
    recorded_heads: int = 0  # heads recorded by packets and exports, checked
    head_seq: int = 0
    head_hash: str = GENESIS_HASH
    problem_count: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return self.problem_count == 0

    @property
    def first_problem(self) -> Problem | None:
        if not self.problems:
            return None
        return min(self.problems, key=chain_order)

    def add(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < KEPT_PROBLEMS:
            self.problems.append(problem)


def chain_order(problem: Problem):
    return (problem.seq is None, problem.seq or 0, problem.table, problem.history_id or 0)


def _keyset(queryset, key: str, size: int = CHUNK) -> Iterator[dict]:
    last = None
    while True:
        page = queryset if last is None else queryset.filter(**{f"{key}__gt": last})
        batch = list(page.order_by(key)[:size])
        yield from batch
        if len(batch) < size:
            return
        last = batch[-1][key]


def verify_chain() -> ChainReport:
    report = ChainReport()
    # Listed before the walk: a head recorded while the walk runs is then never
    # past the end the walk reaches (its entry was committed before it was recorded).
    heads = recorded_heads()
    labels = {
        ct.pk: f"{ct.app_label}.{ct.model}"
        for ct in ContentType.objects.filter(
            pk__in=ChainEntry.objects.order_by().values("content_type_id").distinct()
        )
    }
    _walk_links(report, labels)
    _check_head(report)
    _check_anchor(report)
    tracked = set()
    tables = set(connection.introspection.table_names())
    for model in tracked_history_models():
        if model._meta.db_table not in tables:
            continue  # a table that never existed has no rows; chained ones are reported below
        content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
        tracked.add(content_type.pk)
        _merge_table(report, model, content_type)
        # instance_type: set by django-simple-history at run time, untyped (see sources.py).
        live: type[Model] = model.instance_type  # type: ignore[attr-defined]
        if live._meta.db_table in tables:
            _compare_live_rows(report, model)
    for ct_id, label in labels.items():
        if ct_id not in tracked:
            first = ChainEntry.objects.filter(content_type_id=ct_id).order_by("seq").first()
            # labels were read from these very entries, which are never deleted
            assert first is not None
            report.add(
                Problem(
                    Kind.DELETED,
                    table=label,
                    history_id=first.history_id,
                    seq=first.seq,
                    detail=_("the whole history table is gone"),
                )
            )
    _check_recorded_heads(report, heads)
    return report


def _walk_links(report: ChainReport, labels: dict) -> None:
    expected_seq, prev_hash = 1, GENESIS_HASH
    entries = ChainEntry.objects.values(
        "seq", "content_type_id", "history_id", "row_digest", "prev_hash", "entry_hash"
    )
    for entry in _keyset(entries, "seq"):
        table = labels.get(entry["content_type_id"], "?")
        if entry["seq"] != expected_seq:
            report.add(
                Problem(
                    Kind.SEQUENCE,
                    table=table,
                    history_id=entry["history_id"],
                    seq=entry["seq"],
                    detail=_("chain entries %(a)s to %(b)s are missing")
                    % {"a": expected_seq, "b": entry["seq"] - 1},
                )
            )
        if entry["prev_hash"] != prev_hash:
            report.add(
                Problem(
                    Kind.LINK,
                    table=table,
                    history_id=entry["history_id"],
                    seq=entry["seq"],
                    detail=_("the entry does not link to the one before it"),
                )
            )
        recomputed = link_hash(
            prev_hash=entry["prev_hash"],
            row_digest=entry["row_digest"],
            table=table,
            history_id=entry["history_id"],
            seq=entry["seq"],
        )
        if recomputed != entry["entry_hash"]:
            report.add(
                Problem(
                    Kind.LINK,
                    table=table,
                    history_id=entry["history_id"],
                    seq=entry["seq"],
                    detail=_("the chain entry itself was edited"),
                )
            )
        report.rows += 1
        expected_seq, prev_hash = entry["seq"] + 1, entry["entry_hash"]
        report.head_seq, report.head_hash = entry["seq"], entry["entry_hash"]


def _check_head(report: ChainReport) -> None:
    head = ChainHead.objects.filter(pk=HEAD_PK).first()
    head_seq, head_hash = (head.seq, head.entry_hash) if head else (0, GENESIS_HASH)
    if (head_seq, head_hash) != (report.head_seq, report.head_hash):
        report.add(
            Problem(
                Kind.HEAD,
                seq=report.head_seq + 1 if head_seq > report.head_seq else None,
                detail=_("the chain ends at #%(seq)s but its head says #%(head)s")
                % {"seq": report.head_seq, "head": head_seq},
            )
        )


def _check_anchor(report: ChainReport) -> None:
    # The head recorded by the last good verification must still be in the
    # chain, unchanged: rewriting the chain from some point on is caught here.
    anchor = ChainVerification.objects.filter(intact=True, head_seq__gt=0).order_by("-pk").first()
    if anchor is None:
        return
    entry = ChainEntry.objects.filter(seq=anchor.head_seq).values("entry_hash").first()
    if entry is None or entry["entry_hash"] != anchor.head_hash:
        report.add(
            Problem(
                Kind.ANCHOR,
                seq=anchor.head_seq,
                detail=_("the chain no longer holds the head verified on %(when)s")
                % {"when": anchor.finished_at.isoformat(timespec="seconds")},
            )
        )


def _merge_table(report: ChainReport, model, content_type) -> None:
    table = model._meta.label_lower
    pk_name = model._meta.pk.attname
    entries = _keyset(
        ChainEntry.objects.filter(content_type=content_type).values(
            "history_id", "seq", "row_digest"
        ),
        "history_id",
    )
    rows = _keyset(model._base_manager.values(*row_fields(model)), pk_name)
    late = late_columns(model)
    entry, row = next(entries, None), next(rows, None)
    while entry is not None or row is not None:
        row_id = row[pk_name] if row is not None else None
        if row is None or (entry is not None and entry["history_id"] < row_id):
            assert entry is not None  # the loop runs while an entry or a row is left
            report.add(
                Problem(
                    Kind.DELETED,
                    table=table,
                    history_id=entry["history_id"],
                    seq=entry["seq"],
                    detail=_("the history row was deleted"),
                )
            )
            entry = next(entries, None)
        elif entry is None or row_id < entry["history_id"]:
            report.add(
                Problem(
                    Kind.INSERTED,
                    table=table,
                    history_id=row_id,
                    detail=_("the history row was inserted outside the application"),
                )
            )
            row = next(rows, None)
        else:
            if row_digest(row, late=late) != entry["row_digest"]:
                report.add(
                    Problem(
                        Kind.ALTERED,
                        table=table,
                        history_id=row_id,
                        seq=entry["seq"],
                        detail=_("the history row was altered after it was written"),
                    )
                )
            entry, row = next(entries, None), next(rows, None)


# --- Live rows against their newest history row -----------------------------


def _tracked_columns(history_model) -> list[tuple[str, str, str]]:
    """(field name, live column, history column) for each field the history table copies."""
    live = history_model.instance_type
    columns = []
    for live_field in history_model.tracked_fields:
        if not live_field.concrete or live_field.primary_key or live_field.model is not live:
            continue
        copy = history_model._meta.get_field(live_field.attname)
        columns.append((live_field.name, live_field.column, copy.column))
    return columns


def _live_sql(history_model) -> tuple[str, str, list[str]]:
    """Two queries: live rows unlike their newest history row; records whose live row is gone."""
    q = connection.ops.quote_name
    live = history_model.instance_type
    opts = history_model._meta
    live_table, history_table = q(live._meta.db_table), q(opts.db_table)
    live_pk = q(live._meta.pk.column)
    record_id = q(opts.get_field(live._meta.pk.attname).column)
    history_id, history_type = q(opts.pk.column), q(opts.get_field("history_type").column)
    # Null-safe equality: a NULL on one side only is a difference.
    same = "IS" if connection.vendor == "sqlite" else "IS NOT DISTINCT FROM"
    columns = _tracked_columns(history_model)
    compared = [f"l.{q(lc)} {same} h.{q(hc)}" for _name, lc, hc in columns]
    flags = "".join(f", CASE WHEN {test} THEN 0 ELSE 1 END" for test in compared)
    differs = "".join(f" OR NOT ({test})" for test in compared)
    # Identifiers are quoted by the backend from model metadata; values are bound.
    newest = (
        f"(SELECT {record_id} AS rid, MAX({history_id}) AS newest "  # noqa: S608
        f"FROM {history_table} GROUP BY {record_id}) n"
    )
    unlike = (
        f"SELECT l.{live_pk}, h.{history_id}, h.{history_type}{flags} "  # noqa: S608
        f"FROM {live_table} l "
        f"LEFT JOIN {newest} ON n.rid = l.{live_pk} "
        f"LEFT JOIN {history_table} h ON h.{history_id} = n.newest "
        f"WHERE h.{history_id} IS NULL OR h.{history_type} = %s{differs} "
        f"ORDER BY l.{live_pk}"
    )
    gone = (
        f"SELECT h.{record_id} FROM {newest} "  # noqa: S608
        f"JOIN {history_table} h ON h.{history_id} = n.newest "
        f"LEFT JOIN {live_table} l ON l.{live_pk} = h.{record_id} "
        f"WHERE l.{live_pk} IS NULL AND h.{history_type} <> %s "
        f"ORDER BY h.{record_id}"
    )
    return unlike, gone, [name for name, _lc, _hc in columns]


def _fetch(sql: str, params: list) -> Iterator[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(CHUNK):
            yield from batch


def _compare_live_rows(report: ChainReport, history_model) -> None:
    live = history_model.instance_type
    table = live._meta.label_lower
    unlike, gone, names = _live_sql(history_model)
    report.records += live._base_manager.count()
    for record_id, newest_id, newest_type, *flags in _fetch(unlike, ["-"]):
        differing = [name for name, flag in zip(names, flags, strict=True) if flag]
        if newest_id is None:
            detail = _("the live row has no history: it was written outside the application")
        elif newest_type == "-":
            detail = _("the live row exists, but its history says the record was deleted")
        else:
            detail = _(
                "the live row differs from its newest history row in: %(fields)s "
                "(changed outside the application)"
            ) % {"fields": ", ".join(differing)}
        report.add(
            Problem(Kind.LIVE, table=table, record_id=record_id, fields=differing, detail=detail)
        )
    for (record_id,) in _fetch(gone, ["-"]):
        report.add(
            Problem(
                Kind.LIVE,
                table=table,
                record_id=record_id,
                detail=_(
                    "the live row is gone, but its history records no deletion "
                    "(deleted outside the application)"
                ),
            )
        )


# --- Heads recorded by packets and exports ----------------------------------


def _recorded_by(head: RecordedHead) -> str:
    if head.source == "packet":
        return _("packet %(number)s") % {"number": head.reference}
    return _("export %(name)s") % {"name": head.reference}


def _check_recorded_heads(report: ChainReport, heads: list[RecordedHead]) -> None:
    report.recorded_heads = len(heads)
    held: dict[int, str] = {}
    within = sorted({head.seq for head in heads if head.seq <= report.head_seq})
    for start in range(0, len(within), CHUNK):
        held.update(
            ChainEntry.objects.filter(seq__in=within[start : start + CHUNK]).values_list(
                "seq", "entry_hash"
            )
        )
    for head in heads:
        if head.seq > report.head_seq:
            detail = _(
                "the chain ends at #%(end)s, but %(source)s recorded its head at #%(seq)s: "
                "the chain was moved back (for example, the database was restored from "
                "an older backup)"
            )
        elif held.get(head.seq) != head.entry_hash:
            detail = _(
                "the chain's entry #%(seq)s is not the one %(source)s recorded: the chain "
                "was moved back and written again (for example, the database was restored "
                "from an older backup and used since)"
            )
        else:
            continue
        report.add(
            Problem(
                Kind.REWIND,
                seq=head.seq,
                detail=detail
                % {"end": report.head_seq, "seq": head.seq, "source": _recorded_by(head)},
            )
        )

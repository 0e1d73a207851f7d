"""Walking the hash chain and every history table to find what changed behind the app's back.

Two passes, each in bounded memory (keyset-paged reads of a few thousand rows):
the chain itself in sequence order (links, sequence gaps, the head), then each
history table merged with its chain entries in id order (rows altered, rows
deleted, rows inserted without an entry). The earliest problem in chain order
is reported as the first broken row.
"""

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils.translation import gettext as _

from apps.audit.chain import HEAD_PK, link_hash, row_digest, row_fields, tracked_history_models
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


@dataclass
class Problem:
    """One thing the verifier found wrong, located as precisely as it can be."""

    kind: str
    table: str = ""
    history_id: int | None = None
    seq: int | None = None
    detail: str = ""

    def describe(self) -> str:
        where = []
        if self.table:
            where.append(self.table)
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
        return min(self.problems, key=_chain_order)

    def add(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < KEPT_PROBLEMS:
            self.problems.append(problem)


def _chain_order(problem: Problem):
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
    for ct_id, label in labels.items():
        if ct_id not in tracked:
            first = ChainEntry.objects.filter(content_type_id=ct_id).order_by("seq").first()
            report.add(
                Problem(
                    Kind.DELETED,
                    table=label,
                    history_id=first.history_id,
                    seq=first.seq,
                    detail=_("the whole history table is gone"),
                )
            )
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
    entry, row = next(entries, None), next(rows, None)
    while entry is not None or row is not None:
        row_id = row[pk_name] if row is not None else None
        if row is None or (entry is not None and entry["history_id"] < row_id):
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
            if row_digest(row) != entry["row_digest"]:
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

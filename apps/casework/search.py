"""One search box over cases, vendors, offers, clauses and evidence.

On PostgreSQL each kind of record has a search document: its searched fields
joined by spaces. The migration of the app that owns the table
(``00NN_search_indexes``) keeps its words in a generated, indexed column
(``search_words``: ``to_tsvector('simple', …)``, so names and model numbers
match as written, the last word typed as a prefix) and indexes its trigrams
(``pg_trgm``), for identifiers, digests and text a word splitter does not cut
(Chinese); the query repeats the trigram index's expression exactly, so the
planner can use it. The newest ``RANKED_AMONG`` matches are ranked by ``ts_rank`` of
the stored words, then newest first. On SQLite every field is matched by substring, newest first.

Each kind is searched only where the viewer may read it (its permission, and
for what belongs to a case, the cases the viewer may read), inside the one
query each kind costs whatever the number of records. docs/search.md tells it whole.
"""

import re
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import BooleanField, F, FloatField, Func, Q, QuerySet, TextField
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from apps.cases.models import ProcurementCase
from apps.cases.selectors import case_ids_for
from apps.contracts.models import ChecklistItem
from apps.evidence.models import EvidenceBundle
from apps.offers.models import Offer
from apps.vendors.models import Vendor

PER_KIND = 20
# A word most records hold (a card model) is ranked among its newest matches this many.
RANKED_AMONG = 200
MAX_QUERY_LENGTH = 200


@dataclass(frozen=True)
class Hit:
    title: str
    detail: str
    url: str


@dataclass(frozen=True)
class Source:
    """One kind of record: who may read it, what is searched, and how a hit reads.

    ``fields`` make the record's search document (in this order: the indexes
    are built on the same expression); ``case`` is the lookup to the case the
    record belongs to, if any; ``newest`` orders equally ranked hits;
    ``named_by`` is a relation whose ``name`` also finds the record, by
    substring (an offer is found by its vendor's name).
    """

    label: object
    permission: str
    queryset: Callable[[], QuerySet]
    fields: tuple[str, ...]
    newest: tuple[str, ...]
    case: str | None
    hit: Callable[[Any, Any], Hit]  # (record, viewer)
    named_by: str | None = None


# The ``simple`` configuration: words as written, no stemming or stop words of a language.
TS_QUERY = "to_tsquery('simple'::regconfig, %s)"
# On PostgreSQL each searched table has this column, generated from its document by the
# database (to_tsvector('simple', document)) and indexed; the model does not declare it.
WORDS_COLUMN = "search_words"


class Document(Func):
    """``COALESCE(a, '') || ' ' || COALESCE(b, '')``: the expression the trigram index is on.

    Written out rather than composed from Django's functions, so that it reads
    exactly as in the migrations; an index is used only for the same expression.
    """

    output_field = TextField()

    def as_sql(self, compiler, connection, **extra):  # type: ignore[override]
        columns = [compiler.compile(column)[0] for column in self.get_source_expressions()]
        return "(" + " || ' ' || ".join(f"COALESCE({c}, '')" for c in columns) + ")", []


class StoredWords(Func):
    """The record's ``search_words`` column, under the alias the query gives its table."""

    output_field = TextField()

    def __init__(self) -> None:
        super().__init__(F("pk"))

    def as_sql(self, compiler, connection, **extra):  # type: ignore[override]
        table = compiler.quote_name_unless_alias(self.get_source_expressions()[0].alias)
        return f"{table}.{connection.ops.quote_name(WORDS_COLUMN)}", []


class Matches(Func):
    """The record holds the words (the last one as a prefix) or contains the text as typed."""

    output_field = BooleanField()
    conditional = True

    def __init__(self, fields: tuple[str, ...], words: str, *, by_words: bool = True) -> None:
        super().__init__(Document(*[F(name) for name in fields]), StoredWords())
        self.words, self.by_words = words, by_words

    def as_sql(self, compiler, connection, **extra):  # type: ignore[override]
        document, stored = (compiler.compile(e)[0] for e in self.get_source_expressions())
        contains = f"{document} ILIKE %s"
        words = f"{stored} @@ {TS_QUERY}"
        if not self.by_words:  # the text as typed only
            return contains, [like_pattern(self.words)]
        if not has_trigram(self.words):
            return words, [ts_query(self.words)]
        # The text as typed first: cheaper to test than the words, and mostly what matches.
        return f"({contains} OR {words})", [like_pattern(self.words), ts_query(self.words)]


class Rank(Func):
    """``ts_rank`` of the stored words: 0 where only the text as typed matched."""

    output_field = FloatField()

    def __init__(self, words: str) -> None:
        super().__init__(StoredWords())
        self.words = words

    def as_sql(self, compiler, connection, **extra):  # type: ignore[override]
        stored, _params = compiler.compile(self.get_source_expressions()[0])
        return f"ts_rank({stored}, {TS_QUERY})", [ts_query(self.words)]


def ts_query(words: str) -> str:
    """Every word, the last also as a prefix ("H20" finds "H200"), in ``to_tsquery`` syntax.

    Each word is quoted, so operators typed in it are text; quotes and
    backslashes, which would end the quoting, are dropped.
    """
    terms = re.sub(r"['\\]", " ", words).split()
    if not terms:
        return ""
    return " & ".join([f"'{term}'" for term in terms[:-1]] + [f"'{terms[-1]}':*"])


def has_trigram(words: str) -> bool:
    """Whether the text holds three letters or digits in a row: what a trigram index looks up.

    Without one, a substring match would read every row (the index has nothing to
    look up), so shorter text is matched by words only, the last as a prefix.
    """
    return re.search(r"[^\W_]{3}", words) is not None


def like_pattern(words: str) -> str:
    escaped = words.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _matching(source: Source, queryset: QuerySet, words: str) -> QuerySet:
    """The first ``PER_KIND + 1`` matches of the records in ``queryset``, best first."""
    names = (f"{source.named_by}__name",) if source.named_by else ()
    if connection.vendor != "postgresql":
        contains = Q()
        for name in (*source.fields, *names):
            contains |= Q(**{f"{name}__icontains": words})
        return queryset.filter(contains).order_by(*source.newest)[: PER_KIND + 1]
    condition = Q(Matches(source.fields, words))
    if source.named_by and has_trigram(words):
        # Read first (a few rows, one query): as a list of ids, the relation's own index
        # serves as one arm of the OR, and the planner sees how many rows it brings.
        related = queryset.model._meta.get_field(source.named_by).related_model
        named = related.objects.filter(Matches(("name",), words, by_words=False))
        ids = list(named.order_by().values_list("pk", flat=True))
        if ids:
            condition |= Q(**{f"{source.named_by}__in": ids})
    # The newest matches are read through the table's index on its newest order, which
    # stops after ``RANKED_AMONG`` of them however many records match; those are ranked
    # and the best shown, with the joins made for those few only.
    newest = queryset.filter(condition).order_by(*source.newest).values("pk")[:RANKED_AMONG]
    return (
        source.queryset()
        .filter(pk__in=newest)
        .annotate(search_rank=Rank(words))
        .order_by("-search_rank", *source.newest)[: PER_KIND + 1]
    )


SOURCES = (
    Source(
        _("Cases"),
        "cases.view_procurementcase",
        lambda: ProcurementCase.objects.only("name", "status", "created_at"),
        ("name", "requirements"),
        ("-created_at", "-pk"),
        "pk",
        lambda case, _viewer: Hit(
            case.name, case.get_status_display(), reverse("cases:detail", args=[case.pk])
        ),
    ),
    Source(
        _("Vendors"),
        "vendors.view_vendor",
        lambda: Vendor.objects.only("name", "jurisdiction", "created_at"),
        ("name", "jurisdiction", "regions", "contacts"),
        ("-created_at", "-pk"),
        None,
        lambda vendor, _viewer: Hit(
            vendor.name, vendor.jurisdiction, reverse("vendors:detail", args=[vendor.pk])
        ),
    ),
    Source(
        _("Offers"),
        "offers.view_offer",
        lambda: Offer.objects.select_related("vendor", "case").only(
            "accelerator_model", "accelerator_count", "created_at", "vendor__name", "case__name"
        ),
        ("accelerator_model", "notes"),
        ("-created_at", "-pk"),
        "case",
        lambda offer, _viewer: Hit(
            f"{offer.vendor.name}: {offer.accelerator_count}× {offer.accelerator_model}",
            offer.case.name,
            reverse("offers:detail", args=[offer.pk]),
        ),
        named_by="vendor",
    ),
    Source(
        _("Contract clauses"),
        "contracts.view_clausechecklist",
        lambda: ChecklistItem.objects.select_related("checklist__offer__vendor").only(
            "number", "title", "checklist__offer__case_id", "checklist__offer__vendor__name"
        ),
        ("title", "clause_reference", "excerpt", "note"),
        ("-checklist_id", "number"),
        "checklist__offer__case",
        lambda item, viewer: Hit(
            f"{item.number}. {item.title}",
            item.checklist.offer.vendor.name,
            # The checklist itself for whoever reviews clauses; the case's comparison otherwise.
            reverse("contracts:checklist", args=[item.checklist.offer_id])
            if viewer.has_perm("contracts.change_clausechecklist")
            else reverse("contracts:comparison", args=[item.checklist.offer.case_id]),
        ),
    ),
    Source(
        _("Evidence bundles"),
        "evidence.view_evidencebundle",
        lambda: EvidenceBundle.objects.select_related("offer__vendor").only(
            "sha256", "received_at", "offer__vendor__name"
        ),
        ("sha256", "bundle_uuid", "host_id", "harness_version"),
        ("-received_at", "-pk"),
        "case",
        lambda bundle, _viewer: Hit(
            bundle.sha256[:16] + "…",
            bundle.offer.vendor.name if bundle.offer_id else "",
            reverse("evidence:detail", args=[bundle.pk]),
        ),
    ),
)


@dataclass(frozen=True)
class Group:
    label: object
    hits: list[Hit]
    more: bool


def search(actor, words: str) -> list[Group]:
    """Hits per kind of record the viewer may read, at most ``PER_KIND`` each."""
    words = " ".join(words.split())[:MAX_QUERY_LENGTH]
    if not words:
        return []
    groups = []
    with transaction.atomic(), _indexes_first():
        for source in SOURCES:
            if not actor.has_perm(source.permission):
                continue
            queryset = source.queryset()
            if source.case:
                queryset = queryset.filter(**{f"{source.case}__in": case_ids_for(actor)})
            found = list(_matching(source, queryset, words))
            if found:
                hits = [source.hit(record, actor) for record in found[:PER_KIND]]
                groups.append(Group(source.label, hits, more=len(found) > PER_KIND))
    return groups


@contextmanager
def _indexes_first():
    """On PostgreSQL, within the search's transaction: read the search indexes rather
    than every row. The planner prices a prefix or substring lookup in a GIN index above
    a scan of a table of some ten thousand rows, which then costs ten times as long."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('enable_seqscan'), set_config('enable_seqscan', 'off', true)"
        )
        before = cursor.fetchone()[0]
    try:
        yield
    finally:  # inside a caller's transaction, its later queries plan as before
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('enable_seqscan', %s, true)", [before])

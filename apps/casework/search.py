"""One search box over cases, vendors, offers, clauses and evidence.

On PostgreSQL the words are matched by full-text search (the ``simple``
configuration, so names and model numbers match as written) and, for text a
word splitter does not cut (Chinese), by substring too; on SQLite by substring
only. Each kind of record is searched only where the viewer may read it, and
each costs one query whatever the number of records.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from apps.cases.models import ProcurementCase
from apps.contracts.models import ChecklistItem
from apps.evidence.models import EvidenceBundle
from apps.offers.models import Offer
from apps.vendors.models import Vendor

PER_KIND = 20
MAX_QUERY_LENGTH = 200


@dataclass(frozen=True)
class Hit:
    title: str
    detail: str
    url: str


@dataclass(frozen=True)
class Source:
    """One kind of record: who may read it, the fields searched, and how a hit reads."""

    label: object
    permission: str
    queryset: Callable[[], QuerySet]
    fields: tuple[str, ...]
    hit: Callable[[Any, Any], Hit]  # (record, viewer)


def _matching(queryset: QuerySet, fields: tuple[str, ...], words: str) -> QuerySet:
    contains = Q()
    for name in fields:
        contains |= Q(**{f"{name}__icontains": words})
    if connection.vendor != "postgresql":
        return queryset.filter(contains)
    query = SearchQuery(words, config="simple", search_type="websearch")
    vector = SearchVector(*fields, config="simple")
    return queryset.annotate(search_vector=vector).filter(Q(search_vector=query) | contains)


SOURCES = (
    Source(
        _("Cases"),
        "cases.view_procurementcase",
        lambda: ProcurementCase.objects.order_by("-created_at", "-pk"),
        ("name", "requirements"),
        lambda case, _viewer: Hit(
            case.name, case.get_status_display(), reverse("cases:detail", args=[case.pk])
        ),
    ),
    Source(
        _("Vendors"),
        "vendors.view_vendor",
        lambda: Vendor.objects.order_by("name"),
        ("name", "jurisdiction", "regions", "contacts"),
        lambda vendor, _viewer: Hit(
            vendor.name, vendor.jurisdiction, reverse("vendors:detail", args=[vendor.pk])
        ),
    ),
    Source(
        _("Offers"),
        "offers.view_offer",
        lambda: Offer.objects.select_related("vendor", "case").order_by("-created_at", "-pk"),
        ("accelerator_model", "notes", "vendor__name"),
        lambda offer, _viewer: Hit(
            f"{offer.vendor.name}: {offer.accelerator_count}× {offer.accelerator_model}",
            offer.case.name,
            reverse("offers:detail", args=[offer.pk]),
        ),
    ),
    Source(
        _("Contract clauses"),
        "contracts.view_clausechecklist",
        lambda: ChecklistItem.objects.select_related("checklist__offer__vendor").order_by(
            "checklist_id", "number"
        ),
        ("title", "clause_reference", "excerpt", "note"),
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
        lambda: (
            EvidenceBundle.objects.select_related("offer__vendor")
            .defer("summary")
            .order_by("-received_at", "-pk")
        ),
        ("sha256", "bundle_uuid", "host_id", "harness_version"),
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
    for source in SOURCES:
        if not actor.has_perm(source.permission):
            continue
        found = list(_matching(source.queryset(), source.fields, words)[: PER_KIND + 1])
        if found:
            hits = [source.hit(record, actor) for record in found[:PER_KIND]]
            groups.append(Group(source.label, hits, more=len(found) > PER_KIND))
    return groups

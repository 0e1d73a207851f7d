"""Reads of clause checklists: red flags per offer and per case, and the comparison.

``open_red_flags(checklist)`` and ``case_red_flags(case)`` are what the
approval gates call (DESIGN §2.8: no open red flag in the clause checklist).
"""

from dataclasses import dataclass, field

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from apps.cases.reads import shared_read
from apps.contracts import rules
from apps.contracts.models import (
    ChecklistItem,
    ChecklistTemplate,
    ClauseChecklist,
    RedFlagWaiver,
    TemplateItem,
)
from apps.offers.models import Offer
from apps.offers.selectors import offer_get_for, offer_list_for, offers_of_case


def item_state(item: ChecklistItem, waivers: list[RedFlagWaiver]) -> rules.ItemState:
    return rules.ItemState(
        number=item.number,
        key=item.key,
        title=item.title,
        status=item.status,
        required=item.required,
        waivers=tuple(
            rules.WaiverState(w.waived_status, lapsed=w.lapsed_at is not None) for w in waivers
        ),
        item_id=item.pk,
    )


def _items_prefetch() -> Prefetch:
    return Prefetch(
        "items",
        queryset=ChecklistItem.objects.select_related("reviewer")
        .prefetch_related(
            Prefetch("waivers", queryset=RedFlagWaiver.objects.select_related("waived_by"))
        )
        .order_by("number"),
    )


def checklist_states(checklist: ClauseChecklist) -> list[rules.ItemState]:
    return [item_state(item, list(item.waivers.all())) for item in checklist.items.all()]


def open_red_flags(checklist: ClauseChecklist) -> list[rules.RedFlag]:
    """Items that block approval: unwaived red flags, then items never reviewed.

    ``kind`` tells them apart; an empty list means the checklist is clear.
    Uses prefetched items and waivers when present.
    """
    return rules.blocking_items(checklist_states(checklist))


@dataclass
class ItemRow:
    """One item as the pages show it: the record, its verdict and its waivers."""

    item: ChecklistItem
    verdict: rules.Verdict
    waivers: list[RedFlagWaiver]

    @property
    def current_waiver(self) -> RedFlagWaiver | None:
        if self.verdict is not rules.Verdict.WAIVED:
            return None
        return next((w for w in self.waivers if w.lapsed_at is None), None)


@dataclass
class OfferRedFlags:
    """One offer's checklist state; ``blocks_approval`` when absent or not clear."""

    offer: Offer
    checklist: ClauseChecklist | None
    summary: rules.ChecklistSummary | None
    rows: list[ItemRow] = field(default_factory=list)

    @property
    def open(self) -> list[rules.RedFlag]:
        if self.summary is None:
            return []
        return [*self.summary.open_red_flags, *self.summary.not_reviewed]

    @property
    def red_rows(self) -> list[ItemRow]:
        red = (rules.Verdict.RED_FLAG, rules.Verdict.WAIVED)
        return [row for row in self.rows if row.verdict in red]

    @property
    def blocks_approval(self) -> bool:
        return self.summary is None or not self.summary.clear


def offer_red_flags(offer: Offer, checklist: ClauseChecklist | None) -> OfferRedFlags:
    if checklist is None:
        return OfferRedFlags(offer=offer, checklist=None, summary=None)
    rows, states = [], []
    for item in checklist.items.all():
        waivers = list(item.waivers.all())
        state = item_state(item, waivers)
        states.append(state)
        rows.append(ItemRow(item=item, verdict=rules.item_verdict(state), waivers=waivers))
    return OfferRedFlags(
        offer=offer, checklist=checklist, summary=rules.summarise(states), rows=rows
    )


@shared_read
def case_red_flags(case) -> list[OfferRedFlags]:
    """Every offer of the case with its checklist state, in five queries."""
    offers = sorted(offers_of_case(case), key=lambda offer: offer.pk)
    checklists = {
        c.offer_id: c
        for c in ClauseChecklist.objects.filter(offer__case=case)
        .select_related("template")
        .prefetch_related(_items_prefetch())
    }
    return [offer_red_flags(offer, checklists.get(offer.pk)) for offer in offers]


def offer_checklist(offer: Offer) -> OfferRedFlags:
    checklist = (
        ClauseChecklist.objects.filter(offer=offer)
        .select_related("template")
        .prefetch_related(_items_prefetch())
        .first()
    )
    return offer_red_flags(offer, checklist)


def checklist_list_for(actor) -> QuerySet[ClauseChecklist]:
    if not actor.has_perm("contracts.view_clausechecklist"):
        return ClauseChecklist.objects.none()
    return (
        ClauseChecklist.objects.filter(offer__in=offer_list_for(actor))
        .select_related("template", "offer")
        .prefetch_related(_items_prefetch())
        .order_by("pk")
    )


def checklist_get_for(actor, pk: int) -> ClauseChecklist:
    return get_object_or_404(checklist_list_for(actor), pk=pk)


def checklist_item_get_for(actor, pk: int) -> ChecklistItem:
    """An item, only if the actor may see its offer."""
    item = get_object_or_404(
        ChecklistItem.objects.select_related("checklist").prefetch_related("waivers"), pk=pk
    )
    offer_get_for(actor, item.checklist.offer_id)
    return item


def templates_with_items() -> QuerySet[ChecklistTemplate]:
    return ChecklistTemplate.objects.select_related("published_by").prefetch_related(
        Prefetch("items", queryset=TemplateItem.objects.order_by("number"))
    )


def template_latest() -> ChecklistTemplate | None:
    return templates_with_items().order_by("-number").first()


@dataclass
class ComparisonRow:
    number: int
    key: str
    title: str
    cells: list[ItemRow | None]


def case_checklist_comparison(case) -> tuple[list[OfferRedFlags], list[ComparisonRow]]:
    """Rows = clause keys (in template order), columns = the case's offers.

    Offers may hold checklists from different template versions: a key an
    offer's version lacks shows as an empty cell, never as a false "missing".
    """
    offers = case_red_flags(case)
    order: dict[str, tuple[int, str]] = {}
    for entry in offers:
        for row in entry.rows:
            order.setdefault(row.item.key, (row.item.number, row.item.title))
    rows = []
    for key, (number, title) in sorted(order.items(), key=lambda kv: kv[1][0]):
        cells = [next((row for row in entry.rows if row.item.key == key), None) for entry in offers]
        rows.append(ComparisonRow(number=number, key=key, title=title, cells=cells))
    return offers, rows


def case_history_querysets(case) -> list:
    """History of the case's checklists, items and waivers, for the case timeline."""
    return [
        ClauseChecklist.history.filter(offer__case_id=case.pk),
        ChecklistItem.history.filter(checklist__offer__case_id=case.pk),
        RedFlagWaiver.history.filter(item__checklist__offer__case_id=case.pk),
    ]


def offers_checklists(offers) -> list[OfferRedFlags]:
    """The checklist state of each offer given, in four queries whatever their number."""
    checklists = {
        c.offer_id: c
        for c in ClauseChecklist.objects.filter(offer__in=[offer.pk for offer in offers])
        .select_related("template")
        .prefetch_related(_items_prefetch())
    }
    return [offer_red_flags(offer, checklists.get(offer.pk)) for offer in offers]

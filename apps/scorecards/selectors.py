"""Reads for the offer comparison: scores, normalised prices, sensitivity."""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from apps.cases.models import ProcurementCase
from apps.core.reads import shared_read
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_case
from apps.scorecards.models import CriteriaPreset, CriteriaSet, Scorecard
from apps.scorecards.pricing import (
    CapacityCost,
    PriceNormalisation,
    PricingInputError,
    capacity_cost,
    cost_per_gpu_hour,
    normalised_price_ranking,
)
from apps.scorecards.scoring import (
    DEFAULT_CRITERIA,
    Criterion,
    OfferScore,
    SensitivityReport,
    leaders,
    offer_score,
    weight_sensitivity,
)
from apps.sizing.fit import DemandFit
from apps.sizing.selectors import capacity_for_offer, demand_of, demand_result


@dataclass
class OfferComparisonRow:
    offer: Offer
    score: OfferScore
    scorecards: list[Scorecard]
    price: PriceNormalisation | None
    price_problem: str
    price_rank: int | None = None
    price_premium: Decimal | None = None
    fit: DemandFit | None = None  # None: the case has no compute demand
    needed_cost: CapacityCost | None = None
    needed_cost_problem: str = ""

    @property
    def reviewer_breakdowns(self):
        return list(zip(self.scorecards, self.score.reviewers, strict=True))


@dataclass
class CaseComparison:
    criteria_set: CriteriaSet | None
    criteria: tuple[Criterion, ...]
    rows: list[OfferComparisonRow]
    leaders: tuple[Any, ...]
    sensitivity: SensitivityReport
    outdated_scorecards: int

    @property
    def leader_rows(self) -> list[OfferComparisonRow]:
        return [row for row in self.rows if row.offer.pk in self.leaders]


def offer_price(offer: Offer) -> tuple[PriceNormalisation | None, str]:
    """The offer's normalised price, or why it cannot be computed yet."""
    if offer.unit_price is None or not offer.billing_basis or not offer.contract_term_months:
        return None, "price, billing basis or term not stated"
    try:
        return (
            cost_per_gpu_hour(
                unit_price=offer.unit_price,
                billing_basis=offer.billing_basis,
                gpu_count=offer.accelerator_count,
                term_months=offer.contract_term_months,
                prepayment_ratio=offer.prepayment_ratio or Decimal(0),
            ),
            "",
        )
    except PricingInputError as error:
        return None, str(error)


def needed_capacity_cost(
    *, fit: DemandFit | None, price: PriceNormalisation | None, hours, currency: str
) -> tuple[CapacityCost | None, str]:
    """What the capacity the demand needs costs on this offer, or why it cannot be said."""
    if fit is None:
        return None, _("no compute demand saved")
    if price is None:
        return None, _("not priced")
    if fit.gpus_needed == 0:
        return None, _("the demand does not fit on this offer's cards")
    if fit.nodes_needed is None or fit.cards_per_node is None:
        return None, _("cards per node not declared")
    return (
        capacity_cost(
            nodes=fit.nodes_needed,
            cards_per_node=fit.cards_per_node,
            cost_per_gpu_hour=price.effective_cost_per_gpu_hour,
            hours=hours,
            currency=currency,
        ),
        "",
    )


def preset_latest(workload: str) -> CriteriaPreset | None:
    """The newest published preset of a workload kind; None where none was published."""
    return CriteriaPreset.objects.filter(workload=workload).order_by("-number").first()


def default_criteria(case) -> tuple[Criterion, ...]:
    """What a case without a criteria revision is scored against: its workload kind's
    newest preset, else the built-in defaults."""
    preset = preset_latest(case.workload)
    return preset.as_criteria() if preset else DEFAULT_CRITERIA


def presets_by_workload() -> list[tuple[str, str, list[CriteriaPreset]]]:
    """Each workload kind, its label and its published versions, newest first."""
    versions = list(CriteriaPreset.objects.select_related("published_by").order_by("-number"))
    return [
        (key, str(label), [p for p in versions if p.workload == key])
        for key, label in ProcurementCase.Workload.choices
    ]


@shared_read
def case_comparison(case) -> CaseComparison:
    """Every offer of a case side by side, in a fixed number of queries."""
    criteria_set = case.criteria_sets.order_by("-revision").first()
    criteria = criteria_set.as_criteria() if criteria_set else default_criteria(case)
    offers = sorted(offers_of_case(case), key=lambda offer: offer.pk)
    scorecards = (
        Scorecard.objects.filter(offer__case=case)
        .select_related("reviewer")
        .prefetch_related("entries")
        .order_by("reviewer__username")
    )
    by_offer: dict[int, list[Scorecard]] = {offer.pk: [] for offer in offers}
    outdated = 0
    for card in scorecards:
        if criteria_set is None or card.criteria_set_id != criteria_set.pk:
            outdated += 1
            continue
        by_offer[card.offer_id].append(card)

    demand = demand_of(case)
    result, _error = demand_result(demand)
    rows = []
    for offer in offers:
        cards = by_offer[offer.pk]
        price, problem = offer_price(offer)
        fit = capacity_for_offer(
            demand=demand, result=result, offer=offer, spec=getattr(offer, "declared_spec", None)
        )
        needed, needed_problem = needed_capacity_cost(
            fit=fit,
            price=price,
            hours=demand.hours_needed if demand else None,
            currency=offer.currency,
        )
        rows.append(
            OfferComparisonRow(
                offer=offer,
                score=offer_score(criteria, [_scores(card) for card in cards]),
                scorecards=cards,
                price=price,
                price_problem=problem,
                fit=fit,
                needed_cost=needed,
                needed_cost_problem=needed_problem,
            )
        )
    _rank_prices(rows)
    totals = {row.offer.pk: row.score.total for row in rows}
    sensitivity = weight_sensitivity(
        criteria, {row.offer.pk: [_scores(card) for card in row.scorecards] for row in rows}
    )
    return CaseComparison(
        criteria_set=criteria_set,
        criteria=criteria,
        rows=rows,
        leaders=leaders(totals),
        sensitivity=sensitivity,
        outdated_scorecards=outdated,
    )


def not_comparable_reasons(comparison: CaseComparison) -> dict[int, str]:
    """Offers that do not count towards the three-offer minimum, by id, with why.

    An offer counts as compared when it is priced (a normalised price per GPU-hour)
    and at least one reviewer scored it on every criterion of the current set:
    an offer nobody priced or scored in full was listed, not compared.
    """
    keys = {criterion.key for criterion in comparison.criteria}
    reasons: dict[int, str] = {}
    for row in comparison.rows:
        problems = []
        if row.price is None:
            problems.append(_("not priced (%(why)s)") % {"why": row.price_problem})
        scored_in_full = any(
            keys <= {key for key, score in _scores(card).items() if score is not None}
            for card in row.scorecards
        )
        if not scored_in_full:
            problems.append(_("no reviewer scored it on every criterion"))
        if problems:
            reasons[row.offer.pk] = f"{row.offer.vendor}: " + "; ".join(str(p) for p in problems)
    return reasons


def _scores(card: Scorecard) -> dict[str, int | None]:
    return {entry.criterion_key: entry.score for entry in card.entries.all()}


def _rank_prices(rows: list[OfferComparisonRow]) -> None:
    priced = {row.offer.pk: row.price for row in rows if row.price is not None}
    ranking = {r.offer: r for r in normalised_price_ranking(priced)}
    for row in rows:
        ranked = ranking.get(row.offer.pk)
        if ranked is not None:
            row.price_rank = ranked.rank
            row.price_premium = ranked.premium_over_cheapest

"""Reads of a case's budget, imports and periods, and the reconciliation, in fixed queries."""

from dataclasses import dataclass, field

from django.utils import timezone

from apps.approvals.models import Approval
from apps.cases.models import ProcurementCase
from apps.core import formats
from apps.costs.charts import SpendChart, spend_charts
from apps.costs.models import Budget, CostImport, CostPeriod, SpendCharge, ThresholdAlert
from apps.costs.rules import (
    IDLE_SHARE_LIMIT,
    REVIEW_MONTHS,
    BudgetLimits,
    CommittedSpend,
    Crossing,
    DaySpend,
    GuardrailBreach,
    OfferTerms,
    PeriodUsage,
    RateCard,
    Reconciliation,
    UnitCosts,
    committed_spend,
    daily_spend,
    guardrail_breaches,
    reconcile,
    training_guardrail_problems,
    unit_costs,
)
from apps.costs.rules import SpendCharge as RuleCharge  # the model has the same name
from apps.costs.throughput import measured_throughput
from apps.offers.models import Offer


def budget_of(case) -> Budget | None:
    return Budget.objects.filter(case=case).select_related("offer__vendor").first()


def approved_offer(case):
    """The offer of the decision in force, when it approved one (1 query)."""
    approval = (
        Approval.objects.filter(
            case=case, decision=Approval.Decision.APPROVED, superseded_at__isnull=True
        )
        .select_related("offer__vendor")
        .order_by("-decided_at", "-pk")
        .first()
    )
    return approval.offer if approval is not None else None


def current_periods(case) -> list[CostPeriod]:
    """Months in force (not replaced), oldest first."""
    return list(
        CostPeriod.objects.filter(case=case, superseded_at__isnull=True)
        .select_related("cost_import")
        .order_by("period")
    )


def cost_imports_of(case) -> list[CostImport]:
    return list(CostImport.objects.filter(case=case).select_related("imported_by"))


def charges_of(case) -> list[RuleCharge]:
    """The case's daily-spend charges, as the rules read them (1 query)."""
    return [
        RuleCharge(charged_at=moment, amount=amount)
        for moment, amount in SpendCharge.objects.filter(case=case)
        .order_by("charged_at", "pk")
        .values_list("charged_at", "amount")
    ]


def alerts_of(case) -> list[ThresholdAlert]:
    return list(ThresholdAlert.objects.filter(case=case))


def offer_terms(offer) -> OfferTerms | None:
    if offer is None:
        return None
    return OfferTerms(
        billing_basis=offer.billing_basis,
        unit_price=offer.unit_price,
        gpu_count=offer.accelerator_count,
        term_months=offer.contract_term_months,
        prepayment_ratio=offer.prepayment_ratio,
        currency=offer.currency,
    )


def rate_card(budget: Budget, offer) -> RateCard:
    terms = offer_terms(offer) or OfferTerms("", None, None, None, None, budget.currency)
    return RateCard(
        terms=terms,
        gpus_per_instance=budget.gpus_per_instance,
        price_per_million_tokens_in=budget.price_per_million_tokens_in,
        price_per_million_tokens_out=budget.price_per_million_tokens_out,
        storage_per_gib_month=budget.storage_per_gib_month,
        cross_region_per_gib=budget.cross_region_per_gib,
        assumed_tokens_in_per_request=budget.assumed_tokens_in_per_request,
    )


def limits_of(budget: Budget) -> BudgetLimits:
    return BudgetLimits(
        total=budget.total_amount,
        per_month=budget.monthly_amount,
        thresholds=tuple(sorted(budget.thresholds_pct)),
        per_day=budget.daily_amount,
    )


def usage_of(period: CostPeriod) -> PeriodUsage:
    return PeriodUsage(
        period=period.period,
        instance_hours=period.instance_hours,
        gpu_hours=period.gpu_hours,
        tokens_in=period.tokens_in,
        tokens_out=period.tokens_out,
        requests=period.requests,
        storage_gib_months=period.storage_gib_months,
        cross_region_gib=period.cross_region_gib,
        amount=period.amount,
        training_job_hours_max=period.training_job_hours_max,
        training_job_spend_max=period.training_job_spend_max,
    )


RECENT_DAYS_SHOWN = 31


@dataclass
class CostView:
    """Everything the cost page, panel, API and packet show for one case."""

    case: ProcurementCase
    budget: Budget | None
    offer: Offer | None = None
    offer_source: str = ""  # "approved", "picked" or ""
    committed: CommittedSpend | None = None
    reconciliation: Reconciliation | None = None
    periods: list[CostPeriod] = field(default_factory=list)
    imports: list[CostImport] = field(default_factory=list)
    alerts: list[ThresholdAlert] = field(default_factory=list)
    charts: list[SpendChart] = field(default_factory=list)
    guardrail_problems: list[str] = field(default_factory=list)
    currency_mismatch: bool = False
    days: tuple[DaySpend, ...] = ()  # daily spend, oldest first, in settings.TIME_ZONE
    daily_crossings: tuple[Crossing, ...] = ()
    time_zone: str = ""  # where a day starts and ends
    # The guardrails the newest bills broke (each a finding of the register), and the unit
    # costs (only where asked for: they read the chosen offer's load test).
    breaches: list[GuardrailBreach] = field(default_factory=list)
    unit_costs: UnitCosts | None = None

    @property
    def review_months(self) -> int:
        """How many of the newest months billed the guardrails and unit costs read."""
        return REVIEW_MONTHS

    @property
    def idle_limit(self) -> str:
        return formats.percent(IDLE_SHARE_LIMIT)

    @property
    def recent_days(self) -> list[DaySpend]:
        """The latest days with spend, newest first, for the page."""
        return list(reversed(self.days[-RECENT_DAYS_SHOWN:]))

    @property
    def rows(self):
        """(period record, its reconciliation) pairs, oldest first."""
        if self.reconciliation is None:
            return []
        return list(zip(self.periods, self.reconciliation.periods, strict=True))

    @property
    def committed_over_budget(self) -> bool:
        return bool(
            self.budget
            and self.committed
            and self.committed.contract_value is not None
            and self.committed.contract_value > self.budget.total_amount
        )


def cost_view(case, *, with_unit_costs: bool = False) -> CostView:
    """The case's costs, reconciled; 6 queries however many periods, charges and imports.

    ``with_unit_costs`` adds the unit costs, which read the chosen offer's newest load
    test (a few queries more, never more with more months)."""
    budget = budget_of(case)
    periods = current_periods(case)
    imports = cost_imports_of(case)
    alerts = alerts_of(case)
    view = CostView(case=case, budget=budget, periods=periods, imports=imports, alerts=alerts)
    if budget is None:
        return view
    offer = approved_offer(case)
    view.offer_source = "approved" if offer is not None else ""
    if offer is None and budget.offer_id:
        offer, view.offer_source = budget.offer, "picked"
    view.offer = offer
    terms = offer_terms(offer)
    view.committed = committed_spend(terms) if terms else None
    view.currency_mismatch = offer is not None and offer.currency != budget.currency
    limits = limits_of(budget)
    usages = [usage_of(p) for p in periods]
    view.reconciliation = reconcile(usages, rate_card(budget, offer), limits)
    zone = timezone.get_default_timezone()
    view.time_zone = str(zone)
    view.days, view.daily_crossings = daily_spend(charges_of(case), limits, zone)
    view.charts = spend_charts(view.reconciliation, limits)
    view.guardrail_problems = training_guardrail_problems(
        workload=case.workload,
        max_run_hours=budget.training_max_run_hours,
        max_spend=budget.training_max_spend,
    )
    view.breaches = budget_breaches(budget, usages)
    if with_unit_costs:
        throughput = measured_throughput(case, offer)
        view.unit_costs = unit_costs(usages, throughput, currency=budget.currency)
    return view


def budget_breaches(budget: Budget, usages: list[PeriodUsage]) -> list[GuardrailBreach]:
    return guardrail_breaches(
        usages,
        gpus_per_instance=budget.gpus_per_instance,
        max_run_hours=budget.training_max_run_hours,
        max_spend=budget.training_max_spend,
        currency=budget.currency,
    )


@dataclass(frozen=True)
class CaseGuardrails:
    """The guardrails the case's newest bills broke, and the offer the bills are for:
    the approved one, else the one the budget picked (None: the whole case)."""

    offer_id: int | None
    breaches: list[GuardrailBreach]


def case_guardrails(case) -> CaseGuardrails:
    """For the register (docs/rules/findings.md#findings-of-the-areas), in at most 3 queries
    however many months and offers."""
    budget = Budget.objects.filter(case=case).first()
    if budget is None:
        return CaseGuardrails(None, [])
    usages = [usage_of(p) for p in CostPeriod.objects.filter(case=case, superseded_at__isnull=True)]
    if not usages:
        return CaseGuardrails(None, [])
    approved = (
        Approval.objects.filter(
            case=case, decision=Approval.Decision.APPROVED, superseded_at__isnull=True
        )
        .order_by("-decided_at", "-pk")
        .values_list("offer_id", flat=True)
        .first()
    )
    return CaseGuardrails(approved or budget.offer_id, budget_breaches(budget, usages))


def guardrails_of_cases(case_ids) -> dict[int, CaseGuardrails]:
    """``case_guardrails`` of many cases at once, for those with a budget, in 3 queries
    however many cases, months and offers (cases without a budget are left out)."""
    ids = list(case_ids)
    budgets = {budget.case_id: budget for budget in Budget.objects.filter(case_id__in=ids)}
    if not budgets:
        return {}
    usages: dict[int, list[PeriodUsage]] = {}
    for period in CostPeriod.objects.filter(case_id__in=list(budgets), superseded_at__isnull=True):
        usages.setdefault(period.case_id, []).append(usage_of(period))
    approved: dict[int, int | None] = {}
    for case_id, offer_id in (
        Approval.objects.filter(
            case_id__in=list(usages),
            decision=Approval.Decision.APPROVED,
            superseded_at__isnull=True,
        )
        .order_by("-decided_at", "-pk")
        .values_list("case_id", "offer_id")
    ):
        approved.setdefault(case_id, offer_id)
    found = {}
    for case_id, budget in budgets.items():
        mine = usages.get(case_id)
        if not mine:
            found[case_id] = CaseGuardrails(None, [])
            continue
        found[case_id] = CaseGuardrails(
            approved.get(case_id) or budget.offer_id, budget_breaches(budget, mine)
        )
    return found


def cost_history_querysets(case) -> list:
    """History of the case's budget, imports, periods and alerts."""
    return [
        Budget.history.filter(case_id=case.pk),
        CostImport.history.filter(case_id=case.pk),
        CostPeriod.history.filter(case_id=case.pk),
        SpendCharge.history.filter(case_id=case.pk),
        ThresholdAlert.history.filter(case_id=case.pk),
    ]

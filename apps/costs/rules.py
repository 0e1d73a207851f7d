"""Cost guardrails as pure functions on plain data (docs/rules/costs.md).

Recompute the bill as "actual tokens × unit price + instance
time" and line it up with the vendor's; differences come mainly from idle
instances and repeated generation. Budget thresholds at
70 / 90 / 100 %, cross-region traffic and object storage billed separately so
that hidden costs do not pile up. The usual causes of a
growing bill: idle instances left running, very long contexts, no per-caller
quota.

Units: money is ``Decimal`` in the budget's currency; hours are instance-hours
(one instance = ``gpus_per_instance`` GPUs) or GPU-hours as named; storage in
GiB-months; traffic in GiB; tokens are counts.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

from django.utils.translation import gettext as _

from apps.core import formats
from apps.scorecards.pricing import (
    SECONDS_PER_HOUR,
    BillingBasis,
    PricingInputError,
    cost_per_gpu_hour,
)

# The guardrails checked against the bills (docs/rules/costs.md#guardrails-against-the-bills)
# raise these findings of the register (docs/rules/findings.md#findings-of-the-areas).
IDLE_FINDING = "costs.idle_over_limit"
TRAINING_CAP_FINDING = "costs.training_cap_exceeded"
REGISTER_FINDINGS: tuple[str, ...] = (IDLE_FINDING, TRAINING_CAP_FINDING)

DEFAULT_THRESHOLDS_PCT = (70, 90, 100)
MILLION = Decimal(1_000_000)
# Idle share of the billed GPU-hours above which idle instances are named a
# cause (docs/rules/costs.md: idle capacity should be reclaimed automatically).
IDLE_SHARE_LIMIT = Decimal("0.30")
# Average input tokens per request this many times the sizing's assumption
# names long contexts as a cause.
LONG_CONTEXT_FACTOR = Decimal("1.5")
# Cross-region traffic at or above this share of the bill is named a cause
# even when the rate card prices it: it is the hidden cost docs/rules/costs.md names.
TRAFFIC_SHARE_LIMIT = Decimal("0.05")
# A bill within this share of the expected cost (or one currency unit) agrees.
PRICE_TOLERANCE_SHARE = Decimal("0.01")
PRICE_TOLERANCE_ABSOLUTE = Decimal("1")

# The guardrails and the unit costs read the newest months billed: a renewal asks how the
# capacity is used now; older months stay in the reconciliation with their named causes.
REVIEW_MONTHS = 3
SECONDS_PER_DAY = 86400

CENT = Decimal("0.01")


def money(value: Decimal) -> Decimal:
    """Rounded half up to the cent, as on an invoice."""
    return value.quantize(CENT, ROUND_HALF_UP)


# Thresholds ------------------------------------------------------------------


def thresholds_valid(thresholds: Sequence[int]) -> list[str]:
    """Problems with a list of alert thresholds (percent of a budget); [] when fine."""
    problems = []
    if not thresholds:
        problems.append(_("Give at least one threshold."))
    for value in thresholds:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 200:
            problems.append(
                _("%(value)s is not a whole percentage from 1 to 200.") % {"value": repr(value)}
            )
    if len(set(thresholds)) != len(thresholds):
        problems.append(_("Each threshold may appear once."))
    return problems


def crossed_thresholds(*, spent: Decimal, limit: Decimal | None, thresholds: Iterable[int]):
    """Thresholds (percent of ``limit``) that ``spent`` has reached; exactly 90 % crosses 90.

    Compared as spent × 100 ≥ limit × threshold, so no rounding decides it.
    """
    if limit is None or limit <= 0:
        return []
    return sorted(t for t in thresholds if spent * 100 >= limit * t)


def share_of(spent: Decimal, limit: Decimal | None) -> Decimal | None:
    if limit is None or limit <= 0:
        return None
    return spent / limit


# Committed spend ---------------------------------------------------------------


@dataclass(frozen=True)
class OfferTerms:
    """What the chosen offer says about price (docs/rules/offers.md#declared-spec)."""

    billing_basis: str
    unit_price: Decimal | None
    gpu_count: int | None
    term_months: int | None
    prepayment_ratio: Decimal | None
    currency: str = "USD"


@dataclass(frozen=True)
class CommittedSpend:
    contract_value: Decimal | None
    prepayment: Decimal | None
    prepayment_financing: Decimal | None
    per_month: Decimal | None
    effective_cost_per_gpu_hour: Decimal | None
    explanation: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def _term_names():
    return (
        ("billing_basis", _("billing basis")),
        ("unit_price", _("unit price")),
        ("gpu_count", _("accelerator count")),
        ("term_months", _("contract term")),
        ("prepayment_ratio", _("prepayment ratio")),
    )


def committed_spend(terms: OfferTerms) -> CommittedSpend:
    """The spend a contract commits to: the scorecard's price normalisation over the term.

    Every basis is capacity held for the whole term (apps.scorecards.pricing):
    GPUs × months × 730 h at the list rate, or the reservation's price.
    """
    missing = tuple(label for name, label in _term_names() if getattr(terms, name) in (None, ""))
    if missing:
        return CommittedSpend(None, None, None, None, None, missing=missing)
    # The missing check above returned when any of these was absent.
    assert terms.unit_price is not None and terms.gpu_count is not None
    assert terms.term_months is not None and terms.prepayment_ratio is not None
    try:
        normalised = cost_per_gpu_hour(
            unit_price=terms.unit_price,
            billing_basis=terms.billing_basis,
            gpu_count=terms.gpu_count,
            term_months=terms.term_months,
            prepayment_ratio=terms.prepayment_ratio,
        )
    except PricingInputError as error:
        return CommittedSpend(None, None, None, None, None, missing=(str(error),))
    return CommittedSpend(
        contract_value=normalised.total_contract_value,
        prepayment=normalised.prepayment_amount,
        prepayment_financing=normalised.prepayment_financing_cost,
        per_month=normalised.total_contract_value / terms.term_months,
        effective_cost_per_gpu_hour=normalised.effective_cost_per_gpu_hour,
        explanation=normalised.explanation,
    )


# Expected cost of one period ---------------------------------------------------


@dataclass(frozen=True)
class RateCard:
    """The contract's rates: the offer's billing terms plus what it bills separately."""

    terms: OfferTerms
    gpus_per_instance: int = 1
    price_per_million_tokens_in: Decimal | None = None
    price_per_million_tokens_out: Decimal | None = None
    storage_per_gib_month: Decimal | None = None
    cross_region_per_gib: Decimal | None = None
    assumed_tokens_in_per_request: int | None = None


@dataclass(frozen=True)
class PeriodUsage:
    """One month of usage and the vendor's bill for it, as imported."""

    period: date  # first day of the month
    instance_hours: Decimal
    gpu_hours: Decimal  # GPU-hours doing work, from monitoring
    tokens_in: int
    tokens_out: int
    storage_gib_months: Decimal
    cross_region_gib: Decimal
    amount: Decimal  # billed by the vendor
    requests: int | None = None
    # From the vendor's list of training jobs billed in the month (optional columns):
    # the longest job's run time and the costliest job's charge.
    training_job_hours_max: Decimal | None = None
    training_job_spend_max: Decimal | None = None


@dataclass(frozen=True)
class ExpectedCost:
    tokens_in: Decimal
    tokens_out: Decimal
    instances: Decimal | None  # None: the offer lacks the terms to price it
    storage: Decimal
    traffic: Decimal
    total: Decimal | None
    lines: tuple[str, ...]


def rate_per_gpu_hour(terms: OfferTerms) -> Decimal | None:
    """The hourly rate of a metered offer; None for monthly and reserved bases."""
    if terms.unit_price is None:
        return None
    if terms.billing_basis == BillingBasis.PER_SECOND.value:
        return terms.unit_price * SECONDS_PER_HOUR
    if terms.billing_basis == BillingBasis.PER_HOUR.value:
        return terms.unit_price
    return None


def _instance_cost(usage: PeriodUsage, card: RateCard) -> tuple[Decimal | None, str]:
    terms = card.terms
    basis = terms.billing_basis
    rate = rate_per_gpu_hour(terms)
    if rate is not None:
        gpu_hours = usage.instance_hours * card.gpus_per_instance
        return (
            gpu_hours * rate,
            _(
                "Instances: %(hours)s instance-hours × %(gpus)s GPUs × %(rate)s per GPU-hour "
                "= %(cost)s"
            )
            % {
                "hours": _plain(usage.instance_hours),
                "gpus": card.gpus_per_instance,
                "rate": _plain(rate),
                "cost": money(gpu_hours * rate),
            },
        )
    if basis == BillingBasis.PER_MONTH.value and terms.unit_price is not None and terms.gpu_count:
        # Monthly capacity is billed whether used or not: the hours do not change it.
        cost = terms.unit_price * terms.gpu_count
        return (
            cost,
            _("Instances: %(gpus)s GPUs × %(price)s per GPU-month = %(cost)s")
            % {"gpus": terms.gpu_count, "price": _plain(terms.unit_price), "cost": money(cost)},
        )
    if basis == BillingBasis.RESERVED.value and terms.unit_price is not None and terms.term_months:
        cost = terms.unit_price / terms.term_months
        return (
            cost,
            _("Instances: reservation %(price)s ÷ %(months)s months = %(cost)s")
            % {
                "price": money(terms.unit_price),
                "months": terms.term_months,
                "cost": money(cost),
            },
        )
    return None, _("Instances: the offer's billing basis and unit price are needed to price them")


def expected_cost(usage: PeriodUsage, card: RateCard) -> ExpectedCost:
    """Tokens × unit price + instance time × rate + storage + traffic (docs/rules/costs.md)."""
    lines = []
    tokens_in = tokens_out = Decimal(0)
    if card.price_per_million_tokens_in is not None:
        tokens_in = usage.tokens_in * card.price_per_million_tokens_in / MILLION
        lines.append(
            _("Tokens in: %(tokens)s × %(price)s per million = %(cost)s")
            % {
                "tokens": f"{usage.tokens_in:,}",
                "price": _plain(card.price_per_million_tokens_in),
                "cost": money(tokens_in),
            }
        )
    if card.price_per_million_tokens_out is not None:
        tokens_out = usage.tokens_out * card.price_per_million_tokens_out / MILLION
        lines.append(
            _("Tokens out: %(tokens)s × %(price)s per million = %(cost)s")
            % {
                "tokens": f"{usage.tokens_out:,}",
                "price": _plain(card.price_per_million_tokens_out),
                "cost": money(tokens_out),
            }
        )
    instances, line = _instance_cost(usage, card)
    lines.append(line)
    storage = traffic = Decimal(0)
    if card.storage_per_gib_month is not None:
        storage = usage.storage_gib_months * card.storage_per_gib_month
        lines.append(
            _("Storage: %(size)s GiB-months × %(price)s = %(cost)s")
            % {
                "size": _plain(usage.storage_gib_months),
                "price": _plain(card.storage_per_gib_month),
                "cost": money(storage),
            }
        )
    if card.cross_region_per_gib is not None:
        traffic = usage.cross_region_gib * card.cross_region_per_gib
        lines.append(
            _("Cross-region traffic: %(size)s GiB × %(price)s = %(cost)s")
            % {
                "size": _plain(usage.cross_region_gib),
                "price": _plain(card.cross_region_per_gib),
                "cost": money(traffic),
            }
        )
    total = None if instances is None else tokens_in + tokens_out + instances + storage + traffic
    return ExpectedCost(tokens_in, tokens_out, instances, storage, traffic, total, tuple(lines))


# Likely causes -----------------------------------------------------------------


@dataclass(frozen=True)
class Cause:
    key: str  # idle_instances, long_contexts, cross_region_traffic, price_differs
    detail: str
    amount: Decimal | None = None  # money it accounts for, when it can be priced


def idle_share(usage: PeriodUsage, gpus_per_instance: int) -> Decimal | None:
    """The share of the billed GPU-hours the GPUs were idle; None without billed hours."""
    billed_gpu_hours = usage.instance_hours * gpus_per_instance
    if billed_gpu_hours <= 0:
        return None
    return (billed_gpu_hours - usage.gpu_hours) / billed_gpu_hours


def idle_over_limit(share: Decimal | None) -> bool:
    """At or above the limit, idle capacity is a cause and a breach of the guardrail."""
    return share is not None and share >= IDLE_SHARE_LIMIT


def idle_instances(usage: PeriodUsage, card: RateCard, expected: ExpectedCost) -> Cause | None:
    """Billed GPU-hours well above those the GPUs were busy (docs/rules/costs.md: reclaim idle)."""
    share = idle_share(usage, card.gpus_per_instance)
    if share is None or not idle_over_limit(share):
        return None
    billed_gpu_hours = usage.instance_hours * card.gpus_per_instance
    amount = None
    if expected.instances is not None:
        amount = expected.instances * share
    detail = _(
        "%(instance_hours)s instance-hours billed (%(billed)s GPU-hours) for %(worked)s "
        "GPU-hours of work: %(share)s idle (limit %(limit)s)."
    ) % {
        "instance_hours": _plain(usage.instance_hours),
        "billed": _plain(billed_gpu_hours),
        "worked": _plain(usage.gpu_hours),
        "share": _percent(share),
        "limit": _percent(IDLE_SHARE_LIMIT),
    }
    return Cause("idle_instances", detail, amount)


def long_contexts(usage: PeriodUsage, card: RateCard) -> Cause | None:
    """Input tokens per request far above what the sizing assumed (docs/rules/costs.md)."""
    assumed = card.assumed_tokens_in_per_request
    if not usage.requests or not assumed:
        return None
    average = Decimal(usage.tokens_in) / usage.requests
    if average <= assumed * LONG_CONTEXT_FACTOR:
        return None
    amount = None
    if card.price_per_million_tokens_in is not None:
        excess_tokens = usage.tokens_in - assumed * usage.requests
        amount = excess_tokens * card.price_per_million_tokens_in / MILLION
    detail = _(
        "%(average)s input tokens per request on average over %(requests)s requests, "
        "against %(assumed)s assumed."
    ) % {
        "average": f"{average.quantize(Decimal(1), ROUND_HALF_UP):,f}",
        "requests": f"{usage.requests:,}",
        "assumed": f"{assumed:,}",
    }
    return Cause("long_contexts", detail, amount)


def cross_region_traffic(
    usage: PeriodUsage, card: RateCard, expected: ExpectedCost
) -> Cause | None:
    """Traffic charges the rate card does not price, or that weigh on the bill
    (docs/rules/costs.md)."""
    if usage.cross_region_gib <= 0:
        return None
    if card.cross_region_per_gib is None:
        detail = _(
            "%(gib)s GiB crossed regions, and the rate card has no cross-region rate: "
            "ask the vendor how it is billed."
        ) % {"gib": _plain(usage.cross_region_gib)}
        return Cause("cross_region_traffic", detail)
    if usage.amount > 0 and expected.traffic / usage.amount >= TRAFFIC_SHARE_LIMIT:
        detail = _("%(gib)s GiB of cross-region traffic cost %(cost)s, %(share)s of the bill.") % {
            "gib": _plain(usage.cross_region_gib),
            "cost": money(expected.traffic),
            "share": _percent(expected.traffic / usage.amount),
        }
        return Cause("cross_region_traffic", detail, expected.traffic)
    return None


def price_differs(usage: PeriodUsage, card: RateCard, expected: ExpectedCost) -> Cause | None:
    """The bill differs from the contract's rates beyond the tolerance."""
    if expected.total is None:
        return None
    difference = usage.amount - expected.total
    tolerance = max(expected.total * PRICE_TOLERANCE_SHARE, PRICE_TOLERANCE_ABSOLUTE)
    if abs(difference) <= tolerance:
        return None
    detail = _("Billed %(billed)s against %(expected)s expected.") % {
        "billed": money(usage.amount),
        "expected": money(expected.total),
    }
    rate = rate_per_gpu_hour(card.terms)
    billed_gpu_hours = usage.instance_hours * card.gpus_per_instance
    if rate is not None and billed_gpu_hours > 0:
        assert expected.instances is not None  # a total is priced only with the instances
        other = expected.total - expected.instances
        implied = (usage.amount - other) / billed_gpu_hours
        detail += " " + _(
            "The bill implies %(implied)s per GPU-hour; the contract says %(rate)s."
        ) % {
            "implied": f"{implied.quantize(Decimal('0.0001'), ROUND_HALF_UP):,f}",
            "rate": _plain(rate),
        }
    return Cause("price_differs", detail, difference)


# Reconciliation over periods ---------------------------------------------------


@dataclass(frozen=True)
class PeriodReconciliation:
    usage: PeriodUsage
    expected: ExpectedCost
    difference: Decimal | None  # billed − expected
    causes: tuple[Cause, ...]
    cumulative: Decimal  # billed, this period and all before
    month_share: Decimal | None  # billed ÷ monthly budget
    cumulative_share: Decimal | None  # cumulative ÷ total budget
    month_crossed: tuple[int, ...]
    cumulative_crossed: tuple[int, ...]


@dataclass(frozen=True)
class BudgetLimits:
    total: Decimal | None
    per_month: Decimal | None
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS_PCT
    per_day: Decimal | None = None


@dataclass(frozen=True)
class Crossing:
    """A threshold reached: of the monthly budget in ``period``, or of the total budget."""

    scope: str  # "day", "month" or "total"
    period: date
    threshold: int
    spent: Decimal
    limit: Decimal


@dataclass(frozen=True)
class Reconciliation:
    periods: tuple[PeriodReconciliation, ...]
    billed_total: Decimal
    expected_total: Decimal | None
    crossings: tuple[Crossing, ...]
    problems: tuple[str, ...] = field(default=())


def period_causes(usage: PeriodUsage, card: RateCard, expected: ExpectedCost) -> tuple:
    found = (
        idle_instances(usage, card, expected),
        long_contexts(usage, card),
        cross_region_traffic(usage, card, expected),
        price_differs(usage, card, expected),
    )
    return tuple(cause for cause in found if cause is not None)


def reconcile(
    usages: Sequence[PeriodUsage], card: RateCard, limits: BudgetLimits
) -> Reconciliation:
    """Every period against the contract and the budget, oldest first, with each crossing."""
    ordered = sorted(usages, key=lambda u: u.period)
    rows, crossings = [], []
    cumulative = Decimal(0)
    expected_sum: Decimal | None = Decimal(0)
    total_seen: set[int] = set()
    for usage in ordered:
        expected = expected_cost(usage, card)
        cumulative += usage.amount
        if expected.total is None or expected_sum is None:
            expected_sum = None
        else:
            expected_sum += expected.total
        month_crossed = crossed_thresholds(
            spent=usage.amount, limit=limits.per_month, thresholds=limits.thresholds
        )
        cumulative_crossed = crossed_thresholds(
            spent=cumulative, limit=limits.total, thresholds=limits.thresholds
        )
        # Without a limit nothing is crossed.
        if limits.per_month is not None:
            crossings += [
                Crossing("month", usage.period, t, usage.amount, limits.per_month)
                for t in month_crossed
            ]
        if limits.total is not None:
            crossings += [
                Crossing("total", usage.period, t, cumulative, limits.total)
                for t in cumulative_crossed
                if t not in total_seen
            ]
        total_seen.update(cumulative_crossed)
        rows.append(
            PeriodReconciliation(
                usage=usage,
                expected=expected,
                difference=None if expected.total is None else usage.amount - expected.total,
                causes=period_causes(usage, card, expected),
                cumulative=cumulative,
                month_share=share_of(usage.amount, limits.per_month),
                cumulative_share=share_of(cumulative, limits.total),
                month_crossed=tuple(month_crossed),
                cumulative_crossed=tuple(cumulative_crossed),
            )
        )
    return Reconciliation(
        periods=tuple(rows),
        billed_total=cumulative,
        expected_total=expected_sum if ordered else None,
        crossings=tuple(crossings),
    )


# Daily budget ------------------------------------------------------------------


@dataclass(frozen=True)
class SpendCharge:
    """One charge from the vendor's usage export, at the instant it was incurred."""

    charged_at: datetime  # aware
    amount: Decimal


@dataclass(frozen=True)
class DaySpend:
    day: date
    spent: Decimal
    share: Decimal | None  # spent ÷ daily budget
    crossed: tuple[int, ...]

    @property
    def percent(self) -> Decimal | None:
        """The share in percent to one decimal, rounded down: 69.999 % shows as 69.9 %, never
        as a 70 % that was not reached."""
        if self.share is None:
            return None
        return (self.share * 100).quantize(Decimal("0.1"), ROUND_DOWN)


def local_day(moment: datetime, zone: tzinfo) -> date:
    """The calendar day ``moment`` falls on in ``zone`` (midnight starts the new day)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("a charge's time must carry its offset from UTC")
    return moment.astimezone(zone).date()


def daily_spend(
    charges: Iterable[SpendCharge], limits: BudgetLimits, zone: tzinfo
) -> tuple[tuple[DaySpend, ...], tuple[Crossing, ...]]:
    """Each day's spend against the daily budget, oldest first, and each threshold it crossed.

    docs/rules/costs.md: daily and monthly budgets, each with 70 / 90 / 100 % alerts. Every
    day is judged on its own spend only (nothing carries over from the day before), and
    the monthly and total budgets are judged from the monthly bills, apart from it.
    """
    totals: dict[date, Decimal] = {}
    for charge in charges:
        day = local_day(charge.charged_at, zone)
        totals[day] = totals.get(day, Decimal(0)) + charge.amount
    days, crossings = [], []
    for day in sorted(totals):
        spent = totals[day]
        crossed = crossed_thresholds(
            spent=spent, limit=limits.per_day, thresholds=limits.thresholds
        )
        days.append(DaySpend(day, spent, share_of(spent, limits.per_day), tuple(crossed)))
        if limits.per_day is not None:
            crossings += [Crossing("day", day, t, spent, limits.per_day) for t in crossed]
    return tuple(days), tuple(crossings)


# Training guardrails -----------------------------------------------------------


def training_guardrail_problems(
    *, workload: str, max_run_hours: Decimal | None, max_spend: Decimal | None
) -> list[str]:
    """docs/rules/costs.md: every training job is bound to a maximum run time and spend."""
    if workload not in ("training", "fine_tuning"):
        return []
    problems = []
    if max_run_hours is None:
        problems.append(_("No maximum run time for training jobs."))
    if max_spend is None:
        problems.append(_("No maximum spend for training jobs."))
    return problems


# Guardrails against the bills ------------------------------------------------------


@dataclass(frozen=True)
class GuardrailBreach:
    """A guardrail the bills broke: a finding of the register
    (docs/rules/costs.md#guardrails-against-the-bills)."""

    code: str
    key: str  # which guardrail: "idle", or the training cap's budget field
    message: str
    facts: str  # the values it rests on, stable: an acceptance lapses when they change
    periods: tuple[date, ...]


def review_window(usages: Iterable[PeriodUsage]) -> list[PeriodUsage]:
    """The newest months billed that the guardrails and unit costs read, oldest first."""
    return sorted(usages, key=lambda u: u.period)[-REVIEW_MONTHS:]


def idle_breach(usages: Iterable[PeriodUsage], gpus_per_instance: int) -> GuardrailBreach | None:
    """Idle capacity not reclaimed: a month of the window with at least the limit of its
    billed GPU-hours idle."""
    over = []
    for usage in review_window(usages):
        share = idle_share(usage, gpus_per_instance)
        if share is not None and idle_over_limit(share):
            over.append((usage.period, share))
    if not over:
        return None
    message = _(
        "Idle GPUs are not reclaimed: %(months)s of the billed GPU-hours were idle, at or "
        "above the limit of %(limit)s."
    ) % {
        "months": "; ".join(f"{period:%Y-%m}: {_percent(share)}" for period, share in over),
        "limit": formats.percent(IDLE_SHARE_LIMIT),
    }
    facts = "; ".join(
        [f"limit={IDLE_SHARE_LIMIT}"]
        + [
            f"{period:%Y-%m}={share.quantize(Decimal('0.001'), ROUND_HALF_UP)}"
            for period, share in over
        ]
    )
    return GuardrailBreach(IDLE_FINDING, "idle", message, facts, tuple(p for p, _s in over))


def training_cap_breaches(
    usages: Iterable[PeriodUsage],
    *,
    max_run_hours: Decimal | None,
    max_spend: Decimal | None,
    currency: str,
) -> list[GuardrailBreach]:
    """Each training cap a month of the window broke: the longest training job billed ran
    longer than the run-time cap, or the costliest cost more than the spend cap. A cap
    not stated, or a month that does not list its training jobs, breaks nothing."""
    window = review_window(usages)
    found = []
    caps = (
        ("training_max_run_hours", max_run_hours, "training_job_hours_max"),
        ("training_max_spend", max_spend, "training_job_spend_max"),
    )
    for key, cap, column in caps:
        if cap is None:
            continue
        over = [
            (usage.period, value)
            for usage in window
            if (value := getattr(usage, column)) is not None and value > cap
        ]
        if not over:
            continue
        if key == "training_max_run_hours":
            message = _(
                "A training job ran longer than the cap of %(cap)s h: the longest billed ran "
                "%(months)s."
            ) % {
                "cap": _plain(cap),
                "months": "; ".join(f"{p:%Y-%m}: {_plain(v)} h" for p, v in over),
            }
        else:
            message = _(
                "A training job cost more than the cap of %(cap)s: the costliest billed cost "
                "%(months)s."
            ) % {
                "cap": formats.money(cap, currency),
                "months": "; ".join(f"{p:%Y-%m}: {formats.money(v, currency)}" for p, v in over),
            }
        facts = "; ".join([f"{key}={cap}"] + [f"{p:%Y-%m}={v}" for p, v in over])
        found.append(
            GuardrailBreach(TRAINING_CAP_FINDING, key, message, facts, tuple(p for p, _v in over))
        )
    return found


def guardrail_breaches(
    usages: Sequence[PeriodUsage],
    *,
    gpus_per_instance: int,
    max_run_hours: Decimal | None,
    max_spend: Decimal | None,
    currency: str,
) -> list[GuardrailBreach]:
    """Every guardrail the newest bills broke (docs/rules/costs.md#guardrails-against-the-bills)."""
    idle = idle_breach(usages, gpus_per_instance)
    training = training_cap_breaches(
        usages, max_run_hours=max_run_hours, max_spend=max_spend, currency=currency
    )
    return ([idle] if idle is not None else []) + training


# Unit costs -------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredThroughput:
    """What the offer's newest load test served at its safe level (the highest concurrency
    at which every service level of the case holds), or, where the offer's evidence holds an
    open-loop rate search, its goodput at the highest request rate within the service levels
    (``rate_rps``; docs/rules/costs.md#unit-costs)."""

    concurrency: int | None  # None: no level holds the service levels (or a rate search)
    requests_per_s: Decimal | None
    output_tokens_per_s: Decimal | None
    source: str = ""  # the load test it was read from, in words
    rate_rps: Decimal | None = None  # the rate search's highest rate within the SLOs


@dataclass(frozen=True)
class UnitCost:
    """One unit cost, or why it cannot be computed (never a zero standing in for it)."""

    key: str  # per_request, per_million_tokens, per_request_served, per_million_tokens_served
    value: Decimal | None
    working: str  # the formula with its numbers, or why it is not computable
    shown: str = ""  # the value with its currency, to the places a unit cost needs

    @property
    def computable(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class UnitCosts:
    """The unit costs of the newest months billed (docs/rules/costs.md#unit-costs)."""

    first: date | None
    last: date | None
    spend: Decimal | None
    seconds: int
    throughput: MeasuredThroughput | None
    costs: tuple[UnitCost, ...]

    def get(self, key: str) -> UnitCost:
        return next(cost for cost in self.costs if cost.key == key)


# Places a unit cost is shown to: a request costs fractions of a cent.
UNIT_COST_PLACES = {"per_request": 6, "per_million": 4}
UNIT_COST_KEYS = (
    "per_request",
    "per_million_tokens",
    "per_request_served",
    "per_million_tokens_served",
)


def month_seconds(period: date) -> int:
    return calendar.monthrange(period.year, period.month)[1] * SECONDS_PER_DAY


def unit_costs(
    usages: Sequence[PeriodUsage], throughput: MeasuredThroughput | None, *, currency: str
) -> UnitCosts:
    """Cost per request and per million output tokens of the newest months billed.

    At the safe level: the bills ÷ (what the load test served per second at its safe level
    × the seconds of those months), the cost of a request were the capacity billed kept
    busy at that level. As served: the bills ÷ the requests or output tokens they count.
    """
    window = review_window(usages)
    if not window:
        missing = _("Not computable: no month is billed yet.")
        return UnitCosts(
            None,
            None,
            None,
            0,
            throughput,
            tuple(UnitCost(key, None, missing) for key in UNIT_COST_KEYS),
        )
    spend = sum((u.amount for u in window), Decimal(0))
    seconds = sum(month_seconds(u.period) for u in window)
    billed = formats.money(spend, currency)
    safe = [
        _at_safe_level(
            "per_request",
            spend,
            seconds,
            throughput,
            "requests_per_s",
            per=Decimal(1),
            words=(billed, _("requests/s"), _("per request")),
            currency=currency,
        ),
        _at_safe_level(
            "per_million_tokens",
            spend,
            seconds,
            throughput,
            "output_tokens_per_s",
            per=MILLION,
            words=(billed, _("output tokens/s"), _("per million output tokens")),
            currency=currency,
        ),
    ]
    served = [_served_per_request(window, spend, billed, currency)]
    tokens_out = sum(u.tokens_out for u in window)
    if tokens_out <= 0:
        served.append(
            UnitCost(
                "per_million_tokens_served",
                None,
                _("Not computable: the bills count no output tokens."),
            )
        )
    else:
        value = spend * MILLION / tokens_out
        shown = formats.money(value, currency, UNIT_COST_PLACES["per_million"])
        served.append(
            UnitCost(
                "per_million_tokens_served",
                value,
                _("%(billed)s ÷ %(tokens)s output tokens × 1,000,000 = %(value)s")
                % {"billed": billed, "tokens": formats.number(tokens_out), "value": shown},
                shown,
            )
        )
    return UnitCosts(
        window[0].period, window[-1].period, spend, seconds, throughput, (*safe, *served)
    )


def _at_safe_level(
    key: str,
    spend: Decimal,
    seconds: int,
    throughput: MeasuredThroughput | None,
    rate_name: str,
    *,
    per: Decimal,
    words: tuple[str, str, str],
    currency: str,
) -> UnitCost:
    billed, unit, per_words = words
    if throughput is None:
        return UnitCost(key, None, _("Not computable: the chosen offer has no load test."))
    if throughput.concurrency is None and throughput.rate_rps is None:
        return UnitCost(
            key,
            None,
            _(
                "Not computable: no concurrency level of the offer's newest load test holds "
                "the case's service levels."
            ),
        )
    rate = getattr(throughput, rate_name)
    if rate is None or rate <= 0:
        return UnitCost(
            key,
            None,
            _("Not computable: the load test records no %(unit)s at its safe level.")
            % {"unit": unit},
        )
    value = spend * per / (rate * seconds)
    places = UNIT_COST_PLACES["per_request" if per == 1 else "per_million"]
    if throughput.rate_rps is not None:
        working = _(
            "%(billed)s ÷ (%(rate)s %(unit)s of goodput at %(arrivals)s requests/s, the highest "
            "rate of the open-loop rate search within the service levels, × %(seconds)s s)"
            "%(scale)s = %(value)s %(per)s"
        ) % {
            "billed": billed,
            "rate": formats.number(rate, -2),
            "unit": unit,
            "arrivals": formats.number(throughput.rate_rps, -2),
            "seconds": formats.number(seconds),
            "scale": "" if per == 1 else " × 1,000,000",
            "value": formats.money(value, currency, places),
            "per": per_words,
        }
        return UnitCost(key, value, working, formats.money(value, currency, places))
    working = _(
        "%(billed)s ÷ (%(rate)s %(unit)s at the safe level of %(level)s concurrent requests × "
        "%(seconds)s s)%(scale)s = %(value)s %(per)s"
    ) % {
        "billed": billed,
        "rate": formats.number(rate, -2),
        "unit": unit,
        "level": throughput.concurrency,
        "seconds": formats.number(seconds),
        "scale": "" if per == 1 else " × 1,000,000",
        "value": formats.money(value, currency, places),
        "per": per_words,
    }
    return UnitCost(key, value, working, formats.money(value, currency, places))


def _served_per_request(
    window: Sequence[PeriodUsage], spend: Decimal, billed: str, currency: str
) -> UnitCost:
    key = "per_request_served"
    if any(u.requests is None for u in window):
        return UnitCost(
            key, None, _("Not computable: a month of the bills does not count its requests.")
        )
    requests = sum(u.requests or 0 for u in window)
    if requests <= 0:
        return UnitCost(key, None, _("Not computable: the bills count no requests."))
    value = spend / requests
    shown = formats.money(value, currency, UNIT_COST_PLACES["per_request"])
    return UnitCost(
        key,
        value,
        _("%(billed)s ÷ %(requests)s requests = %(value)s")
        % {"billed": billed, "requests": formats.number(requests), "value": shown},
        shown,
    )


def _plain(value: Decimal) -> str:
    return formats.number(value)


def _percent(value: Decimal) -> str:
    return formats.percent(value, 1)

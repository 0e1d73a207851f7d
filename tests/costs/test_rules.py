"""Each cost rule on plain data, table-driven (docs/rules/costs.md)."""

from datetime import date
from decimal import Decimal as D

import pytest

from apps.costs.rules import (
    BudgetLimits,
    OfferTerms,
    PeriodUsage,
    RateCard,
    committed_spend,
    cross_region_traffic,
    crossed_thresholds,
    expected_cost,
    idle_instances,
    long_contexts,
    price_differs,
    reconcile,
    thresholds_valid,
    training_guardrail_problems,
)

HOURLY = OfferTerms("per_hour", D("3.10"), 64, 12, D("0.30"))
CARD = RateCard(
    terms=HOURLY,
    gpus_per_instance=8,
    storage_per_gib_month=D("0.02"),
    cross_region_per_gib=D("0.05"),
    assumed_tokens_in_per_request=4000,
)


def usage(**changes) -> PeriodUsage:
    fields = {
        "period": date(2026, 9, 1),
        "instance_hours": D("5840"),
        "gpu_hours": D("41200"),
        "tokens_in": 1_850_000_000,
        "tokens_out": 310_000_000,
        "requests": 462_000,
        "storage_gib_months": D("20000"),
        "cross_region_gib": D("400"),
        "amount": D("145252.00"),
    }
    fields.update(changes)
    return PeriodUsage(**fields)


@pytest.mark.parametrize(
    "spent,limit,expected",
    [
        (D("69.99"), D("100"), []),
        (D("70"), D("100"), [70]),
        (D("89.99"), D("100"), [70]),
        (D("90"), D("100"), [70, 90]),  # exactly 90 % crosses 90 %
        (D("144000"), D("160000"), [70, 90]),  # 90 % of the demo's monthly budget
        (D("99.999"), D("100"), [70, 90]),
        (D("100"), D("100"), [70, 90, 100]),
        (D("250"), D("100"), [70, 90, 100]),
        (D("0"), D("100"), []),
        (D("50"), None, []),  # no budget: nothing to cross
        (D("50"), D("0"), []),
    ],
)
def test_crossed_thresholds(spent, limit, expected):
    assert crossed_thresholds(spent=spent, limit=limit, thresholds=(70, 90, 100)) == expected


@pytest.mark.parametrize(
    "thresholds,ok",
    [
        ([70, 90, 100], True),
        ([50], True),
        ([], False),
        ([0, 90], False),
        ([90, 90], False),
        ([201], False),
        ([True], False),
        (["70"], False),
    ],
)
def test_thresholds_valid(thresholds, ok):
    assert (thresholds_valid(thresholds) == []) is ok


@pytest.mark.parametrize(
    "terms,contract_value,prepayment,per_month",
    [
        # 64 GPUs × 12 months × 730 h × 3.10 = 1,737,984; 30 % prepaid.
        (HOURLY, D("1737984"), D("521395.2"), D("144832")),
        # 64 × 2,150 per GPU-month × 24 months.
        (OfferTerms("per_month", D("2150"), 64, 24, D("0.5")), D("3302400"), D("1651200"), None),
        (OfferTerms("reserved", D("1150000"), 48, 12, D("1")), D("1150000"), D("1150000"), None),
        (OfferTerms("per_second", D("0.001"), 1, 1, D("0")), D("2628"), D("0"), D("2628")),
    ],
)
def test_committed_spend_from_price_term_and_prepayment(
    terms, contract_value, prepayment, per_month
):
    committed = committed_spend(terms)
    assert committed.missing == ()
    assert committed.contract_value == contract_value
    assert committed.prepayment == prepayment
    assert committed.per_month == (per_month or contract_value / terms.term_months)
    assert committed.prepayment_financing >= 0 and committed.explanation


@pytest.mark.parametrize(
    "terms,missing",
    [
        (OfferTerms("", D("3"), 8, 12, D("0")), ("billing basis",)),
        (OfferTerms("per_hour", None, 8, None, D("0")), ("unit price", "contract term")),
        (OfferTerms("per_hour", D("3"), 8, 12, None), ("prepayment ratio",)),
    ],
)
def test_committed_spend_names_the_missing_terms(terms, missing):
    committed = committed_spend(terms)
    assert committed.contract_value is None and committed.missing == missing


@pytest.mark.parametrize(
    "card,row,total",
    [
        # 5,840 h × 8 GPUs × 3.10 + 20,000 × 0.02 + 400 × 0.05
        (CARD, usage(), D("145252")),
        # per second: 0.001 × 3,600 = 3.60 per GPU-hour; 10 h × 1 GPU
        (
            RateCard(OfferTerms("per_second", D("0.001"), 1, 1, D("0"))),
            usage(instance_hours=D("10"), storage_gib_months=D("0"), cross_region_gib=D("0")),
            D("36"),
        ),
        # per month: capacity billed whatever the hours: 64 × 2,150
        (
            RateCard(OfferTerms("per_month", D("2150"), 64, 24, D("0.5")), gpus_per_instance=8),
            usage(instance_hours=D("1")),
            D("137600"),
        ),
        # reserved: the reservation spread over its term
        (RateCard(OfferTerms("reserved", D("1200000"), 48, 12, D("1"))), usage(), D("100000")),
        # billed per token: 2 M in at 0.50 and 1 M out at 1.50 per million, no instances
        (
            RateCard(
                OfferTerms("per_hour", D("0"), 1, 1, D("0")),
                price_per_million_tokens_in=D("0.50"),
                price_per_million_tokens_out=D("1.50"),
            ),
            usage(instance_hours=D("0"), tokens_in=2_000_000, tokens_out=1_000_000),
            D("2.5"),
        ),
    ],
)
def test_expected_cost_per_billing_basis(card, row, total):
    assert expected_cost(row, card).total == total


def test_expected_cost_cannot_be_computed_without_a_price():
    card = RateCard(OfferTerms("per_hour", None, 64, 12, D("0")))
    expected = expected_cost(usage(), card)
    assert expected.total is None and expected.instances is None


@pytest.mark.parametrize(
    "gpu_hours,idle",
    [
        (D("46720"), False),  # every billed GPU-hour worked
        (D("32704.01"), False),  # just under 30 % idle
        (D("32704"), True),  # exactly 30 % idle
        (D("17800"), True),  # the demo's idle month: 62 % idle
        (D("0"), True),
    ],
)
def test_idle_instances(gpu_hours, idle):
    row = usage(gpu_hours=gpu_hours)
    cause = idle_instances(row, CARD, expected_cost(row, CARD))
    assert (cause is not None) is idle
    if idle:
        assert cause.key == "idle_instances" and cause.amount > 0


def test_idle_instances_ignores_a_month_without_instance_hours():
    row = usage(instance_hours=D("0"), gpu_hours=D("0"))
    assert idle_instances(row, CARD, expected_cost(row, CARD)) is None


@pytest.mark.parametrize(
    "tokens_in,requests,assumed,long",
    [
        (4000 * 1000, 1000, 4000, False),
        (6000 * 1000, 1000, 4000, False),  # exactly 1.5 × the assumption
        (6001 * 1000, 1000, 4000, True),
        (9000 * 490_000, 490_000, 4000, True),  # the demo's third month
        (9000 * 1000, None, 4000, False),  # no request count: not assessable
        (9000 * 1000, 1000, None, False),  # no assumption
        (9000 * 1000, 0, 4000, False),
    ],
)
def test_long_contexts(tokens_in, requests, assumed, long):
    card = RateCard(HOURLY, assumed_tokens_in_per_request=assumed)
    assert (long_contexts(usage(tokens_in=tokens_in, requests=requests), card) is not None) is long


def test_long_contexts_prices_the_excess_when_tokens_are_billed():
    card = RateCard(HOURLY, price_per_million_tokens_in=D("1"), assumed_tokens_in_per_request=1000)
    cause = long_contexts(usage(tokens_in=3_000_000, requests=1000), card)
    assert cause.amount == D("2")  # 2 M tokens over the assumption at 1 per million


@pytest.mark.parametrize(
    "gib,rate,amount,named",
    [
        (D("0"), None, D("1000"), False),
        (D("10"), None, D("1000"), True),  # charged but not in the rate card
        (D("400"), D("0.05"), D("145252"), False),  # 20 of 145,252: negligible
        (D("1000"), D("0.05"), D("1000"), True),  # 50 of 1,000 = 5 %
        (D("999"), D("0.05"), D("1000"), False),
    ],
)
def test_cross_region_traffic(gib, rate, amount, named):
    card = RateCard(HOURLY, gpus_per_instance=8, cross_region_per_gib=rate)
    row = usage(cross_region_gib=gib, amount=amount)
    assert (cross_region_traffic(row, card, expected_cost(row, card)) is not None) is named


@pytest.mark.parametrize(
    "amount,differs",
    [
        (D("145252"), False),
        (D("146704.52"), False),  # 1 % over: within tolerance
        (D("146704.53"), True),
        (D("143000"), True),  # under-billed is a difference too
        (D("152281"), True),  # the demo's third month, billed at 3.25
    ],
)
def test_price_differs(amount, differs):
    row = usage(amount=amount)
    cause = price_differs(row, CARD, expected_cost(row, CARD))
    assert (cause is not None) is differs
    if differs:
        assert cause.amount == amount - D("145252")


def test_price_differs_names_the_implied_rate():
    row = usage(amount=D("152260"))  # 46,720 GPU-hours at 3.25 + 420 storage and traffic
    cause = price_differs(row, CARD, expected_cost(row, CARD))
    assert "implies 3.2500 per GPU-hour" in cause.detail and "says 3.1" in cause.detail


def test_reconcile_cumulates_and_reports_each_total_crossing_once():
    months = [
        usage(period=date(2026, 9, 1), amount=D("145252")),
        usage(period=date(2026, 10, 1), amount=D("145252")),
        usage(period=date(2026, 11, 1), amount=D("145252")),
    ]
    limits = BudgetLimits(total=D("435756"), per_month=D("160000"), thresholds=(70, 90, 100))
    result = reconcile(list(reversed(months)), CARD, limits)
    assert [r.usage.period.month for r in result.periods] == [9, 10, 11]
    assert [r.cumulative for r in result.periods] == [D("145252"), D("290504"), D("435756")]
    total = [(c.period.month, c.threshold) for c in result.crossings if c.scope == "total"]
    assert total == [(11, 70), (11, 90), (11, 100)]  # 66.7 % after October: none yet
    monthly = [(c.period.month, c.threshold) for c in result.crossings if c.scope == "month"]
    assert monthly == [(9, 70), (9, 90), (10, 70), (10, 90), (11, 70), (11, 90)]
    assert result.billed_total == result.expected_total == D("435756")
    assert all(r.difference == 0 and r.causes == () for r in result.periods)


def test_reconcile_without_periods():
    result = reconcile([], CARD, BudgetLimits(D("1"), D("1")))
    assert result.periods == () and result.expected_total is None and result.crossings == ()


@pytest.mark.parametrize(
    "workload,hours,spend,problems",
    [
        ("inference", None, None, 0),
        ("training", None, None, 2),
        ("fine_tuning", D("72"), None, 1),
        ("training", D("72"), D("25000"), 0),
    ],
)
def test_training_jobs_need_a_maximum_run_time_and_spend(workload, hours, spend, problems):
    found = training_guardrail_problems(workload=workload, max_run_hours=hours, max_spend=spend)
    assert len(found) == problems

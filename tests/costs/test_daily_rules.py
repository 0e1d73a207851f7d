"""The daily budget, day by day, on plain data: thresholds, separate days, the day boundary."""

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from apps.costs.bill_rows import BillFileRefused
from apps.costs.rules import BudgetLimits, SpendCharge, daily_spend, local_day
from apps.costs.spend_rows import MAX_ROWS, parse_spend_rows

SHANGHAI = ZoneInfo("Asia/Shanghai")  # UTC+8, no daylight saving
NEW_YORK = ZoneInfo("America/New_York")
LIMITS = BudgetLimits(total=None, per_month=None, thresholds=(70, 90, 100), per_day=Decimal(1000))


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _charge(text: str, amount: str) -> SpendCharge:
    return SpendCharge(_at(text), Decimal(amount))


@pytest.mark.parametrize(
    "spent,crossed",
    [
        ("699.99", ()),  # just below 70 %
        ("700.00", (70,)),  # exactly 70 % crosses it
        ("899.99", (70,)),
        ("900.00", (70, 90)),
        ("999.99", (70, 90)),
        ("1000.00", (70, 90, 100)),
        ("2500.00", (70, 90, 100)),
        ("0", ()),
    ],
)
def test_each_threshold_of_the_daily_budget(spent, crossed):
    days, crossings = daily_spend([_charge("2026-03-04T10:00:00+00:00", spent)], LIMITS, UTC)
    (day,) = days
    assert day.crossed == crossed
    assert [c.threshold for c in crossings] == list(crossed)
    assert all(c.scope == "day" and c.period == date(2026, 3, 4) for c in crossings)
    assert all(c.limit == Decimal(1000) and c.spent == Decimal(spent) for c in crossings)


def test_a_day_is_the_sum_of_its_charges():
    charges = [_charge("2026-03-04T01:00:00Z", "400"), _charge("2026-03-04T23:00:00Z", "300")]
    days, crossings = daily_spend(charges, LIMITS, UTC)
    assert [(d.day, d.spent, d.percent) for d in days] == [
        (date(2026, 3, 4), Decimal(700), Decimal("70.0"))
    ]
    assert [c.threshold for c in crossings] == [70]


def test_the_percentage_shown_never_rounds_up_to_a_threshold():
    days, crossings = daily_spend([_charge("2026-03-04T10:00:00Z", "699.99")], LIMITS, UTC)
    assert days[0].percent == Decimal("69.9") and crossings == ()


def test_each_day_is_judged_on_its_own_spend():
    # 600 a day for three days is 1,800 in all, yet no day reaches 70 % of 1,000.
    charges = [_charge(f"2026-03-0{d}T12:00:00Z", "600") for d in (4, 5, 6)]
    days, crossings = daily_spend(charges, LIMITS, UTC)
    assert [d.percent for d in days] == [Decimal("60.0")] * 3
    assert crossings == ()


@pytest.mark.parametrize(
    "zone,moments,days",
    [
        # In UTC, one second before and at midnight fall on two days.
        (UTC, ("2026-03-04T23:59:59Z", "2026-03-05T00:00:00Z"), ("2026-03-04", "2026-03-05")),
        # 15:59:59Z is 23:59:59 in Shanghai; 16:00:00Z is already the 5th there.
        (SHANGHAI, ("2026-03-04T15:59:59Z", "2026-03-04T16:00:00Z"), ("2026-03-04", "2026-03-05")),
        # The same two instants are one day in UTC.
        (UTC, ("2026-03-04T15:59:59Z", "2026-03-04T16:00:00Z"), ("2026-03-04", "2026-03-04")),
        # An offset in the file does not decide the day: the zone does.
        (UTC, ("2026-03-05T07:30:00+08:00",), ("2026-03-04",)),
        # New York's midnight moves with daylight saving (EDT from 8 March 2026).
        (NEW_YORK, ("2026-03-08T04:59:59Z", "2026-03-09T04:00:00Z"), ("2026-03-07", "2026-03-09")),
    ],
)
def test_the_day_boundary_is_midnight_in_the_zone(zone, moments, days):
    assert tuple(local_day(_at(m), zone).isoformat() for m in moments) == days


def test_a_charge_on_each_side_of_midnight_counts_on_its_own_day():
    # 700 just before midnight in Shanghai and 700 just after: two days at 70 %, not one
    # at 140 %.
    charges = [_charge("2026-03-04T15:59:59Z", "700"), _charge("2026-03-04T16:00:00Z", "700")]
    days, crossings = daily_spend(charges, LIMITS, SHANGHAI)
    assert [(d.day.isoformat(), d.crossed) for d in days] == [
        ("2026-03-04", (70,)),
        ("2026-03-05", (70,)),
    ]
    assert len(crossings) == 2
    _days, in_utc = daily_spend(charges, LIMITS, UTC)
    assert [c.threshold for c in in_utc] == [70, 90, 100]


def test_without_a_daily_budget_days_are_listed_and_nothing_is_crossed():
    limits = BudgetLimits(total=None, per_month=Decimal(10), per_day=None)
    days, crossings = daily_spend([_charge("2026-03-04T10:00:00Z", "5000")], limits, UTC)
    assert days[0].share is None and days[0].percent is None and days[0].crossed == ()
    assert crossings == ()


def test_a_time_without_an_offset_has_no_day():
    with pytest.raises(ValueError):
        local_day(datetime(2026, 3, 4, 12), UTC)


# The daily-spend file ------------------------------------------------------------

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _parse(rows, zone=UTC):
    return parse_spend_rows(rows, currency="USD", now=NOW, zone=zone, first_row=1)


def test_a_day_alone_is_midnight_of_that_day_in_the_zone():
    (charge,) = _parse([{"charged_at": "2026-03-04", "amount": "12.5"}], zone=SHANGHAI)
    assert charge.charged_at == datetime(2026, 3, 4, tzinfo=SHANGHAI)
    assert local_day(charge.charged_at, SHANGHAI) == date(2026, 3, 4)
    assert charge.amount == Decimal("12.5") and charge.row == 1


def test_an_offset_is_kept_as_given():
    (charge,) = _parse([{"charged_at": "2026-03-04T23:30:00+08:00", "amount": 3}])
    assert charge.charged_at.utcoffset() == timedelta(hours=8)
    assert charge.charged_at == datetime(2026, 3, 4, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "row,column,words",
    [
        ({"charged_at": "2026-03-04T10:00:00", "amount": "1"}, "charged_at", "no offset from UTC"),
        ({"charged_at": "yesterday", "amount": "1"}, "charged_at", "is not a time"),
        ({"charged_at": "2026-02-30", "amount": "1"}, "charged_at", "not a real day"),
        ({"charged_at": "2026-03-11T00:00:00Z", "amount": "1"}, "charged_at", "not happened yet"),
        ({"charged_at": "1999-12-31", "amount": "1"}, "charged_at", "before 2000"),
        ({"charged_at": "2026-03-04", "amount": "-1"}, "amount", "negative"),
        ({"charged_at": "2026-03-04", "amount": "1.005"}, "amount", "not an amount"),
        ({"charged_at": "2026-03-04", "amount": "1e3"}, "amount", "not an amount"),
        ({"charged_at": "2026-03-04", "amount": "1" * 14}, "amount", "too large"),
        ({"charged_at": "2026-03-04", "amount": "1", "currency": "EUR"}, "currency", "EUR"),
        ({"charged_at": "2026-03-04", "amount": "1", "description": "x" * 201}, "description", ""),
        ({"charged_at": "2026-03-04", "amount": "1", "cost": "2"}, "", "columns must be"),
        ({"amount": "1"}, "", "columns must be"),
    ],
)
def test_a_bad_row_refuses_the_file_naming_row_and_column(row, column, words):
    good = {"charged_at": "2026-03-04", "amount": "1"}
    with pytest.raises(BillFileRefused) as refused:
        _parse([good, row])
    (problem,) = refused.value.problems
    assert (problem.row, problem.column) == (2, column)
    assert words in problem.reason


def test_an_empty_or_oversized_file_is_refused():
    with pytest.raises(BillFileRefused):
        _parse([])
    with pytest.raises(BillFileRefused) as refused:
        _parse([{"charged_at": "2026-03-04", "amount": "1"}] * (MAX_ROWS + 1))
    assert str(MAX_ROWS) in str(refused.value)

"""Reading a usage-and-bill file: every refusal names the row and the reason."""

from datetime import date
from decimal import Decimal as D

import pytest

from apps.costs.bill_rows import MAX_FILE_BYTES, BillFileRefused, decode_csv, parse_rows

HEADER = (
    "period,instance_hours,gpu_hours,tokens_in,tokens_out,storage_gib_months,"
    "cross_region_gib,amount"
)
GOOD = "2026-09,5840,41200,1850000000,310000000,20000,400,145252.00"
TODAY = date(2026, 12, 1)


def read(text: str | bytes, currency: str = "USD"):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return parse_rows(decode_csv(raw), currency=currency, today=TODAY)


def refusal(text: str | bytes, currency: str = "USD") -> list[str]:
    with pytest.raises(BillFileRefused) as caught:
        read(text, currency)
    return [str(p) for p in caught.value.problems]


def test_a_good_file():
    [usage] = read(f"{HEADER}\n{GOOD}\n")
    assert usage.period == date(2026, 9, 1)
    assert usage.amount == D("145252.00") and usage.tokens_in == 1_850_000_000
    assert usage.requests is None


def test_optional_columns_byte_order_mark_and_trailing_blank_lines():
    text = f"\ufeff{HEADER},requests,currency\n{GOOD},462000,usd\n\n,,,,,,,,,\n"
    [usage] = read(text)
    assert usage.requests == 462_000


def test_columns_in_any_order_and_case():
    [usage] = read(
        "Amount,PERIOD,instance_hours,gpu_hours,tokens_in,tokens_out,"
        "storage_gib_months,cross_region_gib\n10,2026-01,1,1,0,0,0,0\n"
    )
    assert usage.amount == D("10") and usage.period == date(2026, 1, 1)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("", ["file: the file is empty."]),
        ("  \n\n", ["file: the file is empty."]),
        (f"{HEADER}\n", ["file: the file has a header but no rows."]),
        (
            f"{HEADER},discount\n{GOOD},5\n",
            [
                "row 1: unknown column(s): discount (allowed: period, instance_hours, gpu_hours, "
                "tokens_in, tokens_out, storage_gib_months, cross_region_gib, amount, requests, "
                "training_job_hours_max, training_job_spend_max, currency)."
            ],
        ),
        (
            "period,amount\n2026-09,5\n",
            [
                "row 1: missing required column(s): instance_hours, gpu_hours, tokens_in, "
                "tokens_out, storage_gib_months, cross_region_gib."
            ],
        ),
        (f"{HEADER},amount\n{GOOD},1\n", ["row 1: column(s) named twice: amount."]),
        (
            f"{HEADER}\n2026-09,5840,41200,1850000000,310000000,20000,400,-12.00\n",
            [
                "row 2, amount: negative amount: record a credit note with the vendor's next "
                "bill, not as a negative bill."
            ],
        ),
        (
            f"{HEADER}\n{GOOD}\n2026-08,1,1,0,0,0,0,1\n",
            [
                "row 3, period: 2026-08 repeats or comes before 2026-09: list each month once, "
                "oldest first."
            ],
        ),
        (
            f"{HEADER}\n{GOOD}\n{GOOD}\n",
            [
                "row 3, period: 2026-09 repeats or comes before 2026-09: list each month once, "
                "oldest first."
            ],
        ),
        (
            f"{HEADER}\n2026-13,1,1,0,0,0,0,1\n",
            ["row 2, period: '2026-13' is not a month written YYYY-MM."],
        ),
        (
            f"{HEADER}\n09/2026,1,1,0,0,0,0,1\n",
            ["row 2, period: '09/2026' is not a month written YYYY-MM."],
        ),
        (f"{HEADER}\n2027-01,1,1,0,0,0,0,1\n", ["row 2, period: 2027-01 has not begun yet."]),
        (
            f"{HEADER}\n2026-09,1,1,1.5,0,0,0,1\n",
            ["row 2, tokens_in: '1.5' is not a whole, non-negative number."],
        ),
        (
            f"{HEADER}\n2026-09,lots,1,0,0,0,0,1\n",
            ["row 2, instance_hours: 'lots' is not a number (digits, optionally a decimal point)."],
        ),
        (
            f"{HEADER}\n2026-09,1,1,0,0,0,0,\n",
            ["row 2, amount: '' is not a number (digits, optionally a decimal point)."],
        ),
        (f"{HEADER}\n2026-09,1,1,0,0\n", ["row 2: 5 cells where the header names 8."]),
        (
            f"{HEADER},currency\n{GOOD},EUR\n",
            ["row 2, currency: EUR is not the budget's currency (USD)."],
        ),
    ],
)
def test_refusals_name_the_row_and_the_reason(text, expected):
    assert refusal(text) == expected


@pytest.mark.parametrize(
    "cells,expected",
    [
        ("1,1,0,0,0,0,10.005", "row 2, amount: 10.005 has more than 2 decimal places."),
        (
            "1,1,0,0,0,0,12345678901234",
            "row 2, amount: 12345678901234 is too large (at most 13 digits before the point).",
        ),
        # 16 digits in all: SQLite keeps 15 exactly, and reading 16 back failed.
        (
            "1,1,0,0,0,0,99999999999999.99",
            "row 2, amount: 99999999999999.99 is too large (at most 13 digits before the point).",
        ),
        ("1.00001,1,0,0,0,0,1", "row 2, instance_hours: 1.00001 has more than 4 decimal places."),
        (
            "1,1,99999999999999999999,0,0,0,1",
            "row 2, tokens_in: 99999999999999999999 is too large.",
        ),
        # Past Python's own bound on reading an integer (4,300 digits): refused, not a crash.
        ("1,1," + "9" * 5000 + ",0,0,0,1", "row 2, tokens_in: " + "9" * 5000 + " is too large."),
    ],
)
def test_values_the_records_cannot_hold_are_refused(cells, expected):
    assert refusal(f"{HEADER}\n2026-09,{cells}\n") == [expected]


def test_every_bad_row_is_reported_at_once():
    text = f"{HEADER}\n{GOOD}\n2026-10,1,1,0,0,0,0,-1\n2026-11,x,1,0,0,0,0,1\n"
    assert [p.split(":")[0] for p in refusal(text)] == ["row 3, amount", "row 4, instance_hours"]


@pytest.mark.parametrize(
    "raw,reason",
    [
        ("période;montant\n".encode("latin-1"), "is not UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "not a CSV file"),
        (b'period,amount\n"2026-09,5\n', "not a readable CSV file"),
        (b"x" * (MAX_FILE_BYTES + 1), "larger than 1024 KiB"),
    ],
)
def test_files_that_are_not_utf8_csv_are_refused(raw, reason):
    [problem] = refusal(raw)
    assert problem.startswith("file: ") and reason in problem


def test_json_rows_are_numbered_from_one_and_checked_for_columns():
    good = dict(zip(HEADER.split(","), GOOD.split(","), strict=True))
    rows = [good, {**good, "period": "2026-10", "discount": "5"}, {"period": "2026-11"}]
    with pytest.raises(BillFileRefused) as caught:
        parse_rows(rows, currency="USD", today=TODAY, first_row=1)
    problems = [str(p) for p in caught.value.problems]
    assert problems[0] == "row 2: unknown column(s): discount."
    assert problems[1].startswith("row 3: missing column(s): instance_hours")


def test_json_numbers_are_taken():
    row = {
        "period": "2026-09",
        "instance_hours": 10,
        "gpu_hours": 7.5,
        "tokens_in": 100,
        "tokens_out": 50,
        "storage_gib_months": 0,
        "cross_region_gib": 0,
        "amount": 31.25,
    }
    [usage] = parse_rows([row], currency="USD", today=TODAY, first_row=1)
    assert usage.gpu_hours == D("7.5") and usage.amount == D("31.25")

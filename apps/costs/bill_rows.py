"""Reading a usage-and-bill file into periods, or refusing it whole (pure functions).

The file is CSV, UTF-8 (a byte-order mark is allowed), one row per month:

=====================  ========  ==================================================
column                 required  meaning (unit)
=====================  ========  ==================================================
period                 yes       the month billed, ``YYYY-MM``
instance_hours         yes       instance-hours billed (one instance = the rate
                                 card's GPUs per instance)
gpu_hours              yes       GPU-hours doing work, from monitoring
tokens_in              yes       input tokens served (whole number)
tokens_out             yes       output tokens served (whole number)
storage_gib_months     yes       disk and object storage, GiB-months
cross_region_gib       yes       traffic that crossed regions, GiB
amount                 yes       the vendor's billed amount for the month
requests               no        requests served (whole number); enables the
                                 long-context check
training_job_hours_max no        the longest training job billed in the month,
                                 hours of run time; checked against the
                                 training jobs' maximum run time
training_job_spend_max no        the costliest training job billed in the month;
                                 checked against their maximum spend
currency               no        ISO code; must equal the budget's currency
=====================  ========  ==================================================

Any problem — an unknown or missing column, a bad cell, a negative amount, a
period repeated or out of order, a month not yet begun — refuses the whole
file with every problem's row number (the header is row 1) and reason.

A month already imported for the case is refused too (by the import service,
which sees the stored months), unless the import is sent with *replace*: then
the earlier month stays on record, marked replaced by the new import, and the
new one is in force. A file may add months before those already imported
(a late bill); within one file the months must ascend.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from apps.costs.rules import PeriodUsage

MAX_FILE_BYTES = 1024 * 1024
MAX_ROWS = 600  # fifty years of months

REQUIRED_COLUMNS = (
    "period",
    "instance_hours",
    "gpu_hours",
    "tokens_in",
    "tokens_out",
    "storage_gib_months",
    "cross_region_gib",
    "amount",
)
TRAINING_COLUMNS = ("training_job_hours_max", "training_job_spend_max")
OPTIONAL_COLUMNS = ("requests", *TRAINING_COLUMNS, "currency")
COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
DECIMAL_COLUMNS = ("instance_hours", "gpu_hours", "storage_gib_months", "cross_region_gib")
INTEGER_COLUMNS = ("tokens_in", "tokens_out")

# Money takes 13 digits before the point, one fewer than its columns hold: with two places
# that is 15 significant digits, which SQLite (storing a decimal as a double) gives back
# exactly. At 16, 99,999,999,999,999.99 was stored, and reading it back failed.
MONEY_WHOLE_DIGITS = 13
MAX_MONEY = Decimal(10**MONEY_WHOLE_DIGITS) - Decimal("0.01")
# (digits before the point, decimal places) the stored columns hold.
DIGITS = {name: (10, 4) for name in DECIMAL_COLUMNS} | {"amount": (MONEY_WHOLE_DIGITS, 2)}
DIGITS |= {"training_job_hours_max": (10, 4), "training_job_spend_max": (MONEY_WHOLE_DIGITS, 2)}
MAX_COUNT = 2**63 - 1

_PERIOD = re.compile(r"^(\d{4})-(\d{2})$")
_NUMBER = re.compile(r"^\d+(\.\d+)?$")
_INTEGER = re.compile(r"^\d+$")


@dataclass(frozen=True)
class RowProblem:
    row: int | None  # 1 is the header; None: the file as a whole
    column: str
    reason: str

    def __str__(self) -> str:
        where = _("row %(row)s") % {"row": self.row} if self.row is not None else _("file")
        column = f", {self.column}" if self.column else ""
        return f"{where}{column}: {self.reason}"


class BillFileRefused(ValueError):
    """The file as a whole is refused; ``problems`` says where and why."""

    def __init__(self, problems: list[RowProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def too_large() -> str:
    return _("the file is larger than %(limit)s KiB.") % {"limit": MAX_FILE_BYTES // 1024}


def _refuse(reason: str, column: str = "") -> BillFileRefused:
    return BillFileRefused([RowProblem(None, column, reason)])


def decode_csv(
    raw: bytes,
    *,
    columns: Sequence[str] = COLUMNS,
    required: Sequence[str] = REQUIRED_COLUMNS,
) -> list[dict[str, str]]:
    """Bytes → rows keyed by column name; refuses size, encoding, shape and columns."""
    if len(raw) > MAX_FILE_BYTES:
        raise _refuse(too_large())
    if not raw.strip():
        raise _refuse(_("the file is empty."))
    if b"\x00" in raw:
        raise _refuse(_("this is not a CSV file (it contains binary data)."))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _refuse(
            _("the file is not UTF-8 (byte %(byte)s cannot be read): save it as CSV UTF-8.")
            % {"byte": error.start + 1}
        ) from None
    try:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        table = [row for row in reader]
    except csv.Error as error:
        raise _refuse(
            _("this is not a readable CSV file (%(error)s).") % {"error": error}
        ) from None
    header = [name.strip().lower() for name in table[0]]
    check_columns(header, columns=columns, required=required)
    rows = []
    for number, cells in enumerate(table[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue  # a blank line, as spreadsheets leave at the end
        if len(cells) != len(header):
            raise BillFileRefused(
                [
                    RowProblem(
                        number,
                        "",
                        _("%(cells)s cells where the header names %(columns)s.")
                        % {"cells": len(cells), "columns": len(header)},
                    )
                ]
            )
        rows.append({"_row": str(number), **dict(zip(header, cells, strict=True))})
    return rows


def check_columns(
    header: list[str],
    *,
    columns: Sequence[str] = COLUMNS,
    required: Sequence[str] = REQUIRED_COLUMNS,
) -> None:
    problems = []
    unknown = [name for name in header if name not in columns]
    if unknown:
        problems.append(
            RowProblem(
                1,
                "",
                _("unknown column(s): %(names)s (allowed: %(allowed)s).")
                % {"names": ", ".join(unknown), "allowed": ", ".join(columns)},
            )
        )
    missing = [name for name in required if name not in header]
    if missing:
        problems.append(
            RowProblem(
                1, "", _("missing required column(s): %(names)s.") % {"names": ", ".join(missing)}
            )
        )
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        problems.append(
            RowProblem(
                1, "", _("column(s) named twice: %(names)s.") % {"names": ", ".join(repeated)}
            )
        )
    if problems:
        raise BillFileRefused(problems)


def parse_rows(
    rows: Sequence[Mapping[str, Any]], *, currency: str, today: date, first_row: int = 2
) -> list[PeriodUsage]:
    """Validated periods, ascending; refuses the lot on any problem.

    ``rows`` come from ``decode_csv`` (which numbers them) or from a JSON body
    (numbered from ``first_row``); values may be strings or JSON numbers.
    """
    if not rows:
        raise _refuse(_("the file has a header but no rows."))
    if len(rows) > MAX_ROWS:
        raise _refuse(
            _("%(rows)s rows; at most %(limit)s are taken at once.")
            % {"rows": len(rows), "limit": MAX_ROWS}
        )
    problems: list[RowProblem] = []
    usages: list[PeriodUsage] = []
    this_month = today.replace(day=1)
    for index, row in enumerate(rows):
        cells = dict(row)
        numbered = cells.pop("_row", None)
        if numbered is not None:
            number = int(numbered)
        else:
            number = first_row + index
            column_problems = _json_columns(number, cells)
            if column_problems:
                problems += column_problems
                continue
        usage, row_problems = _parse_row(number, cells, currency=currency, this_month=this_month)
        problems += row_problems
        if usage is not None:
            if usages and usage.period <= usages[-1].period:
                problems.append(
                    RowProblem(
                        number,
                        "period",
                        _(
                            "%(period)s repeats or comes before %(before)s: list each month "
                            "once, oldest first."
                        )
                        % {
                            "period": f"{usage.period:%Y-%m}",
                            "before": f"{usages[-1].period:%Y-%m}",
                        },
                    )
                )
            usages.append(usage)
    if problems:
        raise BillFileRefused(problems)
    return usages


def _json_columns(number: int, cells: dict) -> list[RowProblem]:
    unknown = [name for name in cells if name not in COLUMNS]
    missing = [name for name in REQUIRED_COLUMNS if name not in cells]
    problems = []
    if unknown:
        problems.append(
            RowProblem(
                number, "", _("unknown column(s): %(names)s.") % {"names": ", ".join(unknown)}
            )
        )
    if missing:
        problems.append(
            RowProblem(
                number, "", _("missing column(s): %(names)s.") % {"names": ", ".join(missing)}
            )
        )
    return problems


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return repr(value)
    return str(value).strip()


def _parse_row(
    number: int, cells: dict, *, currency: str, this_month: date
) -> tuple[PeriodUsage | None, list[RowProblem]]:
    problems = []
    values: dict[str, Any] = {}  # PeriodUsage's fields, each of its own type

    def refuse(column: str, reason: str) -> None:
        problems.append(RowProblem(number, column, reason))

    period_text = _text(cells.get("period"))
    match = _PERIOD.match(period_text)
    if not match or not 1 <= int(match.group(2)) <= 12:
        refuse(
            "period", _("%(text)s is not a month written YYYY-MM.") % {"text": repr(period_text)}
        )
    else:
        period = date(int(match.group(1)), int(match.group(2)), 1)
        if period > this_month:
            refuse("period", _("%(text)s has not begun yet.") % {"text": period_text})
        values["period"] = period
    for name in DECIMAL_COLUMNS + ("amount",) + TRAINING_COLUMNS:
        text = _text(cells.get(name))
        if name in TRAINING_COLUMNS and text == "":
            values[name] = None  # the month lists no training job
        elif text.startswith("-"):
            reason = (
                _(
                    "negative amount: record a credit note with the vendor's next bill, "
                    "not as a negative bill."
                )
                if name == "amount"
                else _("%(text)s is negative.") % {"text": text}
            )
            refuse(name, reason)
        elif not _NUMBER.match(text):
            refuse(
                name,
                _("%(text)s is not a number (digits, optionally a decimal point).")
                % {"text": repr(text)},
            )
        else:
            whole, _point, places = text.partition(".")
            whole_digits, decimal_places = DIGITS[name]
            if len(places) > decimal_places:
                refuse(
                    name,
                    _("%(text)s has more than %(places)s decimal places.")
                    % {"text": text, "places": decimal_places},
                )
            elif len(whole.lstrip("0")) > whole_digits:
                refuse(
                    name,
                    _("%(text)s is too large (at most %(digits)s digits before the point).")
                    % {"text": text, "digits": whole_digits},
                )
            else:
                values[name] = Decimal(text)
    for name in INTEGER_COLUMNS + ("requests",):
        text = _text(cells.get(name))
        if name == "requests" and text == "":
            values[name] = None
        elif not _INTEGER.match(text):
            refuse(name, _("%(text)s is not a whole, non-negative number.") % {"text": repr(text)})
        elif len(text.lstrip("0")) > len(str(MAX_COUNT)) or int(text) > MAX_COUNT:
            # Counted by length first: Python refuses to read an integer of 4,300 digits.
            refuse(name, _("%(text)s is too large.") % {"text": text})
        else:
            values[name] = int(text)
    stated = _text(cells.get("currency")).upper()
    if stated and stated != currency.upper():
        refuse(
            "currency",
            _("%(stated)s is not the budget's currency (%(currency)s).")
            % {"stated": stated, "currency": currency},
        )
    if problems:
        return None, problems
    return PeriodUsage(**values), []

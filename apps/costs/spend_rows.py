"""Reading a daily-spend file into charges, or refusing it whole (pure functions).

The file is CSV, UTF-8, one row per charge from the vendor's usage export (hourly
or daily lines), in any order:

=============  ========  ===========================================================
column         required  meaning
=============  ========  ===========================================================
charged_at     yes       when the charge was incurred: ISO 8601 with its offset from
                         UTC (``2026-03-04T23:30:00Z``, ``…+08:00``), or a day
                         ``YYYY-MM-DD``, read as that day in the server's time zone
amount         yes       the amount charged, in the budget's currency
description    no        the vendor's line text (at most 200 characters)
currency       no        ISO code; must equal the budget's currency
=============  ========  ===========================================================

Days are counted in ``settings.TIME_ZONE``: a charge at 23:30 UTC falls on the
next day in a zone east of UTC. A time without its offset is refused rather than
guessed. Any problem refuses the whole file with every row's number and reason,
as the monthly bill file does (``apps.costs.bill_rows``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, tzinfo
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from apps.costs.bill_rows import (
    MONEY_WHOLE_DIGITS,
    BillFileRefused,
    RowProblem,
    decode_csv,
)

REQUIRED_COLUMNS = ("charged_at", "amount")
OPTIONAL_COLUMNS = ("description", "currency")
COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
MAX_ROWS = 5000  # seven months of hourly lines, or years of daily ones
DESCRIPTION_MAX = 200
EARLIEST_YEAR = 2000  # before it, no GPU rental; far enough from year 1 to convert safely

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_AMOUNT = re.compile(r"^\d+(\.\d{1,2})?$")


@dataclass(frozen=True)
class ChargeRow:
    charged_at: datetime  # aware
    amount: Decimal
    description: str = ""
    row: int = 0  # its row in the file (the header is row 1), to name it in a refusal


def decode_spend_csv(raw: bytes) -> list[dict[str, str]]:
    return decode_csv(raw, columns=COLUMNS, required=REQUIRED_COLUMNS)


def parse_spend_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    currency: str,
    now: datetime,
    zone: tzinfo,
    first_row: int = 2,
) -> list[ChargeRow]:
    """Validated charges in file order; refuses the lot on any problem."""
    if not rows:
        raise BillFileRefused([RowProblem(None, "", _("the file has a header but no rows."))])
    if len(rows) > MAX_ROWS:
        raise BillFileRefused(
            [
                RowProblem(
                    None,
                    "",
                    _("%(rows)s rows; at most %(limit)s are taken at once.")
                    % {"rows": len(rows), "limit": MAX_ROWS},
                )
            ]
        )
    problems: list[RowProblem] = []
    charges: list[ChargeRow] = []
    for index, row in enumerate(rows):
        cells = dict(row)
        numbered = cells.pop("_row", None)
        number = int(numbered) if numbered is not None else first_row + index
        if numbered is None:
            unknown = [name for name in cells if name not in COLUMNS]
            missing = [name for name in REQUIRED_COLUMNS if name not in cells]
            if unknown or missing:
                problems.append(
                    RowProblem(
                        number,
                        "",
                        _("columns must be %(required)s, optionally %(optional)s.")
                        % {
                            "required": ", ".join(REQUIRED_COLUMNS),
                            "optional": ", ".join(OPTIONAL_COLUMNS),
                        },
                    )
                )
                continue
        charge, row_problems = _parse_row(number, cells, currency=currency, now=now, zone=zone)
        problems += row_problems
        if charge is not None:
            charges.append(charge)
    if problems:
        raise BillFileRefused(problems)
    return charges


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return repr(value)
    return str(value).strip()


def charged_at_from(text: str, zone: tzinfo) -> datetime | str:
    """The instant a cell names, or the reason it names none."""
    if _DAY.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            return _("%(text)s is not a real day.") % {"text": text}
        moment = datetime.combine(day, time(0), tzinfo=zone)
    else:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return _(
                "%(text)s is not a time written ISO 8601 (2026-03-04T23:30:00Z) or a day "
                "(2026-03-04)."
            ) % {"text": repr(text)}
        if moment.tzinfo is None or moment.utcoffset() is None:
            return _(
                "%(text)s has no offset from UTC: write Z or +08:00 after the time, so "
                "the day it belongs to is not guessed."
            ) % {"text": text}
    if moment.year < EARLIEST_YEAR:
        return _("%(text)s is before %(year)s.") % {"text": text, "year": EARLIEST_YEAR}
    return moment


def _parse_row(
    number: int, cells: dict, *, currency: str, now: datetime, zone: tzinfo
) -> tuple[ChargeRow | None, list[RowProblem]]:
    problems = []

    def refuse(column: str, reason: str) -> None:
        problems.append(RowProblem(number, column, reason))

    moment = charged_at_from(_text(cells.get("charged_at")), zone)
    if isinstance(moment, str):
        refuse("charged_at", moment)
    elif moment > now:
        refuse("charged_at", _("%(text)s has not happened yet.") % {"text": moment.isoformat()})
    amount_text = _text(cells.get("amount"))
    if amount_text.startswith("-"):
        refuse("amount", _("negative amount: a credit is not a charge."))
    elif not _AMOUNT.match(amount_text):
        refuse(
            "amount",
            _("%(text)s is not an amount (digits, at most two decimal places).")
            % {"text": repr(amount_text)},
        )
    elif len(amount_text.partition(".")[0].lstrip("0")) > MONEY_WHOLE_DIGITS:
        refuse(
            "amount",
            _("%(text)s is too large (at most %(digits)s digits before the point).")
            % {"text": amount_text, "digits": MONEY_WHOLE_DIGITS},
        )
    description = _text(cells.get("description"))
    if len(description) > DESCRIPTION_MAX:
        refuse(
            "description",
            _("longer than %(limit)s characters.") % {"limit": DESCRIPTION_MAX},
        )
    stated = _text(cells.get("currency")).upper()
    if stated and stated != currency.upper():
        refuse(
            "currency",
            _("%(stated)s is not the budget's currency (%(currency)s).")
            % {"stated": stated, "currency": currency},
        )
    if problems:
        return None, problems
    assert isinstance(moment, datetime)
    return ChargeRow(moment, Decimal(amount_text), description, number), []

"""The portfolio's tables as spreadsheets: each table as a CSV, all of them as one XLSX
with a sheet per table.

As in the offer matrix's export (``apps.casework.matrix_files``): numbers are written as
numbers (money to the cent, shares in percent to two places, days to one), each amount
beside its currency in a column of its own (amounts in different currencies are never
summed), and text goes through ``apps.core.csv_safe`` so a case or vendor name that
begins with ``=`` stays text.
"""

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils.translation import gettext as _

from apps.casework.portfolio_overview import AGE_BUCKETS, Portfolio, SpendRow, age_label
from apps.core import csv_safe
from apps.core.spreadsheets import XLSX_CONTENT_TYPE, sheet_name

__all__ = ["TABLES", "XLSX_CONTENT_TYPE", "portfolio_csv", "portfolio_tables", "portfolio_xlsx"]
_MONEY = Decimal("0.01")
_DAYS = Decimal("0.1")
_NOT_IN_XLSX = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _money(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(_MONEY, ROUND_HALF_UP)


def _percent(share: Decimal | None) -> Decimal | None:
    return None if share is None else (share * 100).quantize(_MONEY, ROUND_HALF_UP)


def _days(value: Decimal | None) -> Decimal | None:
    return None if value is None else value.quantize(_DAYS, ROUND_HALF_UP)


@dataclass(frozen=True)
class Table:
    key: str
    title: str
    headings: list[str]
    rows: list[list[Any]]


def _stages(p: Portfolio) -> Table:
    return Table(
        "stages",
        _("Cases by stage and age"),
        [_("Stage"), _("Cases")] + [age_label(low, high) for low, high in AGE_BUCKETS],
        [[row.label, row.total.count] + [cell.count for cell in row.ages] for row in p.stages],
    )


def _cycle(p: Portfolio) -> Table:
    rows: list[list[Any]] = [[_("Median"), "", _days(p.cycle.median_days)]]
    rows += [[_("Slowest"), t.name, _days(t.days)] for t in p.cycle.slowest]
    return Table("cycle", _("Cycle time"), [_("Measure"), _("Case"), _("Days")], rows)


def _spend_rows(rows: list[SpendRow], first: str) -> tuple[list[str], list[list[Any]]]:
    headings = [
        first,
        _("Currency"),
        _("Cases"),
        _("Committed"),
        _("Budget"),
        _("Committed of budget (%)"),
        _("Actual"),
        _("Actual of budget (%)"),
    ]
    values = [
        [
            row.key,
            row.currency,
            row.case_count,
            _money(row.committed),
            _money(row.budget),
            _percent(row.committed_of_budget),
            _money(row.actual),
            _percent(row.actual_of_budget),
        ]
        for row in rows
    ]
    return headings, values


def _vendors(p: Portfolio) -> Table:
    headings, rows = _spend_rows(p.vendors, _("Vendor"))
    return Table("vendors", _("Spend by vendor"), headings, rows)


def _months(p: Portfolio) -> Table:
    headings = [_("Month"), _("Currency"), _("Cases"), _("Committed"), _("Actual")]
    rows = [
        [row.key, row.currency, row.case_count, _money(row.committed), _money(row.actual)]
        for row in p.months
    ]
    return Table("months", _("Spend by month"), headings, rows)


def _share(rows: list[SpendRow], key: str, title: str, first: str) -> Table:
    headings = [
        first,
        _("Currency"),
        _("Cases"),
        _("Cards"),
        _("Share of cards (%)"),
        _("Committed"),
        _("Share of committed spend (%)"),
    ]
    values = [
        [
            row.key,
            row.currency,
            row.case_count,
            row.cards,
            _percent(row.cards_share),
            _money(row.committed),
            _percent(row.committed_share),
        ]
        for row in rows
    ]
    return Table(key, title, headings, values)


def _expiring(p: Portfolio) -> Table:
    return Table(
        "expiring",
        _("Expiring waivers and acceptances"),
        [_("Kind"), _("Case"), _("About"), _("Expires on"), _("Days left")],
        [[e.kind, e.case_name, e.subject, e.expires_on, e.days_left] for e in p.expiring],
    )


def _findings(p: Portfolio) -> Table:
    return Table(
        "findings",
        _("Open findings by severity"),
        [_("Case"), *p.severity_labels],
        [[row.name, *(cell.count for cell in row.counts)] for row in p.findings],
    )


TABLES: dict[str, Callable[[Portfolio], Table]] = {
    "stages": _stages,
    "cycle": _cycle,
    "vendors": _vendors,
    "months": _months,
    "vendor-share": lambda p: _share(
        p.vendor_share, "vendor-share", _("Concentration by vendor"), _("Vendor")
    ),
    "country-share": lambda p: _share(
        p.country_share, "country-share", _("Concentration by country"), _("Country")
    ),
    "expiring": _expiring,
    "findings": _findings,
}


def _cell(value: Any) -> Any:
    return csv_safe.csv_cell(value) if isinstance(value, str) else value


def portfolio_tables(p: Portfolio) -> list[Table]:
    """Every table, its text made formula-safe."""
    tables = []
    for make in TABLES.values():
        table = make(p)
        tables.append(
            Table(
                table.key,
                table.title,
                [_cell(str(h)) for h in table.headings],
                [[_cell(value) for value in row] for row in table.rows],
            )
        )
    return tables


def portfolio_csv(p: Portfolio, key: str) -> str:
    table = next(t for t in portfolio_tables(p) if t.key == key)
    out = io.StringIO()
    writer = csv_safe.writer(out)
    writer.writerow(table.headings)
    writer.writerows(["" if value is None else value for value in row] for row in table.rows)
    return out.getvalue()


def portfolio_xlsx(p: Portfolio) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    book = Workbook()
    book.properties.title = _("Portfolio")
    first = True
    for table in portfolio_tables(p):
        if first:
            sheet = book.active
            assert sheet is not None  # a new workbook has one sheet
            first = False
        else:
            sheet = book.create_sheet()
        sheet.title = sheet_name(table.title)
        sheet.append([_NOT_IN_XLSX.sub("", text) for text in table.headings])
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        for row in table.rows:
            sheet.append([_NOT_IN_XLSX.sub("", v) if isinstance(v, str) else v for v in row])
            for cell in sheet[sheet.max_row]:
                if isinstance(cell.value, str):
                    cell.data_type = "s"  # text, whatever it begins with
        for index, heading in enumerate(table.headings, start=1):
            sheet.column_dimensions[get_column_letter(index)].width = min(40, max(10, len(heading)))
        sheet.freeze_panes = "B2"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()

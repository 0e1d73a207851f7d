"""The offer matrix as a spreadsheet: CSV and XLSX, the same columns in both.

Numbers are written as numbers (money to the cent, prices per GPU-hour to four
places, the currency in its own column) so a reader can sort and sum them; text
goes through ``apps.core.csv_safe``, so a vendor name or a waiver's reason that
begins with ``=`` stays text in Excel, LibreOffice and Google Sheets. The XLSX
fills the cells that differ from the best of the case, as the page marks them.
"""

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, BinaryIO

from django.utils.functional import Promise
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.casework.matrix import MatrixRow
from apps.contracts import terms as contract_terms
from apps.contracts.selectors import term_shown
from apps.core import csv_safe
from apps.core.spreadsheets import XLSX_CONTENT_TYPE, sheet_name

__all__ = ["XLSX_CONTENT_TYPE", "matrix_csv", "matrix_filename", "matrix_table", "matrix_xlsx"]
_MONEY = Decimal("0.01")
_RATE = Decimal("0.0001")
# Control characters an XLSX cell cannot hold (openpyxl refuses them).
_NOT_IN_XLSX = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_DIFFERS_FILL = "FFF4E5"


def _round(value: Decimal | None, quantum: Decimal) -> Decimal | None:
    return None if value is None else value.quantize(quantum, ROUND_HALF_UP)


def _joined(items) -> str:
    return "; ".join(str(item) for item in items)


def _fit(row: MatrixRow) -> str:
    facts = row.fit_facts
    if not facts.exists:
        return _("No compute demand saved")
    return _("Yes") if facts.meets and not facts.error else _("No")


def _spec(row: MatrixRow) -> str:
    if row.spec.confirmed:
        return _("Confirmed")
    return _("Missing: %(items)s") % {"items": ", ".join(row.spec.missing)}


def _unit_cost(row: MatrixRow, name: str) -> Decimal | None:
    unit, _problem = row.unit_cost
    return _round(getattr(unit, name), _MONEY) if unit is not None else None


def _headline(row: MatrixRow, key: str, places: int | None) -> Any:
    value = (row.verification.headline or {}).get(key) if row.verification else None
    if isinstance(value, float) and places is not None:
        return round(value, places) if places else round(value)
    return value


def _term(row: MatrixRow, name: str) -> Any:
    """A contract term as a number (percent, hours, days) or its label; blank if not stated."""
    value = getattr(row.terms.values, name) if row.terms else None
    if value is None or value == "":
        return None
    if isinstance(value, str):
        term = next(t for t in contract_terms.TERMS if t.name == name)
        return term_shown(term, value)
    return value


@dataclass(frozen=True)
class Column:
    label: Promise
    value: Callable[[MatrixRow], Any]
    mark: str = ""  # the page's mark this column carries, filled in the XLSX


COLUMNS: tuple[Column, ...] = (
    Column(gettext_lazy("Vendor"), lambda r: str(r.offer.vendor)),
    Column(gettext_lazy("Hardware"), lambda r: r.hardware),
    Column(gettext_lazy("Meets the compute demand"), _fit, "fit"),
    Column(gettext_lazy("GPUs short"), lambda r: r.gpus_short),
    Column(
        gettext_lazy("Shortfalls"),
        lambda r: r.fit_facts.error or " ".join(r.fit_facts.shortfalls),
    ),
    Column(gettext_lazy("Declared spec"), _spec, "spec"),
    Column(gettext_lazy("Currency"), lambda r: r.offer.currency),
    Column(
        gettext_lazy("Price per GPU-hour (prepayment included)"),
        lambda r: _round(r.price.effective_cost_per_gpu_hour, _RATE) if r.price else None,
        "price",
    ),
    Column(
        gettext_lazy("Prepayment (whole contract)"),
        lambda r: _round(r.price.prepayment_amount, _MONEY) if r.price else None,
    ),
    Column(
        gettext_lazy("Cost of the capacity needed"),
        lambda r: _round(r.needed_cost.total, _MONEY) if r.needed_cost else None,
        "cost",
    ),
    Column(
        gettext_lazy("GPUs priced"),
        lambda r: r.needed_cost.gpus if r.needed_cost else None,
    ),
    Column(
        gettext_lazy("Hours priced"),
        lambda r: r.needed_cost.hours if r.needed_cost else None,
    ),
    Column(
        gettext_lazy("Why not priced"),
        lambda r: r.comparison.needed_cost_problem if r.needed_cost is None else "",
    ),
    Column(
        gettext_lazy("Cost per million output tokens"),
        lambda r: _unit_cost(r, "per_million_output_tokens"),
    ),
    Column(
        gettext_lazy("Cost per thousand requests"),
        lambda r: _unit_cost(r, "per_thousand_requests"),
    ),
    Column(
        gettext_lazy("Why no cost per unit of work"),
        lambda r: r.unit_cost[1],
    ),
    Column(gettext_lazy("Weighted score"), lambda r: r.score.total, "score"),
    Column(gettext_lazy("Reviewers"), lambda r: r.score.reviewer_count),
    Column(gettext_lazy("Reviewer spread"), lambda r: r.score.spread),
    Column(gettext_lazy("Open red flags"), lambda r: _joined(r.checklist.red_flags), "flags"),
    Column(gettext_lazy("Not reviewed"), lambda r: _joined(r.checklist.not_reviewed)),
    Column(gettext_lazy("Waivers in force"), lambda r: _joined(r.checklist.waived)),
    Column(
        gettext_lazy("Evidence verdict"),
        lambda r: r.evidence.verdict_label if r.evidence.exists else _("No evidence"),
        "evidence",
    ),
    Column(gettext_lazy("Best output tokens/s"), lambda r: _headline(r, "max_output_tok_s", 1)),
    Column(
        gettext_lazy("P50 time to first token (ms)"),
        lambda r: _headline(r, "ttft_p50_ms_lowest_level", 0),
    ),
    Column(
        gettext_lazy("Highest concurrency within SLOs"),
        lambda r: _headline(r, "max_concurrency_within_slo", None),
    ),
    Column(gettext_lazy("BF16 matmul"), lambda r: r.bf16_matmul),
    Column(gettext_lazy("Gates held"), lambda r: r.gates_held, "gates"),
    Column(gettext_lazy("Gates"), lambda r: len(r.gates.gates)),
    Column(gettext_lazy("Open gates"), lambda r: _joined(g.title for g in r.open_gates)),
    Column(gettext_lazy("Acceptance"), lambda r: r.acceptance.text),
    *(
        Column(term.label, functools.partial(_term, name=term.name))
        for term in contract_terms.TERMS
    ),
    Column(
        gettext_lazy("Prepayment premium over ordinary customers (%)"),
        lambda r: (
            _round(r.terms.premium * 100, _MONEY)
            if r.terms and r.terms.premium is not None
            else None
        ),
    ),
    Column(
        gettext_lazy("Contract term findings"),
        lambda r: _joined(f.message for f in r.terms.findings) if r.terms else "",
    ),
)


def _cell(value: Any) -> Any:
    """A value as a spreadsheet should hold it: text that cannot run as a formula."""
    if isinstance(value, str):
        return csv_safe.csv_cell(value)
    return value


def matrix_table(rows: list[MatrixRow]) -> tuple[list[str], list[list[Any]]]:
    """The headings and one list of values per offer, formula-safe."""
    headings = [_cell(str(column.label)) for column in COLUMNS]
    return headings, [[_cell(column.value(row)) for column in COLUMNS] for row in rows]


def matrix_filename(case, extension: str) -> str:
    """``offer-matrix-12-gpu-cluster-for-chat.csv``: the case's id and, in ASCII, its name."""
    name = slugify(case.name)[:60].strip("-")
    stem = f"offer-matrix-{case.pk}" + (f"-{name}" if name else "")
    return f"{stem}.{extension}"


class _Echo:
    """A file whose write hands the line back: csv's writer then yields each line."""

    def write(self, value: str) -> str:
        return value


def matrix_csv(rows: list[MatrixRow]) -> Iterator[str]:
    """The CSV, line by line, for a streamed response; the values are read now, so the
    lines hold what the matrix held when it was asked for."""
    headings, values = matrix_table(rows)
    writer = csv_safe.writer(_Echo())

    def lines() -> Iterator[str]:
        yield writer.writerow(headings)
        for line in values:
            yield writer.writerow("" if value is None else value for value in line)

    return lines()


def matrix_xlsx(rows: list[MatrixRow], *, title: str, out: BinaryIO) -> None:
    """The XLSX, written into ``out`` (a temporary file the response streams) row by row:
    openpyxl's write-only workbook keeps no sheet of cells in memory."""
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Font, PatternFill
    from openpyxl.utils import get_column_letter

    headings, values = matrix_table(rows)
    book = Workbook(write_only=True)
    sheet = book.create_sheet(sheet_name(_("Offer matrix")))
    book.properties.title = _NOT_IN_XLSX.sub("", title)
    # A write-only sheet takes its column widths and panes before its first row.
    for index, heading in enumerate(headings, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = min(40, max(10, len(heading)))
    sheet.freeze_panes = "B2"
    bold = Font(bold=True)
    fill = PatternFill("solid", fgColor=_DIFFERS_FILL)

    def text(value: str) -> WriteOnlyCell:
        cell = WriteOnlyCell(sheet, value=_NOT_IN_XLSX.sub("", value))
        cell.data_type = "s"  # text, whatever it begins with
        return cell

    header = []
    for heading in headings:
        cell = text(heading)
        cell.font = bold
        header.append(cell)
    sheet.append(header)
    for row, line in zip(rows, values, strict=True):
        cells = []
        for column, value in zip(COLUMNS, line, strict=True):
            cell = text(value) if isinstance(value, str) else WriteOnlyCell(sheet, value=value)
            mark = row.marks.get(column.mark) if column.mark else None
            if mark is not None and mark.differs:
                cell.fill = fill
            cells.append(cell)
        sheet.append(cells)
    book.save(out)

"""Records as XLSX workbooks, written for printing and read back after offline editing.

One module writes and reads every workbook a page offers; each app only lists its
columns (``apps/<app>/spreadsheet.py``). The conventions are those of the offer
matrix export (``apps.casework.matrix_files``): numbers are written as numbers,
text goes through ``apps.core.csv_safe`` and is stored as text, so nothing a
record holds can run as a formula.

Writing: a bold, frozen, wrapped header row repeated on every printed page,
column widths, fit to the page's width, landscape where the sheet is wide.

Reading back (``workbook_read``) checks the whole workbook before anything is
written, and names the cell of each problem:

* the file: at most ``MAX_BYTES``, an XLSX zip (not ``.xlsm``, no ``vbaProject``,
  no macro-enabled content type), its unpacked size bounded;
* every cell of every sheet: no formula (formulas are refused, never evaluated);
* the hidden ``Diligence`` sheet: the kind of record, which record, and the
  version exported, so a workbook of an older version is refused like a stale form;
* the record's sheet, found by its name in any language of the site; its header
  row, column by column, in any language of the site (a moved, renamed or
  missing column is refused); the first column holds each row's key (the
  criterion, item or question it fills), and every key appears exactly once;
* each editable cell: a number where a number goes, in its range; a choice by
  its stored value or its label in any language of the site.
"""

import io
import re
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.core import csv_safe
from apps.core.uploads import UploadPolicy

XLSX_CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
MAX_BYTES = 5 * 1024 * 1024
# Unpacked, a workbook of a few hundred rows is far below this; a zip bomb is not.
MAX_UNPACKED_BYTES = 50 * 1024 * 1024
META_SHEET = "Diligence"  # the product's name: the same in every language
LISTS_SHEET = "Diligence lists"  # the choices the drop-down lists offer, hidden
MAX_ERRORS = 30

TEXT, INTEGER, CHOICE = "text", "integer", "choice"
_NOT_IN_XLSX = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_SHEET_NAME_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")
_MACRO_CONTENT = re.compile(rb"macroEnabled|vbaProject", re.IGNORECASE)
_DIGITS = re.compile(r"^\s*[+-]?\d+\s*$")

# Pages that import take a body of at most the workbook's bound, refused unread above it.
UPLOAD_POLICY = UploadPolicy(lambda: MAX_BYTES, length_required=True)

Choices = Sequence[tuple[str, Any]]


@dataclass(frozen=True)
class Column:
    """One column: its heading, how wide, and what an edited cell may hold."""

    key: str
    label: Promise
    width: int = 20
    kind: str = TEXT
    editable: bool = False
    minimum: int | None = None
    maximum: int | None = None
    # The choices of a row, by the row's key (a questionnaire's answers differ per question).
    choices: Callable[[str], Choices] | None = None
    # Whether the row takes a value in this column at all (None: every row does).
    applies: Callable[[str], bool] | None = None
    max_length: int | None = None


@dataclass(frozen=True)
class SheetSpec:
    """A record's sheet: its name, its columns; the first column holds each row's key."""

    kind: str  # the kind of record, written in the hidden sheet: "scorecard"
    title: Promise
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class Stamp:
    """What the hidden sheet says about the workbook: which record, at which version."""

    kind: str
    record: str
    version: int
    # What else an import must find unchanged, e.g. the criteria revision a scorecard uses.
    revision: str = ""


@dataclass
class Imported:
    """A workbook read and checked: per row key, the editable columns' values."""

    rows: dict[str, dict[str, Any]]
    filename: str
    sheet: str = ""
    spec: SheetSpec | None = None
    row_numbers: dict[str, int] = field(default_factory=dict)

    def at(self, key: str, column_key: str, problem: str) -> str:
        """``problem`` placed at the cell of row ``key``, column ``column_key``."""
        from openpyxl.utils import get_column_letter

        assert self.spec is not None
        index = next(i for i, c in enumerate(self.spec.columns) if c.key == column_key)
        cell = f"{get_column_letter(index + 1)}{self.row_numbers[key]}"
        return _where(self.sheet, cell, problem)


class SpreadsheetRefused(Exception):
    """The workbook is not taken; ``problems`` says why, each with its cell where one applies."""

    def __init__(self, problems: list[str], *, stale: bool = False) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.stale = stale


class SpreadsheetImportForm(forms.Form):
    """The file field and button on an edit page."""

    workbook = forms.FileField(
        label=gettext_lazy("Spreadsheet (XLSX) exported from this page"),
        help_text=gettext_lazy(
            "Fill it in offline and upload it here; it is checked whole and nothing is "
            "saved unless every cell is right."
        ),
    )

    def refuse(self, refused: SpreadsheetRefused) -> None:
        for problem in refused.problems:
            self.add_error("workbook", problem)


# ---------------------------------------------------------------- writing


def sheet_name(title: Any) -> str:
    """A sheet's name: at most 31 characters, none of []:*?/\\."""
    return _SHEET_NAME_FORBIDDEN.sub(" ", str(title))[:31]


def cell_value(value: Any) -> Any:
    """A value as the workbook holds it: text that cannot run as a formula, numbers as numbers."""
    if isinstance(value, Promise):
        value = str(value)
    if isinstance(value, str):
        return _NOT_IN_XLSX.sub("", csv_safe.csv_cell(value))
    return value


@dataclass
class Sheet:
    """One sheet to write: headings, rows, widths, and which columns wrap."""

    title: Any
    headings: list[str]
    rows: list[list[Any]]
    widths: list[int]
    wrap: set[int] = field(default_factory=set)  # 0-based column indexes
    freeze: str = "A2"
    # (row, column), both 0-based in ``rows``: the labels that cell's drop-down list offers.
    choices: dict[tuple[int, int], tuple[str, ...]] = field(default_factory=dict)


def spec_sheet(spec: SheetSpec, rows: Iterable[Sequence[Any]]) -> Sheet:
    """A record's sheet from its spec: one list of values per row, in the spec's column order."""
    lines = [list(row) for row in rows]
    choices = {}
    for r, line in enumerate(lines):
        for c, column in enumerate(spec.columns):
            takes = column.applies is None or column.applies(str(line[0]))
            if column.editable and column.kind == CHOICE and column.choices and takes:
                choices[(r, c)] = tuple(str(label) for _v, label in column.choices(str(line[0])))
    return Sheet(
        title=spec.title,
        headings=[str(column.label) for column in spec.columns],
        rows=lines,
        widths=[column.width for column in spec.columns],
        wrap={i for i, column in enumerate(spec.columns) if column.kind == TEXT},
        freeze="B2",
        choices=choices,
    )


def _drop_downs(book, sheet, spec: Sheet, lists: dict[tuple[str, ...], str]) -> None:
    """A drop-down list on each choice cell; the lists are kept in a hidden sheet.

    The list only offers: a value typed otherwise is left to the import to judge.
    """
    from openpyxl.utils import get_column_letter, quote_sheetname
    from openpyxl.worksheet.datavalidation import DataValidation

    cells: dict[tuple[str, ...], list[str]] = {}
    for (r, c), labels in spec.choices.items():
        cells.setdefault(labels, []).append(f"{get_column_letter(c + 1)}{r + 2}")
    for labels, coordinates in cells.items():
        if labels not in lists:
            store = (
                book[LISTS_SHEET]
                if LISTS_SHEET in book.sheetnames
                else book.create_sheet(LISTS_SHEET)
            )
            store.sheet_state = "hidden"
            letter = get_column_letter(len(lists) + 1)
            for n, label in enumerate(labels, start=1):
                store[f"{letter}{n}"] = cell_value(label)
                store[f"{letter}{n}"].data_type = "s"
            lists[labels] = f"{quote_sheetname(LISTS_SHEET)}!${letter}$1:${letter}${len(labels)}"
        validation = DataValidation(
            type="list", formula1=lists[labels], allow_blank=True, showErrorMessage=False
        )
        for coordinate in coordinates:
            validation.add(coordinate)
        sheet.add_data_validation(validation)


def workbook_bytes(sheets: Sequence[Sheet], *, title: str, stamp: Stamp | None = None) -> bytes:
    """The workbook of ``sheets``, formatted to print, with ``stamp`` in a hidden sheet."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.properties import PageSetupProperties

    book = Workbook()
    first = book.active
    assert first is not None  # a new workbook has one sheet
    book.remove(first)
    book.properties.title = _NOT_IN_XLSX.sub("", title)[:200]
    header_fill = PatternFill("solid", fgColor="E8EEF4")
    lists: dict[tuple[str, ...], str] = {}
    for spec in sheets:
        sheet = book.create_sheet(sheet_name(spec.title))
        sheet.append([cell_value(heading) for heading in spec.headings])
        for cell in sheet[1]:
            cell.font = Font(bold=True)
            cell.fill = header_fill
            cell.alignment = Alignment(wrap_text=True, vertical="top")
        for row in spec.rows:
            sheet.append([cell_value(value) for value in row])
            for index, cell in enumerate(sheet[sheet.max_row]):
                if isinstance(cell.value, str):
                    cell.data_type = "s"  # text, whatever it begins with
                cell.alignment = Alignment(wrap_text=index in spec.wrap, vertical="top")
        for index, width in enumerate(spec.widths, start=1):
            sheet.column_dimensions[get_column_letter(index)].width = width
        sheet.freeze_panes = spec.freeze
        sheet.print_title_rows = "1:1"
        sheet.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
        sheet.page_setup.fitToWidth = 1
        sheet.page_setup.fitToHeight = 0  # as many pages down as it takes
        sheet.page_setup.paperSize = sheet.PAPERSIZE_A4
        if sum(spec.widths) > 100:
            sheet.page_setup.orientation = "landscape"
        sheet.print_options.gridLines = True
        if spec.choices:
            _drop_downs(book, sheet, spec, lists)
    if stamp is not None:
        meta = book.create_sheet(META_SHEET)
        meta.append(["kind", stamp.kind])
        meta.append(["record", stamp.record])
        meta.append(["version", stamp.version])
        meta.append(["revision", stamp.revision])
        meta.sheet_state = "hidden"
        meta.protection.sheet = True
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def record_workbook(
    spec: SheetSpec, rows: Iterable[Sequence[Any]], *, title: str, stamp: Stamp
) -> bytes:
    """The workbook of one record that can be filled in and imported back."""
    return workbook_bytes([spec_sheet(spec, rows)], title=title, stamp=stamp)


# ---------------------------------------------------------------- reading


def _in_every_language(text: Any) -> set[str]:
    """``text`` as each language of the site says it, compared without case or outer spaces."""
    found = set()
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            found.add(_normal(str(text)))
    return found


def _normal(value: Any) -> str:
    return re.sub(r"\s+", " ", str(value)).strip().casefold()


def _where(sheet: str, cell: str, problem: str) -> str:
    return _("Sheet %(sheet)s, cell %(cell)s: %(problem)s") % {
        "sheet": sheet,
        "cell": cell,
        "problem": problem,
    }


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value)
    # The export wrote formula-leading text with a leading quote; take it off again.
    if text.startswith(csv_safe.ESCAPE) and text[1:].startswith(csv_safe.FORMULA_LEADS):
        text = text[1:]
    return text.strip()


def _file_problems(upload) -> list[str]:
    """Why the uploaded file is not a plain XLSX workbook of a sane size, before openpyxl."""
    name = str(getattr(upload, "name", "") or "")
    size = getattr(upload, "size", None)
    if size is not None and size > MAX_BYTES:
        return [
            _("The file is %(size)s; a workbook of at most %(limit)s is taken.")
            % {"size": filesizeformat(size), "limit": filesizeformat(MAX_BYTES)}
        ]
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if extension in ("xlsm", "xltm", "xlsb", "xlam"):
        return [_("Macro-enabled workbooks are refused: save it as a plain .xlsx workbook.")]
    if extension != "xlsx":
        return [_("Only an .xlsx workbook exported from this page is taken.")]
    content_type = (getattr(upload, "content_type", "") or "").lower()
    if "macroenabled" in content_type:
        return [_("Macro-enabled workbooks are refused: save it as a plain .xlsx workbook.")]
    upload.seek(0)
    try:
        with zipfile.ZipFile(upload) as archive:
            entries = archive.infolist()
            names = [entry.filename for entry in entries]
            if "[Content_Types].xml" not in names:
                return [_("This file is not an XLSX workbook.")]
            if sum(entry.file_size for entry in entries) > MAX_UNPACKED_BYTES:
                return [_("This workbook unpacks to too much data to be read.")]
            content_types = archive.read("[Content_Types].xml")
            macro = any("vbaproject" in n.lower() for n in names)
            if macro or _MACRO_CONTENT.search(content_types):
                return [
                    _("Macro-enabled workbooks are refused: save it as a plain .xlsx workbook.")
                ]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, KeyError):
        return [_("This file is not an XLSX workbook.")]
    finally:
        upload.seek(0)
    return []


def _formula_problems(book) -> list[str]:
    from openpyxl.worksheet.formula import ArrayFormula, DataTableFormula

    problems = []
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                formula = cell.data_type == "f" or isinstance(
                    cell.value, ArrayFormula | DataTableFormula
                )
                if formula:
                    problems.append(
                        _where(
                            sheet.title,
                            cell.coordinate,
                            _("formulas are refused (they are never run); type the value."),
                        )
                    )
    return problems


def _stamp(book) -> Stamp | None:
    if META_SHEET not in book.sheetnames:
        return None
    values = {
        str(row[0]): row[1]
        for row in book[META_SHEET].iter_rows(min_row=1, max_row=10, max_col=2, values_only=True)
        if row and row[0] is not None
    }
    try:
        return Stamp(
            str(values["kind"]),
            str(values["record"]),
            int(values["version"]),
            str(values.get("revision") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _find_sheet(book, spec: SheetSpec):
    """The record's sheet, by its name in any language of the site."""
    wanted = set()
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            wanted.add(_normal(sheet_name(spec.title)))
    for sheet in book.worksheets:
        if _normal(sheet.title) in wanted:
            return sheet
    return None


def _cell_problem(column: Column, row_key: str, raw: Any) -> tuple[Any, str | None]:
    """The value a cell stands for, or why it cannot be taken."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return (None if column.kind == INTEGER else ""), None
    if column.applies is not None and not column.applies(row_key):
        return None, _("this row takes no value in this column; leave it empty.")
    if column.kind == INTEGER:
        if isinstance(raw, bool):
            return None, _("a whole number is needed here, not %(value)s.") % {"value": raw}
        if isinstance(raw, float) and raw.is_integer():
            raw = int(raw)
        if isinstance(raw, str) and _DIGITS.match(raw):
            raw = int(raw)
        if not isinstance(raw, int):
            return None, _("a whole number is needed here, not “%(value)s”.") % {
                "value": _text(raw)[:60]
            }
        low, high = column.minimum, column.maximum
        if (low is not None and raw < low) or (high is not None and raw > high):
            if high is None:
                message = _("the number must be at least %(low)s; found %(value)s.")
            else:
                message = _("the number must be from %(low)s to %(high)s; found %(value)s.")
            return None, message % {"low": low, "high": high, "value": raw}
        return raw, None
    if column.kind == CHOICE:
        text = _normal(_text(raw))
        options = column.choices(row_key) if column.choices else ()
        for value, label in options:
            if text == _normal(value) or text in _in_every_language(label):
                return value, None
        return None, _("“%(value)s” is not one of the choices: %(choices)s.") % {
            "value": _text(raw)[:60],
            "choices": "; ".join(str(label) for _v, label in options),
        }
    text = _text(raw)
    if column.max_length is not None and len(text) > column.max_length:
        return None, _("at most %(n)s characters are taken here.") % {"n": column.max_length}
    return text, None


def workbook_read(upload, spec: SheetSpec, *, expected: Stamp, keys: Sequence[str]) -> Imported:
    """The edited values of the record's workbook, checked whole; ``SpreadsheetRefused`` if not.

    ``keys`` are the row keys the record has, in order; each must appear exactly once.
    """
    problems = _file_problems(upload)
    if problems:
        raise SpreadsheetRefused(problems)
    from openpyxl import load_workbook

    try:
        book = load_workbook(upload, read_only=False, data_only=False, keep_vba=False)
    except Exception:  # openpyxl raises many kinds on a damaged file
        raise SpreadsheetRefused([_("This file is not an XLSX workbook.")]) from None
    finally:
        upload.seek(0)
    problems = _formula_problems(book)
    if problems:
        raise SpreadsheetRefused(problems[:MAX_ERRORS])
    stamp = _stamp(book)
    if stamp is None or stamp.kind != expected.kind:
        raise SpreadsheetRefused(
            [
                _(
                    "This is not a workbook exported from this page (its hidden sheet "
                    "%(sheet)s is missing or changed): download it from this page and fill "
                    "that in."
                )
                % {"sheet": META_SHEET}
            ]
        )
    if stamp.record != expected.record:
        raise SpreadsheetRefused(
            [_("This workbook was exported for another record: download this one's.")]
        )
    if stamp.version != expected.version:
        raise SpreadsheetRefused(
            [
                _(
                    "This workbook was exported from version %(old)s, and the record has "
                    "been saved since (now version %(new)s). Download it again and apply "
                    "your changes to the new copy."
                )
                % {"old": stamp.version, "new": expected.version}
            ],
            stale=True,
        )
    if stamp.revision != expected.revision:
        raise SpreadsheetRefused(
            [
                _(
                    "What this workbook was made against has changed since it was exported. "
                    "Download it again and apply your changes to the new copy."
                )
            ],
            stale=True,
        )
    sheet = _find_sheet(book, spec)
    if sheet is None:
        raise SpreadsheetRefused(
            [_("The sheet %(sheet)s is missing.") % {"sheet": sheet_name(spec.title)}]
        )
    return _rows_read(sheet, spec, keys=keys, filename=str(getattr(upload, "name", "")))


def _rows_read(sheet, spec: SheetSpec, *, keys: Sequence[str], filename: str) -> Imported:
    from openpyxl.utils import get_column_letter

    title = sheet.title
    problems: list[str] = []
    header = next(sheet.iter_rows(min_row=1, max_row=1, values_only=True), ())
    for index, column in enumerate(spec.columns):
        found = header[index] if index < len(header) else None
        if _normal(_text(found)) not in _in_every_language(column.label):
            letter = get_column_letter(index + 1)
            problems.append(
                _where(
                    title,
                    f"{letter}1",
                    _("the column “%(expected)s” belongs here; found “%(found)s”.")
                    % {"expected": column.label, "found": _text(found)[:60]},
                )
            )
    for index in range(len(spec.columns), len(header)):
        if _text(header[index]):
            problems.append(
                _where(
                    title,
                    f"{get_column_letter(index + 1)}1",
                    _("this column is not one of the workbook's; remove it."),
                )
            )
    if problems:
        raise SpreadsheetRefused(problems[:MAX_ERRORS])
    known = {str(key): str(key) for key in keys}
    rows: dict[str, dict[str, Any]] = {}
    row_numbers: dict[str, int] = {}
    width = len(spec.columns)
    for number, line in enumerate(
        sheet.iter_rows(min_row=2, max_col=max(width, sheet.max_column), values_only=True), start=2
    ):
        if all(value is None or _text(value) == "" for value in line):
            continue
        key = _text(line[0])
        if key not in known:
            problems.append(
                _where(
                    title,
                    f"A{number}",
                    _("“%(key)s” is not a row of this record.") % {"key": key[:60]},
                )
            )
            continue
        if key in rows:
            problems.append(
                _where(title, f"A{number}", _("“%(key)s” appears twice.") % {"key": key[:60]})
            )
            continue
        values: dict[str, Any] = {}
        for index, column in enumerate(spec.columns):
            if not column.editable:
                continue
            raw = line[index] if index < len(line) else None
            value, problem = _cell_problem(column, key, raw)
            if problem:
                problems.append(_where(title, f"{get_column_letter(index + 1)}{number}", problem))
            values[column.key] = value
        rows[key] = values
        row_numbers[key] = number
    missing = [key for key in known if key not in rows]
    if missing:
        problems.append(
            _("Sheet %(sheet)s: the rows of %(keys)s are missing.")
            % {"sheet": title, "keys": ", ".join(missing[:10])}
        )
    if problems:
        raise SpreadsheetRefused(problems[:MAX_ERRORS])
    return Imported(rows=rows, filename=filename, sheet=title, spec=spec, row_numbers=row_numbers)


def import_reason(filename: str) -> str:
    """The change reason history keeps for an import."""
    name = re.sub(r"[^\w.\- ]", "", filename.rsplit("/", 1)[-1])[:120] or "workbook.xlsx"
    return f"Imported from {name}"


def workbook_filename(stem: str, pk: Any, name: str = "") -> str:
    """``checklist-offer-12-aurora.xlsx``: the record's kind and id and, in ASCII, its name."""
    from django.utils.text import slugify

    slug = slugify(name)[:50].strip("-")
    return f"{stem}-{pk}" + (f"-{slug}" if slug else "") + ".xlsx"


def xlsx_response(content: bytes, filename: str):
    """The workbook as a download."""
    from django.http import HttpResponse

    response = HttpResponse(content, content_type=XLSX_CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def run_import(
    form: SpreadsheetImportForm, do_import: Callable[[Any], Any]
) -> tuple[Any, int | None]:
    """Import the form's workbook with ``do_import(upload)``: its result and None, or None
    and the status (400, or 409 for a stale workbook or record) with the refusal shown on
    the form."""
    from apps.core.services import SERVICE_ERRORS, ConcurrentEditError

    if not form.is_valid():
        return None, 400
    try:
        return do_import(form.cleaned_data["workbook"]), None
    except SpreadsheetRefused as refused:
        form.refuse(refused)
        return None, 409 if refused.stale else 400
    except SERVICE_ERRORS as error:
        import_service_errors(form, error)
        return None, 409 if isinstance(error, ConcurrentEditError) else 400


def import_service_errors(form: SpreadsheetImportForm, error: Exception) -> None:
    """A service's refusal of the imported values, shown on the import's file field."""
    from apps.core.forms import stale_edit_message
    from apps.core.services import ConcurrentEditError

    if isinstance(error, ConcurrentEditError):
        form.add_error(
            "workbook", stale_edit_message(error.current.version, error.expected_version)
        )
        return
    if isinstance(error, forms.ValidationError) and hasattr(error, "error_dict"):
        for key, messages in error.message_dict.items():
            for message in messages:
                form.add_error("workbook", f"{key}: {message}" if key != "__all__" else message)
        return
    form.add_error("workbook", "; ".join(getattr(error, "messages", [str(error)])))

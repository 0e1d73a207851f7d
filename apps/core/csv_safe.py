"""CSV writers whose cells a spreadsheet will not run as formulas.

A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
is read by Excel, LibreOffice and Google Sheets as a formula, so a case named
``=HYPERLINK("http://x","y")`` would become a live link (or worse) in an
auditor's spreadsheet (OWASP "CSV injection"). Such text cells are written
with a leading single quote, which spreadsheets show as text. Plain numbers
(``-12.5``, ``+3``, ``-1e3``) cannot run anything and stay numbers; values that
are not text (ints, decimals, dates, None) are written as they are.

Every CSV the application writes goes through ``writer`` or ``DictWriter``
here; readers of the files that need the exact values use the JSON written
beside them.
"""

import csv
import re
from collections.abc import Iterable, Mapping
from typing import Any

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
ESCAPE = "'"
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(value: Any) -> Any:
    """``value`` as a spreadsheet will read it as data, never as a formula."""
    if not isinstance(value, str) or not value.startswith(FORMULA_LEADS):
        return value
    if _PLAIN_NUMBER.match(value):
        return value
    return ESCAPE + value


def csv_row(values: Iterable[Any]) -> list[Any]:
    return [csv_cell(value) for value in values]


class _Writer:
    def __init__(self, handle, **kwargs) -> None:
        self._writer = csv.writer(handle, **kwargs)

    @property
    def dialect(self):
        return self._writer.dialect

    def writerow(self, row: Iterable[Any]):
        # csv's writer returns what the file's write() returned (streamed responses use it).
        return self._writer.writerow(csv_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(handle, **kwargs) -> _Writer:
    """``csv.writer`` that escapes formula-leading cells."""
    return _Writer(handle, **kwargs)


class DictWriter(csv.DictWriter):
    """``csv.DictWriter`` that escapes formula-leading cells (the header too)."""

    def writerow(self, rowdict: Mapping[str, Any]):
        return super().writerow({key: csv_cell(value) for key, value in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for rowdict in rowdicts:
            self.writerow(rowdict)

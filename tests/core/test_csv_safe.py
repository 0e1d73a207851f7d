"""CSV cells a spreadsheet would run as formulas are written as text (OWASP "CSV injection")."""

import csv
import io
from datetime import date
from decimal import Decimal

import pytest

from apps.core import csv_safe

CELLS = [
    # (value written, cell a spreadsheet reads)
    ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
    ("+1+1", "'+1+1"),
    ("-2+3", "'-2+3"),
    ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"),
    ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "'\r=1+1"),
    ("-", "'-"),
    # plain numbers, written as text or as numbers, stay numbers
    ("-12.5", "-12.5"),
    ("+3", "+3"),
    ("-1e3", "-1e3"),
    ("-.5", "-.5"),
    (Decimal("-12.5"), "-12.5"),
    (-7, "-7"),
    (-0.25, "-0.25"),
    # anything else is untouched
    ("Quote v2 = final", "Quote v2 = final"),
    (" =1+1", " =1+1"),
    ("", ""),
    (None, ""),
    (date(2026, 1, 2), "2026-01-02"),
]


@pytest.mark.parametrize("value,cell", CELLS)
def test_writer_escapes_formula_leading_cells(value, cell):
    out = io.StringIO()
    csv_safe.writer(out).writerow(["name", value])
    assert next(csv.reader(io.StringIO(out.getvalue()))) == ["name", cell]


@pytest.mark.parametrize("value,cell", CELLS)
def test_dict_writer_escapes_formula_leading_cells(value, cell):
    out = io.StringIO()
    writer = csv_safe.DictWriter(out, fieldnames=["id", "value"])
    writer.writeheader()
    writer.writerows([{"id": 1, "value": value}])
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows == [["id", "value"], ["1", cell]]


def test_the_streaming_writer_returns_the_written_line():
    class Echo:
        def write(self, value):
            return value

    assert csv_safe.writer(Echo()).writerow(["=1", "-1"]) == "'=1,-1\r\n"

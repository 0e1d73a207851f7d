"""Exports escape spreadsheet formulas: the CSVs in the case export and the timeline CSV."""

import csv
import io
import json
import zipfile
from decimal import Decimal

import pytest
from django.urls import reverse

from apps.audit.export_check import verify_export
from apps.audit.exports import build_case_export
from apps.offers.models import Offer
from apps.offers.services import offer_update
from tests.audit.tampering import raw_update
from tests.factories import make_case, make_offer

FORMULA = '=HYPERLINK("http://x","y")'


@pytest.fixture
def case(priya):
    case = make_case(priya, name=FORMULA)
    offer = make_offer(priya, case)
    offer_update(actor=priya, offer=offer, fields={"notes": "-12.5"}, reason="@SUM(A1:A9)")
    # A stored negative number, whatever put it there, is exported as a number.
    raw_update(Offer, offer.pk, "unit_price", Decimal("-12.5"))
    return case


def _csv(archive: zipfile.ZipFile, name: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(archive.read(name).decode("utf-8"))))


def test_the_case_export_escapes_formulas_and_keeps_numbers(case):
    buffer = io.BytesIO()
    build_case_export(case, buffer)
    archive = zipfile.ZipFile(buffer)
    (case_row,) = _csv(archive, "records/cases.procurementcase.csv")
    assert case_row["name"] == "'" + FORMULA
    (offer_row,) = _csv(archive, "records/offers.offer.csv")
    assert offer_row["notes"] == "-12.5"
    assert Decimal(offer_row["unit_price"]) == Decimal("-12.5")
    # The JSON beside the CSV holds the exact value, and the export still verifies.
    (case_json,) = json.loads(archive.read("records/cases.procurementcase.json"))
    assert case_json["name"] == FORMULA
    assert verify_export(io.BytesIO(buffer.getvalue())).valid


def test_the_timeline_csv_escapes_formulas(case, browser_as):
    response = browser_as("aude").get(reverse("audit:case-timeline-csv", args=[case.pk]))
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    case_rows = [r for r in rows if r["record_type"] == "cases.procurementcase"]
    assert case_rows and {r["record"] for r in case_rows} == {"'" + FORMULA}
    assert "'@SUM(A1:A9)" in {r["reason"] for r in rows}
    assert not any(cell.startswith(("=", "@")) for row in rows for cell in row.values())

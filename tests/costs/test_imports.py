"""Importing usage and bills through the page and the API: all or nothing.

Priya (procurement) sets the budget and imports Aurora's bills; a bad row
refuses the whole file with its row number and stores nothing, neither rows
nor the file.
"""

import hashlib
import json

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.costs.bill_rows import MAX_FILE_BYTES
from apps.costs.models import CostImport, CostPeriod
from tests.costs.factories import CLEAN, IDLE, bill_csv, make_budget, make_import
from tests.factories import make_case, make_offer
from tests.stored import stored_names


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def case(priya):
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    return case


def stored_files(media) -> list:
    # Through the default storage: the same test runs on disk and in a bucket.
    return stored_names()


def nothing_stored(media) -> bool:
    return (
        not CostImport.objects.exists()
        and not CostPeriod.objects.exists()
        and not (stored_files(media))
    )


BAD_ROW = bill_csv(("2026-09", CLEAN), ("2026-10", CLEAN.replace("145252.00", "-5.00")))


def upload(client, case, raw: bytes, **extra):
    url = reverse("costs:import", args=[case.pk])
    return client.post(url, {"file": SimpleUploadedFile("bill.csv", raw, "text/csv"), **extra})


def test_page_import_keeps_the_file_with_its_sha256(browser_as, case, _media):
    raw = bill_csv(("2026-09", CLEAN), ("2026-10", IDLE))
    response = upload(browser_as("priya"), case, raw, note="September and October invoices")
    assert response.status_code == 302
    cost_import = CostImport.objects.get()
    assert cost_import.sha256 == hashlib.sha256(raw).hexdigest()
    assert cost_import.row_count == 2 and cost_import.imported_by.username == "priya"
    with default_storage.open(cost_import.storage_name) as stored:
        assert stored.read() == raw
    assert [f"{p.period:%Y-%m}" for p in CostPeriod.objects.all()] == ["2026-09", "2026-10"]
    page = browser_as("priya").get(reverse("costs:case", args=[case.pk])).content.decode()
    assert cost_import.sha256 in page and "Idle instances" in page


def test_page_import_with_a_bad_row_names_it_and_stores_nothing(browser_as, case, _media):
    response = upload(browser_as("priya"), case, BAD_ROW)
    assert response.status_code == 400
    assert "row 3, amount: negative amount" in response.content.decode()
    assert nothing_stored(_media)


@pytest.mark.parametrize(
    "raw,message",
    [
        (b"", "The submitted file is empty."),
        ("période\n".encode("latin-1"), "is not UTF-8"),
        (b"\x00\x01\x02binary", "not a CSV file"),
        (bill_csv(("2026-09", CLEAN)).replace(b"amount", b"amount,discount"), "unknown column"),
    ],
)
def test_page_refuses_files_that_are_not_a_bill(browser_as, case, _media, raw, message):
    response = upload(browser_as("priya"), case, raw)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert nothing_stored(_media)


def test_page_refuses_an_oversized_file_before_reading_it(browser_as, case, _media):
    response = upload(browser_as("priya"), case, b"x" * (MAX_FILE_BYTES + 1))
    assert response.status_code == 413
    assert nothing_stored(_media)


def test_a_month_already_imported_is_refused_unless_replaced(browser_as, priya, case, _media):
    first = make_import(priya, case, ("2026-09", CLEAN))
    again = bill_csv(("2026-09", IDLE), ("2026-10", CLEAN))
    response = upload(browser_as("priya"), case, again)
    assert response.status_code == 400
    assert "2026-09 was already imported" in response.content.decode()
    assert CostImport.objects.count() == 1 and len(stored_files(_media)) == 1

    response = upload(browser_as("priya"), case, again, replace="on")
    assert response.status_code == 302
    old, new_september, october = CostPeriod.objects.order_by("period", "pk")
    assert old.cost_import == first and old.superseded_by.replaces_periods
    assert old.superseded_at is not None and new_september.superseded_at is None
    assert old.history.first().history_change_reason.startswith("Replaced by import")
    assert len(stored_files(_media)) == 2  # the earlier file is never overwritten
    assert october.amount == new_september.amount


def test_the_same_file_twice_with_replace_keeps_both_files(priya, case, _media):
    raw_rows = ("2026-09", CLEAN)
    make_import(priya, case, raw_rows)
    make_import(priya, case, raw_rows, replace=True)
    names = [i.storage_name for i in CostImport.objects.all()]
    assert len(set(names)) == 2 and len(stored_files(_media)) == 2


def test_import_needs_a_budget_first(browser_as, priya, _media):
    case = make_case(priya)
    response = upload(browser_as("priya"), case, bill_csv(("2026-09", CLEAN)))
    assert response.status_code == 400
    assert "set the case&#x27;s budget first" in response.content.decode()


# API -------------------------------------------------------------------------


def api_path(case, suffix="imports/"):
    return f"/api/v1/cases/{case.pk}/costs/{suffix}"


def test_api_csv_import(api_as, case, _media):
    raw = bill_csv(("2026-09", CLEAN))
    response = api_as("priya").generic(
        "POST", api_path(case) + "?file_name=aurora-sep.csv", raw, content_type="text/csv"
    )
    assert response.status_code == 201, response.content
    assert response.json()["sha256"] == hashlib.sha256(raw).hexdigest()
    assert response.json()["file_name"] == "aurora-sep.csv"
    listed = api_as("aude").get(api_path(case)).json()
    assert [i["row_count"] for i in listed] == [1]


def test_api_csv_import_with_a_bad_row(api_as, case, _media):
    response = api_as("priya").generic("POST", api_path(case), BAD_ROW, content_type="text/csv")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        {
            "row": 3,
            "column": "amount",
            "reason": "negative amount: record a credit note with the vendor's next bill, "
            "not as a negative bill.",
        }
    ]
    assert nothing_stored(_media)


def _json_rows(*rows):
    columns = bill_csv().decode().strip().split(",")
    return [dict(zip(columns, [period, *cells.split(",")], strict=True)) for period, cells in rows]


def test_api_json_import_stores_the_body_as_sent(api_as, case, _media):
    body = json.dumps({"rows": _json_rows(("2026-09", CLEAN)), "note": "From the portal"})
    response = api_as("priya").generic(
        "POST", api_path(case), body.encode(), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    cost_import = CostImport.objects.get()
    assert cost_import.source == "api_json" and cost_import.note == "From the portal"
    with default_storage.open(cost_import.storage_name) as stored:
        assert stored.read() == body.encode()


def test_api_json_import_with_an_unknown_column_is_refused_by_name(api_as, case, _media):
    rows = _json_rows(("2026-09", CLEAN), ("2026-10", CLEAN))
    rows[1]["discount"] = "5"
    response = api_as("priya").post(api_path(case), {"rows": rows}, format="json")
    assert response.status_code == 400
    assert response.json()["problems"] == [
        {"row": 2, "column": "", "reason": "unknown column(s): discount."}
    ]
    assert nothing_stored(_media)


@pytest.mark.parametrize(
    "body,content_type,status",
    [
        (b"{not json", "application/json", 400),
        (b'{"rows": "nope"}', "application/json", 400),
        (b"<bill/>", "application/xml", 415),
        ("période\n".encode("latin-1"), "text/csv", 400),
        (b"", "text/csv", 400),
    ],
)
def test_api_refuses_bodies_that_are_not_bills(api_as, case, _media, body, content_type, status):
    response = api_as("priya").generic("POST", api_path(case), body, content_type=content_type)
    assert response.status_code == status, response.content
    assert nothing_stored(_media)


def test_api_checks_the_declared_size_before_reading(api_as, case, _media):
    response = api_as("priya").generic(
        "POST",
        api_path(case),
        b"period\n",
        content_type="text/csv",
        CONTENT_LENGTH=str(MAX_FILE_BYTES + 1),
    )
    assert response.status_code == 413
    assert nothing_stored(_media)


def test_api_replace_query_parameter(api_as, priya, case, _media):
    make_import(priya, case, ("2026-09", CLEAN))
    raw = bill_csv(("2026-09", IDLE))
    api = api_as("priya")
    refused = api.generic("POST", api_path(case), raw, content_type="text/csv")
    assert refused.status_code == 400
    assert refused.json()["problems"][0]["column"] == "period"
    replaced = api.generic("POST", api_path(case) + "?replace=true", raw, content_type="text/csv")
    assert replaced.status_code == 201 and replaced.json()["replaces_periods"] is True
    periods = api.get(api_path(case, "periods/")).json()
    assert [(p["period"], p["superseded_at"] is None) for p in periods] == [
        ("2026-09", False),
        ("2026-09", True),
    ]

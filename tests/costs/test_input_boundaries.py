"""The costs API and pages at their input boundaries: a reason, never a 500.

Priya imports Aurora's bills by token from a script, or from her signed-in browser
session; a body nested 10,000 levels deep or holding a 5,000-digit number is refused
with its reason, and nothing is stored. The largest amounts and rates the records hold
are stored, read back and reconciled; past them they are refused by name.
"""

import hashlib
import json
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from apps.costs.bill_rows import MAX_FILE_BYTES
from apps.costs.models import CostImport, CostPeriod
from tests.badinput.refusal import CountingInput, stored_state
from tests.costs.factories import CLEAN, HEADER, bill_csv, make_budget
from tests.factories import make_case, make_offer

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def case(priya):
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    return case


@pytest.fixture
def session(priya, case):
    """Priya's browser: signed in by cookie, and it must send the CSRF token it was given."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(priya)
    client.get(reverse("costs:case", args=[case.pk]))
    return client, client.cookies["csrftoken"].value


def url(case) -> str:
    return f"/api/v1/cases/{case.pk}/costs/imports/"


def nothing_imported() -> bool:
    return not CostImport.objects.exists() and not CostPeriod.objects.exists()


@pytest.mark.parametrize(
    "body,reason",
    [
        (b'{"rows": ' + b"[" * 10_000 + b"]" * 10_000 + b"}", "nested more than 64 levels deep"),
        (b"[" * 10_000 + b"]" * 10_000, "nested more than 64 levels deep"),
        (
            b'{"rows": [{"period": "2026-09", "tokens_in": ' + b"7" * 5_000 + b"}]}",
            "an integer has 5000 digits; at most 40 are read",
        ),
    ],
    ids=["deep_inside_rows", "deep_document", "integer_of_5000_digits"],
)
def test_hostile_json_is_a_400_with_its_reason_and_stores_nothing(
    api_as, case, media_root, body, reason
):
    api = api_as("priya")
    before = stored_state(media_root)
    response = api.generic("POST", url(case), body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert reason in response.json()["detail"]
    assert stored_state(media_root) == before
    assert nothing_imported()


def test_a_session_client_imports_text_csv_with_its_csrf_token(session, case):
    client, token = session
    raw = bill_csv(("2026-09", CLEAN))
    response = client.generic(
        "POST",
        url(case) + "?file_name=aurora-sep.csv",
        raw,
        content_type="text/csv",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 201, response.content
    assert response.json()["sha256"] == hashlib.sha256(raw).hexdigest()
    assert CostImport.objects.get().source == CostImport.Source.API_CSV


def test_a_session_client_still_needs_its_csrf_token(session, case, media_root):
    client, _token = session
    before = stored_state(media_root)
    raw = bill_csv(("2026-09", CLEAN))
    response = client.generic("POST", url(case), raw, content_type="text/csv")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert stored_state(media_root) == before


def test_a_session_client_imports_json_rows(session, case):
    client, token = session
    columns = bill_csv().decode().strip().split(",")
    row = dict(zip(columns, ["2026-09", *CLEAN.split(",")], strict=True))
    body = json.dumps({"rows": [row]}).encode()
    response = client.generic(
        "POST", url(case), body, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201, response.content
    assert CostImport.objects.get().sha256 == hashlib.sha256(body).hexdigest()


def test_a_token_client_imports_text_csv_as_before(api_as, case):
    raw = bill_csv(("2026-09", CLEAN))
    response = api_as("priya").generic("POST", url(case), raw, content_type="text/csv")
    assert response.status_code == 201, response.content
    assert response.json()["row_count"] == 1


@pytest.mark.parametrize("content_type", ["application/xml", "text/plain"])
def test_other_media_types_are_415_for_token_and_session_clients(
    api_as, session, case, content_type
):
    client, token = session
    by_token = api_as("priya").generic("POST", url(case), b"<bill/>", content_type=content_type)
    by_session = client.generic(
        "POST", url(case), b"<bill/>", content_type=content_type, HTTP_X_CSRFTOKEN=token
    )
    assert (by_token.status_code, by_session.status_code) == (415, 415)
    assert nothing_imported()


@pytest.mark.parametrize("client_kind", ["token", "session"])
def test_an_oversized_declared_body_is_refused_unread(
    api_as, session, case, media_root, client_kind
):
    if client_kind == "token":
        client, headers = api_as("priya"), {}
    else:
        client, token = session
        headers = {"HTTP_X_CSRFTOKEN": token}
    before = stored_state(media_root)
    stream = CountingInput(bill_csv(("2026-09", CLEAN)))
    response = client.generic(
        "POST",
        url(case),
        b"",
        content_type="text/csv",
        **headers,
        **{
            "wsgi.input": stream,
            "CONTENT_LENGTH": str(MAX_FILE_BYTES + 1),
            "CONTENT_TYPE": "text/csv",
        },
    )
    assert response.status_code == 413
    detail = response.json()["detail"].replace("\xa0", " ")  # filesizeformat's space
    assert detail == "The body is larger than the 1.0 MB this endpoint takes."
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


def test_a_5000_digit_count_in_a_bill_file_is_refused_by_name(api_as, case, media_root):
    api = api_as("priya")  # its token made before the snapshot
    before = stored_state(media_root)
    cells = CLEAN.split(",")
    cells[2] = "9" * 5000  # tokens_in
    raw = f"{HEADER}\n2026-09,{','.join(cells)}\n".encode()
    response = api.generic("POST", url(case), raw, content_type="text/csv")
    assert response.status_code == 400
    [problem] = response.json()["problems"]
    assert (problem["column"], problem["reason"]) == ("tokens_in", "9" * 5000 + " is too large.")
    assert stored_state(media_root) == before


BUDGET = {"currency": "USD", "thresholds_pct": [70, 90, 100], "gpus_per_instance": 8}
# 15 significant digits, the most SQLite gives back exactly; a sixteenth failed on reading.
TOP = "9999999999999.99"
PAST_TOP = "99999999999999.99"


@pytest.mark.parametrize("field", ["total_amount", "monthly_amount", "training_max_spend"])
def test_an_amount_past_the_top_is_refused_by_name_in_the_api(api_as, priya, field):
    case = make_case(priya)
    body = {**BUDGET, "total_amount": TOP, "monthly_amount": "1000", field: PAST_TOP}
    response = api_as("priya").put(f"/api/v1/cases/{case.pk}/costs/budget/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {field: [f"Ensure this value is less than or equal to {TOP}."]}
    assert not hasattr(case, "budget")


@pytest.mark.parametrize("field", ["total_amount", "monthly_amount", "training_max_spend"])
def test_an_amount_past_the_top_is_refused_by_name_on_the_page(browser_as, priya, field):
    case = make_case(priya)
    form = {**BUDGET, "thresholds_pct": "70, 90", "total_amount": TOP, "monthly_amount": "1000"}
    response = browser_as("priya").post(
        reverse("costs:budget", args=[case.pk]), {**form, field: PAST_TOP}
    )
    assert response.status_code == 400
    assert list(response.context["budget_form"].errors) == [field]


def test_the_largest_values_are_stored_read_back_and_reconciled(api_as, browser_as, priya):
    case = make_case(priya)
    api = api_as("priya")
    rate = "99999999.999999"
    budget = {
        **BUDGET,
        "offer": make_offer(priya, case).pk,
        "total_amount": TOP,
        "monthly_amount": TOP,
        "training_max_spend": TOP,
        "price_per_million_tokens_in": rate,
        "price_per_million_tokens_out": rate,
        "storage_per_gib_month": rate,
        "cross_region_per_gib": rate,
        "assumed_tokens_in_per_request": 1,
    }
    base = f"/api/v1/cases/{case.pk}/costs/"
    assert api.put(base + "budget/", budget, format="json").status_code == 201
    hours, count = "9999999999.9999", str(2**63 - 1)
    row = ",".join([hours, hours, count, count, count, hours, hours, TOP])
    months = [f"{year}-{month:02d}" for year in range(2001, 2026) for month in range(1, 13)]
    raw = (HEADER + "\n" + "".join(f"{m},{row}\n" for m in months)).encode()
    imported = api.generic("POST", base + "imports/", raw, content_type="text/csv")
    assert imported.status_code == 201, imported.content[:300]
    for part in ("budget/", "imports/", "periods/", "reconciliation/"):
        assert api.get(base + part).status_code == 200, part
    reconciliation = api.get(base + "reconciliation/").json()
    assert len(reconciliation["periods"]) == len(months)
    assert reconciliation["billed_total"] == str(Decimal(TOP) * len(months))
    assert browser_as("priya").get(reverse("costs:case", args=[case.pk])).status_code == 200


@pytest.mark.parametrize("query", ["?page=abc", "?month=xyz", "?period=2026-13&format=xyz"])
def test_unknown_or_malformed_query_strings_are_ignored(api_as, browser_as, case, query):
    base = f"/api/v1/cases/{case.pk}/costs/"
    for part in ("budget/", "imports/", "periods/", "reconciliation/"):
        response = api_as("aude").get(base + part + query, HTTP_ACCEPT="application/json")
        assert response.status_code in (200, 404), (part, response.status_code)
    page = browser_as("aude").get(reverse("costs:case", args=[case.pk]) + query)
    assert page.status_code == 200

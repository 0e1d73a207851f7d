"""The daily budget through the API and the pages: set, import daily spend, alert once.

The server's zone is Shanghai (UTC+8) here, so the day boundary is 16:00 UTC.
"""

import html
from decimal import Decimal

import pytest
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.casework.tasks import send_reminders_task
from apps.costs.models import CostImport, SpendCharge, ThresholdAlert
from apps.costs.packet import packet_section
from tests.costs.factories import make_budget
from tests.factories import make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
PROCUREMENT = {"priya", "ada"}

# 700.00 of a 1,000 daily budget on 4 March in Shanghai (70 % exactly), split over
# two charges; 699.99 on the 5th (just below); the charge at 15:59:59 UTC is still
# the 4th there, the one at 16:00:00 UTC is the 5th.
SPEND = (
    "charged_at,amount,description\n"
    "2026-03-04T01:00:00Z,500.00,gpu-node-1\n"
    "2026-03-04T15:59:59Z,200.00,gpu-node-1\n"
    "2026-03-04T16:00:00Z,699.99,gpu-node-1\n"
)


@pytest.fixture(autouse=True)
def _media_and_zone(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.TIME_ZONE = "Asia/Shanghai"


@pytest.fixture
def case(priya):
    priya.email = "priya@example.org"
    priya.save(update_fields=["email"])
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case), daily_amount=Decimal("1000"))
    return case


def _url(case, suffix="daily-spend/"):
    return f"/api/v1/cases/{case.pk}/costs/{suffix}"


def _import_csv(api, case, body=SPEND, **query):
    params = "&".join(f"{k}={v}" for k, v in query.items())
    return api.generic(
        "POST", _url(case) + (f"?{params}" if params else ""), body.encode(), "text/csv"
    )


def test_daily_spend_is_judged_per_day_and_alerts_the_owner_once(
    api_as, browser_as, case, django_capture_on_commit_callbacks
):
    api = api_as("priya")
    with django_capture_on_commit_callbacks(execute=True):
        response = _import_csv(api, case, file_name="usage-march.csv")
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "daily" and response.json()["row_count"] == 3

    days = api_as("aude").get(_url(case)).json()
    assert days["time_zone"] == "Asia/Shanghai" and days["daily_amount"] == "1000.00"
    assert [(d["day"], d["spent"], d["percent"], d["crossed"]) for d in days["days"]] == [
        ("2026-03-04", "700.00", "70.0", [70]),
        ("2026-03-05", "699.99", "69.9", []),  # just below: shown rounded down, not crossed
    ]
    assert [(c["scope"], c["period"], c["threshold"]) for c in days["crossings"]] == [
        ("day", "2026-03-04", 70)
    ]

    alerts = list(ThresholdAlert.objects.values_list("scope", "period_key", "threshold_pct"))
    assert alerts == [("day", "2026-03-04", 70)]
    (message,) = mail.outbox
    assert message.to == ["priya@example.org"]
    assert "70 % of the daily budget reached" in message.subject
    assert "Period: 2026-03-04 (Asia/Shanghai)" in message.body
    # The daily run finds nothing new: each crossing is told once.
    assert send_reminders_task() == 0 and len(mail.outbox) == 1

    page = html.unescape(browser_as("lena").get(reverse("costs:case", args=[case.pk])).text)
    assert "Daily budget: 1,000.00 USD" in page
    assert "Days run from midnight to midnight in Asia/Shanghai." in page
    assert "700.00 USD" in page and "70.0 %" in page and "699.99 USD" in page
    assert "69.9 %" in page
    assert "<td>Daily budget</td><td>2026-03-04</td><td>70 %</td><td>700.00 / 1,000.00</td>" in (
        page
    )
    case_page = html.unescape(browser_as("lena").get(reverse("cases:detail", args=[case.pk])).text)
    assert "Costs 2026-03-05" not in case_page  # the latest day crossed nothing

    section = packet_section(case)
    assert any(name.startswith("daily-") for name, _path, _sha in section.manifest_files)


def test_daily_and_monthly_are_judged_apart(api_as, case, django_capture_on_commit_callbacks):
    # 2,500 in one day is 250 % of the daily budget but no monthly bill was imported:
    # no monthly alert follows from the daily spend.
    body = "charged_at,amount\n2026-03-04,2500\n"
    with django_capture_on_commit_callbacks(execute=True):
        assert _import_csv(api_as("priya"), case, body).status_code == 201
    scopes = set(ThresholdAlert.objects.values_list("scope", flat=True))
    assert scopes == {"day"}
    assert ThresholdAlert.objects.count() == 3


def test_a_crossing_on_the_latest_day_is_listed_as_missing(browser_as, api_as, case):
    response = _import_csv(api_as("priya"), case, "charged_at,amount\n2026-03-06,950\n")
    assert response.status_code == 201
    page = html.unescape(browser_as("tariq").get(reverse("cases:detail", args=[case.pk])).text)
    assert "Costs 2026-03-06: 90 % of the daily budget reached." in page


def test_json_rows_import_the_same(api_as, case):
    rows = [{"charged_at": "2026-03-04T10:00:00+08:00", "amount": 12.5, "currency": "USD"}]
    response = api_as("priya").post(
        _url(case), {"rows": rows, "file_name": "export.json"}, format="json"
    )
    assert response.status_code == 201, response.content
    charge = SpendCharge.objects.get()
    assert charge.amount == Decimal("12.50") and charge.cost_import.file_name == "export.json"
    assert charge.history.first().history_user.username == "priya"


def test_a_charge_already_imported_is_refused_and_nothing_changes(api_as, case):
    api = api_as("priya")
    assert _import_csv(api, case).status_code == 201
    again = SPEND + "2026-03-06T00:00:00Z,1.00,\n"  # overlaps the first file
    response = _import_csv(api, case, again)
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert [p["row"] for p in problems] == [2, 3, 4]
    assert all("already imported" in p["reason"] for p in problems)
    assert SpendCharge.objects.count() == 3 and CostImport.objects.count() == 1


@pytest.mark.parametrize(
    "body,content_type,status,words",
    [
        ("charged_at,amount\n2026-03-04T10:00:00,5\n", "text/csv", 400, "no offset from UTC"),
        ("charged_at,amount\n2026-03-04,-5\n", "text/csv", 400, "negative"),
        ("when,amount\n2026-03-04,5\n", "text/csv", 400, "unknown column"),
        ("charged_at,amount\n2099-01-01,5\n", "text/csv", 400, "not happened yet"),
        ('{"rows": "no"}', "application/json", 400, "one object per row"),
        ("<xml/>", "application/xml", 415, ""),
    ],
)
def test_bad_input_is_a_clear_refusal(api_as, case, body, content_type, status, words):
    response = api_as("priya").generic("POST", _url(case), body.encode(), content_type)
    assert response.status_code == status
    assert words in response.content.decode()
    assert not SpendCharge.objects.exists() and not CostImport.objects.exists()


def test_a_daily_budget_above_the_monthly_is_refused(api_as, case):
    api = api_as("priya")
    budget = api.get(_url(case, "budget/")).json()
    assert budget["daily_amount"] == "1000.00"
    body = {
        "total_amount": "1900000",
        "monthly_amount": "160000",
        "daily_amount": "160000.01",
        "version": budget["version"],
        "change_reason": "Typo",
    }
    response = api.put(_url(case, "budget/"), body, format="json")
    assert response.status_code == 400 and "daily_amount" in response.json()
    body["daily_amount"] = None
    response = api.put(_url(case, "budget/"), body, format="json")
    assert response.status_code == 200 and response.json()["daily_amount"] is None


def test_without_a_budget_there_is_no_daily_spend(api_as, priya):
    case = make_case(priya)
    assert api_as("aude").get(_url(case)).status_code == 404
    refused = _import_csv(api_as("priya"), case)
    assert refused.status_code == 400 and "budget first" in refused.content.decode()


@pytest.mark.parametrize("role", ROLES)
def test_api_access_per_role(api_as, case, role):
    api = api_as(role)
    assert api.get(_url(case)).status_code == 200
    assert _import_csv(api, case).status_code == (201 if role in PROCUREMENT else 403)


def test_anonymous_api_calls_get_401(client, case):
    assert client.get(_url(case)).status_code == 401
    assert client.post(_url(case), SPEND, content_type="text/csv").status_code == 401


@pytest.mark.parametrize("role", ROLES)
def test_the_page_upload_per_role(browser_as, case, role):
    url = reverse("costs:daily-import", args=[case.pk])
    upload = SimpleUploadedFile("usage.csv", SPEND.encode(), content_type="text/csv")
    response = browser_as(role).post(url, {"file": upload, "note": "March"})
    assert response.status_code == (302 if role in PROCUREMENT else 403)
    assert SpendCharge.objects.count() == (3 if role in PROCUREMENT else 0)
    page = browser_as(role).get(reverse("costs:case", args=[case.pk])).text
    assert ("Import daily spend" in page) is (role in PROCUREMENT)


def test_the_page_upload_shows_every_refusal(browser_as, case):
    url = reverse("costs:daily-import", args=[case.pk])
    bad = "charged_at,amount\n2026-03-04T10:00:00,5\n2026-03-04,x\n"
    upload = SimpleUploadedFile("usage.csv", bad.encode(), content_type="text/csv")
    response = browser_as("priya").post(url, {"file": upload})
    assert response.status_code == 400
    page = html.unescape(response.text)
    assert "row 2, charged_at:" in page and "row 3, amount:" in page
    assert browser_as("priya").get(url).status_code == 405


def test_the_page_sends_anonymous_to_login(client, case):
    url = reverse("costs:daily-import", args=[case.pk])
    response = client.post(url)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def _reads(client, url) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_daily_reads_cost_the_same_at_1_and_60_days(api_as, browser_as, case):
    api, page = api_as("aude"), browser_as("aude")
    assert _import_csv(api_as("priya"), case, "charged_at,amount\n2026-01-01,1\n").status_code
    urls = [(api, _url(case)), (page, reverse("costs:case", args=[case.pk]))]
    before = [_reads(client, url) for client, url in urls]
    days = "".join(f"2026-01-{d:02d}T0{h}:00:00Z,{d}.5\n" for d in range(2, 31) for h in (1, 2))
    assert _import_csv(api_as("priya"), case, "charged_at,amount\n" + days).status_code == 201
    assert [_reads(client, url) for client, url in urls] == before

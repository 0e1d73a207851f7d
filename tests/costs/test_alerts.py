"""Threshold crossings: e-mailed to the case owner once, recorded, shown on the dashboard."""

from decimal import Decimal

import pytest
from django.core import mail
from django.urls import reverse

from apps.casework.tasks import send_reminders_task
from apps.costs.models import ThresholdAlert
from apps.costs.tasks import send_threshold_alerts_task
from tests.costs.factories import CLEAN, make_budget, make_import
from tests.factories import make_case, make_offer

# 145,252 billed against 160,000 a month is 90.8 %: the 70 % and 90 % lines.
OVER_100 = CLEAN.replace("145252.00", "161000.00")


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def case(priya):
    priya.email = "priya@example.org"
    priya.save(update_fields=["email"])
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    return case


def crossings():
    return sorted((a.scope, a.period_key, a.threshold_pct) for a in ThresholdAlert.objects.all())


def test_an_import_alerts_the_owner_once_per_crossing(
    priya, case, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        make_import(priya, case, ("2026-09", CLEAN))
    assert crossings() == [("month", "2026-09", 70), ("month", "2026-09", 90)]
    assert len(mail.outbox) == 2
    assert mail.outbox[0].to == ["priya@example.org"]
    assert "90 % of the monthly budget reached" in mail.outbox[1].subject
    assert "145,252.00 USD" in mail.outbox[1].body
    # The daily beat run finds nothing new to send.
    assert send_reminders_task() == 0
    assert send_threshold_alerts_task(case.pk) == 0
    assert len(mail.outbox) == 2


def test_the_daily_run_sends_what_an_import_did_not(priya, case):
    make_import(priya, case, ("2026-09", OVER_100), ("2026-10", CLEAN))  # no commit hook here
    assert ThresholdAlert.objects.count() == 0
    assert send_reminders_task() == 5  # September 70/90/100, October 70/90
    assert crossings()[-1] == ("month", "2026-10", 90)
    assert send_reminders_task() == 0
    alert = ThresholdAlert.objects.get(period_key="2026-09", threshold_pct=100)
    assert alert.recipients == ["priya@example.org"] and alert.spent == Decimal("161000.00")
    assert alert.history.first().history_change_reason == "100 % of the month budget reached"


def test_the_total_budget_is_crossed_once_per_threshold(priya):
    case = make_case(priya)
    make_budget(priya, case, total_amount=Decimal("300000"), monthly_amount=Decimal("300000"))
    make_import(priya, case, ("2026-08", CLEAN), ("2026-09", CLEAN), ("2026-10", CLEAN))
    send_threshold_alerts_task(case.pk)
    # 145,252 = 48 %; 290,504 = 96.8 %; 435,756 = 145 %: 70 and 90 in September, 100 in October.
    total = [(k, t) for s, k, t in crossings() if s == "total"]
    assert total == [("", 70), ("", 90), ("", 100)]
    periods = {
        a.threshold_pct: f"{a.period:%Y-%m}" for a in ThresholdAlert.objects.filter(scope="total")
    }
    assert periods == {70: "2026-09", 90: "2026-09", 100: "2026-10"}


def test_an_owner_without_email_is_recorded_but_not_mailed(pablo):
    case = make_case(pablo)
    make_budget(pablo, case)
    make_import(pablo, case, ("2026-09", CLEAN))
    assert send_threshold_alerts_task(case.pk) == 2
    assert mail.outbox == [] and ThresholdAlert.objects.first().recipients == []


def test_the_dashboard_shows_the_owners_crossings(browser_as, priya, pablo, case):
    make_import(priya, case, ("2026-09", OVER_100))
    send_threshold_alerts_task(case.pk)
    url = reverse("approvals:dashboard")
    line = "100 % of the monthly budget reached in 2026-09: 161,000.00 of 160,000.00"
    # The crossing is work for the case's owner, finance and the administrator; the
    # auditor's list holds audit work only (docs/rules/my-work.md).
    for who, sees in (
        ("priya", True),
        ("pablo", False),
        ("fiona", True),
        ("aude", False),
        ("ada", True),
        ("lena", False),
    ):
        page = browser_as(who).get(url).content.decode()
        assert (line in page) is sees, who
        assert ("Budget thresholds crossed" in page) is sees, who

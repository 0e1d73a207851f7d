"""Cost pages and endpoints cost the same number of queries at 1 month and at 25."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.costs.factories import CLEAN, IDLE, make_budget, make_import
from tests.factories import make_case, make_offer

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize(
    "url",
    [
        lambda c: reverse("costs:case", args=[c.pk]),
        lambda c: reverse("cases:detail", args=[c.pk]),
        lambda c: reverse("approvals:dashboard"),
        lambda c: f"/api/v1/cases/{c.pk}/costs/budget/",
        lambda c: f"/api/v1/cases/{c.pk}/costs/imports/",
        lambda c: f"/api/v1/cases/{c.pk}/costs/periods/",
        lambda c: f"/api/v1/cases/{c.pk}/costs/reconciliation/",
    ],
    ids=["page", "case", "dashboard", "budget", "imports", "periods", "reconciliation"],
)
def test_cost_reads_with_1_and_25_months(browser_as, priya, url):
    from apps.costs.tasks import send_threshold_alerts_task

    client = browser_as("priya")
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    make_import(priya, case, ("2024-01", CLEAN))
    send_threshold_alerts_task(case.pk)
    one = _queries(client, url(case))
    for year in (2024, 2025):
        months = [(f"{year}-{m:02d}", IDLE) for m in range(2 if year == 2024 else 1, 13)]
        make_import(priya, case, *months)
    send_threshold_alerts_task(case.pk)
    assert _queries(client, url(case)) == one

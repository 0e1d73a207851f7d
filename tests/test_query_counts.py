"""List and detail pages cost the same number of queries at 1 row and at 50."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.scorecards.services import scorecard_save
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def _grow_cases(priya, n):
    for _ in range(n):
        make_case(priya)


def _grow_offers(priya, case, n):
    for _ in range(n):
        offer = make_offer(priya, case, spec=FULL_SPEC)
        scorecard_save(actor=priya, offer=offer, scores={"pricing": {"score": 3}})


@pytest.mark.parametrize("url", ["cases:list", "vendors:list"])
def test_list_pages(browser_as, priya, url):
    client = browser_as("priya")
    _grow_cases(priya, 1)
    make_offer(priya, make_case(priya))
    one = _queries(client, reverse(url))
    _grow_cases(priya, 49)
    for _ in range(49):
        make_offer(priya, make_case(priya))
    assert _queries(client, reverse(url)) == one


def _with_1_and_50_offers(browser_as, priya, page) -> tuple[int, int]:
    client = browser_as("priya")
    case = make_case(priya)
    _grow_offers(priya, case, 1)
    url = reverse(page, kwargs={"pk": case.pk})
    one = _queries(client, url)
    _grow_offers(priya, case, 49)
    return one, _queries(client, url)


@pytest.mark.parametrize("page", ["cases:detail", "scorecards:comparison"])
def test_case_pages_with_1_and_50_offers(browser_as, priya, page):
    one, fifty = _with_1_and_50_offers(browser_as, priya, page)
    assert fifty == one


@pytest.mark.parametrize("page", ["audit:case-timeline", "approvals:case"])
def test_history_pages_with_1_and_50_offers(browser_as, priya, page):
    """Paged in the database: the count, the page, one query per table on the page (at
    most the tables the one-offer case had rows in), however many rows there are."""
    one, fifty = _with_1_and_50_offers(browser_as, priya, page)
    assert fifty <= one


@pytest.mark.parametrize(
    "path", ["/api/v1/cases/", "/api/v1/offers/", "/api/v1/scorecards/", "/api/v1/declared-specs/"]
)
def test_api_lists(api_as, priya, path):
    api = api_as("priya")
    case = make_case(priya)
    _grow_offers(priya, case, 1)

    def count():
        with CaptureQueriesContext(connection) as ctx:
            assert api.get(path).status_code == 200
        return len(ctx.captured_queries)

    one = count()
    _grow_offers(priya, case, 49)
    assert count() == one


def test_offer_detail(browser_as, priya):
    client = browser_as("priya")
    case = make_case(priya)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    scorecard_save(actor=priya, offer=offer, scores={"pricing": {"score": 3}})
    url = reverse("offers:detail", kwargs={"pk": offer.pk})
    _queries(client, url)  # warm: the first view of a process loads the content types once
    one = _queries(client, url)
    _grow_offers(priya, case, 49)
    assert _queries(client, url) == one


@pytest.mark.parametrize(
    "url", ["approvals:dashboard", "approvals:waiting", "cases:search"], ids=str
)
def test_my_work_and_search_with_1_and_50_cases(browser_as, priya, url):
    """The administrator's My work holds every role's sections; search matches every case."""
    client = browser_as("ada")
    address = reverse(url) + ("?q=Case" if url == "cases:search" else "")
    make_offer(priya, make_case(priya))
    one = _queries(client, address)
    for _ in range(49):
        make_offer(priya, make_case(priya))
    assert _queries(client, address) == one

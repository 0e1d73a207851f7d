"""List and detail pages cost the same number of queries at 1 row and at 50.

Every page is counted once in a world of one row of each kind, then again after that
world has grown to fifty (cases, offers on one case each scored, cases with an offer):
one growth for the module (``module_db``), each page's counts then checked by a test
of its own.
"""

import pytest
from django.apps import apps as django_apps
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.casework.panels import AREAS
from apps.portal.models import ClaimSection
from apps.scorecards.services import scorecard_save
from tests.contracts.factories import make_checklist
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.portal.factories import make_invitation, open_portal

pytestmark = pytest.mark.postgres

LIST_PAGES = ["cases:list", "vendors:list"]
CASE_PAGES = ["cases:detail", "scorecards:comparison"]
HISTORY_PAGES = ["audit:case-timeline", "approvals:case"]
API_LISTS = ["/api/v1/cases/", "/api/v1/offers/", "/api/v1/scorecards/", "/api/v1/declared-specs/"]
# The administrator's My work holds every role's sections; search matches every case.
ACROSS_CASES = ["approvals:dashboard", "approvals:waiting", "cases:search", "cases:portfolio"]
# Each role's My work, read by its persona (the administrator's is above).
INBOXES = ["priya", "lena", "tariq", "fiona", "aude"]
# The case's area pages and its requirement spec, read by the administrator (who sees all).
AREA_PAGES = list(AREAS)
# The vendor's portal pages for the offer, in a portal session on an invitation.
PORTAL_PAGES = ["home", "documents", *(section for section, _label in ClaimSection.choices)]


def _scored_offer(priya, case):
    offer = make_offer(priya, case, spec=FULL_SPEC)
    scorecard_save(actor=priya, offer=offer, scores={"pricing": {"score": 3}})
    return offer


def _addresses(case, offer) -> dict[str, tuple[str, str]]:
    """Each counted page: (who reads it, its address)."""
    pages = {url: ("priya", reverse(url)) for url in LIST_PAGES}
    pages |= {page: ("priya", reverse(page, kwargs={"pk": case.pk})) for page in CASE_PAGES}
    pages |= {page: ("priya", reverse(page, kwargs={"pk": case.pk})) for page in HISTORY_PAGES}
    pages |= {path: ("api", path) for path in API_LISTS}
    pages["offers:detail"] = ("priya", reverse("offers:detail", kwargs={"pk": offer.pk}))
    for url in ACROSS_CASES:
        pages[url] = ("ada", reverse(url) + ("?q=Case" if url == "cases:search" else ""))
    for who in INBOXES:
        pages[f"inbox:{who}"] = (who, reverse("approvals:dashboard"))
    for area in AREA_PAGES:
        pages[f"area:{area}"] = ("ada", reverse("cases:area", args=[case.pk, area]))
    pages["sizing:requirement"] = ("ada", reverse("sizing:requirement", args=[case.pk]))
    return pages


def _portal_addresses(secret: str) -> dict[str, tuple[str, str]]:
    pages = {}
    for page in PORTAL_PAGES:
        if page in ("home", "documents"):
            pages[f"portal:{page}"] = ("vendor", reverse(f"portal:{page}", args=[secret]))
        else:
            pages[f"portal:{page}"] = ("vendor", reverse("portal:section", args=[secret, page]))
    return pages


def _count(clients, pages) -> dict[str, int]:
    counts = {}
    for key, (who, address) in pages.items():
        with CaptureQueriesContext(connection) as ctx:
            response = clients[who].get(address)
        assert response.status_code == 200, (address, response.status_code)
        counts[key] = len(ctx.captured_queries)
    return counts


@pytest.fixture(scope="module")
def counts(module_people):
    """Every page's queries at one row of each kind, then at fifty: {page: (one, fifty)}."""
    priya = module_people["priya"]
    clients = {who: Client() for who in ["ada", *INBOXES]}
    for who, client in clients.items():
        client.force_login(module_people[who])
    clients["api"] = APIClient()
    token, _ = Token.objects.get_or_create(user=priya)
    clients["api"].credentials(HTTP_AUTHORIZATION=f"Token {token.key}")

    make_case(priya)  # a case without offers
    make_offer(priya, make_case(priya))  # a case with an offer
    case = make_case(priya)
    offer = _scored_offer(priya, case)  # a case with a scored offer
    make_checklist(module_people["lena"], offer=offer)
    invitation, secret = make_invitation(priya, offer)
    clients["vendor"] = Client()
    open_portal(clients["vendor"], invitation)
    pages = _addresses(case, offer) | _portal_addresses(secret)
    # The first view of a process loads the content types once: loaded here, so that each
    # page is counted at its own first view, before the growth and after it.
    ContentType.objects.get_for_models(*django_apps.get_models())
    one = _count(clients, pages)

    for _ in range(49):
        make_case(priya)
        make_offer(priya, make_case(priya))
        _scored_offer(priya, case)
    fifty = _count(clients, pages)
    return {key: (one[key], fifty[key]) for key in pages}


@pytest.mark.parametrize("url", LIST_PAGES)
def test_list_pages(counts, url):
    one, fifty = counts[url]
    assert fifty == one


@pytest.mark.parametrize("page", CASE_PAGES)
def test_case_pages_with_1_and_50_offers(counts, page):
    one, fifty = counts[page]
    assert fifty == one


@pytest.mark.parametrize("page", HISTORY_PAGES)
def test_history_pages_with_1_and_50_offers(counts, page):
    """Paged in the database: the page's rows, of every table on it, in one query; one
    per kind of record named; however many rows there are and of however many kinds."""
    one, fifty = counts[page]
    assert fifty == one


@pytest.mark.parametrize("path", API_LISTS)
def test_api_lists(counts, path):
    one, fifty = counts[path]
    assert fifty == one


def test_offer_detail(counts):
    one, fifty = counts["offers:detail"]
    assert fifty == one


@pytest.mark.parametrize("url", ACROSS_CASES, ids=str)
def test_my_work_and_search_with_1_and_50_cases(counts, url):
    one, fifty = counts[url]
    assert fifty == one


@pytest.mark.parametrize("who", INBOXES)
def test_each_roles_my_work_with_1_and_50_cases(counts, who):
    one, fifty = counts[f"inbox:{who}"]
    assert fifty == one


@pytest.mark.parametrize("area", AREA_PAGES)
def test_area_pages_with_1_and_50_offers(counts, area):
    one, fifty = counts[f"area:{area}"]
    assert fifty == one


def test_requirement_spec(counts):
    one, fifty = counts["sizing:requirement"]
    assert fifty == one


@pytest.mark.parametrize("page", PORTAL_PAGES)
def test_vendor_portal_pages_with_1_and_50_offers(counts, page):
    one, fifty = counts[f"portal:{page}"]
    assert fifty == one

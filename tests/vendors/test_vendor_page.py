"""A vendor's page: its offers across cases, their verdicts, red flags and waivers."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.contracts.services import red_flag_waive
from tests.contracts.factories import item, make_checklist
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor

pytestmark = pytest.mark.django_db


@pytest.fixture
def vendor(priya):
    return make_vendor(priya, name="Lattice Compute", contacts="sales@lattice.example")


def test_the_page_lists_offers_across_cases_with_checklist_and_waivers(
    browser_as, priya, lena, vendor
):
    first = make_offer(
        priya, make_case(priya, name="Training cluster"), vendor=vendor, spec=FULL_SPEC
    )
    make_offer(priya, make_case(priya, name="Inference pool"), vendor=vendor, spec=FULL_SPEC)
    make_offer(priya, make_case(priya, name="Someone else's"), spec=FULL_SPEC)
    checklist = make_checklist(lena, offer=first, statuses={"sla": "needs_negotiation"})
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Service credits suffice")

    page = browser_as("aude").get(reverse("vendors:detail", args=[vendor.pk]))

    assert page.status_code == 200
    text = page.content.decode()
    assert "Training cluster" in text and "Inference pool" in text
    assert "Someone else&#x27;s" not in text and "Someone else's" not in text
    assert "sales@lattice.example" in text
    assert "Service credits suffice" in text and "In force" in text
    assert reverse("offers:detail", args=[first.pk]) in text


def test_queries_do_not_grow_with_offers(browser_as, priya, lena, vendor):
    client = browser_as("priya")
    url = reverse("vendors:detail", args=[vendor.pk])

    def queries():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    offer = make_offer(priya, make_case(priya), vendor=vendor, spec=FULL_SPEC)
    make_checklist(lena, offer=offer)
    one = queries()
    for _ in range(6):
        offer = make_offer(priya, make_case(priya), vendor=vendor, spec=FULL_SPEC)
        make_checklist(lena, offer=offer)
    assert queries() == one


def test_a_vendor_added_from_the_offer_form_returns_to_it_chosen(browser_as, priya):
    case = make_case(priya)
    client = browser_as("priya")
    offer_form = reverse("offers:create", kwargs={"case_pk": case.pk})
    assert f"?next={offer_form}" in client.get(offer_form).content.decode()

    answer = client.post(
        reverse("vendors:create"),
        {"name": "Northern GPU", "jurisdiction": "Norway", "next": offer_form},
    )

    assert answer.status_code == 302
    assert answer["Location"].startswith(offer_form + "?vendor=")
    back = client.get(answer["Location"]).content.decode()
    assert "selected>Northern GPU</option>" in back


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x"])
def test_an_outside_return_address_is_ignored(browser_as, target):
    answer = browser_as("priya").post(
        reverse("vendors:create"), {"name": "Far GPU", "jurisdiction": "Chile", "next": target}
    )
    assert answer.status_code == 302
    assert "evil" not in answer["Location"]
    assert answer["Location"].startswith("/vendors/")

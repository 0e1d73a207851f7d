"""A declared spec with any required item missing is "unconfirmed" everywhere
(docs/rules/offers.md#declared-spec)."""

from types import SimpleNamespace

import pytest
from django.urls import reverse

from apps.offers.models import Offer
from apps.offers.rules import declared_spec_status
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor
from tests.pages import whole_case

OFFER = dict(
    accelerator_model="H200",
    accelerator_count=16,
    billing_basis="per_hour",
    unit_price=3,
    prepayment_ratio=0,
    contract_term_months=12,
)


@pytest.mark.parametrize(
    "offer_changes,spec_changes,missing",
    [
        ({}, {}, ()),
        ({}, {"driver_version": ""}, ("driver version",)),
        ({}, {"driver_version": "  "}, ("driver version",)),
        ({"unit_price": None}, {}, ("unit price",)),
        ({"billing_basis": ""}, {"cuda_version": ""}, ("billing basis", "CUDA version")),
        # A prepayment of 0 is a stated term, not a missing one.
        ({"prepayment_ratio": 0}, {}, ()),
        # Single node: no inter-node link, so no bandwidth floor to state.
        ({}, {"inter_node_network": "none", "inter_node_bandwidth_gbit": None}, ()),
        ({}, {"inter_node_bandwidth_gbit": None}, ("inter-node bandwidth floor",)),
    ],
)
def test_missing_items(offer_changes, spec_changes, missing):
    offer = SimpleNamespace(**{**OFFER, **offer_changes})
    spec = SimpleNamespace(**{**FULL_SPEC, **spec_changes})
    status = declared_spec_status(offer, spec)
    assert status.missing == missing
    assert status.confirmed is (not missing)


def test_total_memory_is_per_card_memory_times_count():
    status = declared_spec_status(SimpleNamespace(**OFFER), SimpleNamespace(**FULL_SPEC))
    assert str(status.total_memory_gib) == "2246.4"  # 16 × 140.4 GiB


def test_no_spec_at_all_lists_every_technical_item():
    status = declared_spec_status(SimpleNamespace(**OFFER), None)
    assert len(status.missing) == 10 and not status.confirmed


def test_unconfirmed_spec_shows_on_the_case_the_offer_and_the_api(browser_as, api_as, priya):
    case = make_case(priya)
    offer = make_offer(priya, case, spec={**FULL_SPEC, "driver_version": ""})
    case_page = whole_case(browser_as("aude"), case.pk)
    offer_page = browser_as("aude").get(reverse("offers:detail", kwargs={"pk": offer.pk}))
    for page in (case_page, offer_page):
        html = page.content.decode()
        assert "Unconfirmed" in html and "driver version" in html
    body = api_as("aude").get(f"/api/v1/offers/{offer.pk}/").json()
    assert body["spec_status"] == {
        "confirmed": False,
        "missing": ["driver version"],
        "total_memory_gib": "8985.60",
    }


def test_tariq_completes_the_spec_and_it_becomes_confirmed(browser_as, priya, tariq):
    case = make_case(priya)
    offer = make_offer(priya, case, spec={**FULL_SPEC, "driver_version": ""})
    form = {
        **{k: v for k, v in FULL_SPEC.items()},
        "driver_version": "550.127.05",
        "source_document": "Quote 7",
        "version": offer.declared_spec.version,
        "change_reason": "Vendor confirmed the driver in writing",
    }
    response = browser_as("tariq").post(reverse("offers:spec", kwargs={"pk": offer.pk}), form)
    assert response.status_code == 302
    page = browser_as("tariq").get(reverse("offers:detail", kwargs={"pk": offer.pk}))
    assert "Spec confirmed" in page.content.decode()
    latest = offer.declared_spec.history.first()
    assert (latest.history_user, latest.history_change_reason) == (
        tariq,
        "Vendor confirmed the driver in writing",
    )


def test_one_offer_per_vendor_per_case(browser_as, priya):
    case = make_case(priya)
    vendor = make_vendor(priya)
    make_offer(priya, case, vendor=vendor)
    response = browser_as("priya").post(
        reverse("offers:create", kwargs={"case_pk": case.pk}),
        {
            "vendor": vendor.pk,
            "accelerator_model": "H100",
            "accelerator_count": 8,
            "currency": "USD",
        },
    )
    assert "vendor" in response.context["form"].errors
    assert Offer.objects.count() == 1


def test_the_first_offer_moves_the_case_to_evaluating(priya):
    case = make_case(priya)
    make_offer(priya, case)
    case.refresh_from_db()
    assert case.status == "evaluating"
    assert case.history.first().history_change_reason.startswith("Evaluation started")


def test_an_offer_with_a_negative_count_or_price_is_refused_in_the_api(api_as, priya):
    case = make_case(priya)
    vendor = make_vendor(priya)
    response = api_as("priya").post(
        "/api/v1/offers/",
        {
            "case": case.pk,
            "vendor": vendor.pk,
            "accelerator_model": "H200",
            "accelerator_count": 0,
            "unit_price": "-1",
            "prepayment_ratio": "1.5",
        },
        format="json",
    )
    assert response.status_code == 400
    assert {"accelerator_count", "unit_price", "prepayment_ratio"} <= set(response.json())
    assert Offer.objects.count() == 0

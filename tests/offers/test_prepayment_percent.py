"""The prepayment is typed in percent, as pages show it, and stored as a share of 1."""

from decimal import Decimal

import pytest
from django.urls import reverse

from apps.offers.forms import OfferEditForm, OfferForm
from apps.offers.models import Offer
from tests.factories import make_case, make_offer, make_vendor

pytestmark = pytest.mark.django_db


def _form_data(vendor, prepayment, **extra):
    return {
        "vendor": vendor.pk,
        "accelerator_model": "NVIDIA H200 SXM 141GB",
        "accelerator_count": 64,
        "unit_price": "3.10",
        "currency": "USD",
        "billing_basis": "per_hour",
        "prepayment_ratio": prepayment,
        "contract_term_months": 12,
        "notes": "",
        **extra,
    }


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("30", Decimal("0.3")),
        ("0", Decimal("0")),
        ("100", Decimal("1")),
        ("12.5", Decimal("0.125")),
    ],
)
def test_the_form_reads_percent_and_gives_a_ratio(priya, typed, stored):
    form = OfferForm(_form_data(make_vendor(priya), typed))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prepayment_ratio"] == stored


def test_an_empty_prepayment_stays_unknown(priya):
    form = OfferForm(_form_data(make_vendor(priya), ""))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prepayment_ratio"] is None


@pytest.mark.parametrize("typed", ["101", "-1", "150"])
def test_bounds_are_stated_in_percent(priya, typed):
    form = OfferForm(_form_data(make_vendor(priya), typed))
    assert not form.is_valid()
    assert form.errors["prepayment_ratio"] == ["Enter a percentage from 0 to 100 (30 means 30 %)."]


def test_the_bounds_message_is_translated(priya):
    from django.utils import translation

    with translation.override("zh-hans"):
        form = OfferForm(_form_data(make_vendor(priya), "150"))
        assert not form.is_valid()
        message = form.errors["prepayment_ratio"][0]
    assert "100" in message and "Enter" not in message


def test_editing_shows_the_stored_ratio_back_in_percent(priya):
    offer = make_offer(priya, make_case(priya), prepayment_ratio=Decimal("0.3"))
    form = OfferEditForm(instance=offer)
    assert 'value="30"' in str(form["prepayment_ratio"])
    unchanged = OfferEditForm(_form_data(offer.vendor, "30"), instance=offer)
    assert "prepayment_ratio" not in unchanged.changed_data
    changed = OfferEditForm(_form_data(offer.vendor, "0.3"), instance=offer)
    assert "prepayment_ratio" in changed.changed_data


def test_a_whole_prepayment_shows_as_100(priya):
    offer = make_offer(priya, make_case(priya), billing_basis="reserved", prepayment_ratio=1)
    assert 'value="100"' in str(OfferEditForm(instance=offer)["prepayment_ratio"])


def test_typing_30_on_the_page_stores_0_3_and_shows_30_again(browser_as, priya):
    case = make_case(priya)
    vendor = make_vendor(priya)
    client = browser_as("priya")
    response = client.post(
        reverse("offers:create", kwargs={"case_pk": case.pk}), _form_data(vendor, "30")
    )
    assert response.status_code == 302
    offer = Offer.objects.get(case=case, vendor=vendor)
    assert offer.prepayment_ratio == Decimal("0.3")

    page = client.get(reverse("offers:edit", kwargs={"pk": offer.pk}))
    html = page.content.decode()
    assert 'name="prepayment_ratio"' in html
    assert 'value="30"' in html
    assert "in percent: 30 means 30 %" in html

    saved = client.post(
        reverse("offers:edit", kwargs={"pk": offer.pk}),
        _form_data(vendor, "45", version=offer.version, change_reason="Vendor asked for less"),
    )
    assert saved.status_code == 302
    offer.refresh_from_db()
    assert offer.prepayment_ratio == Decimal("0.45")


def test_the_api_keeps_the_fraction(api_as, priya):
    case = make_case(priya)
    vendor = make_vendor(priya)
    response = api_as("priya").post(
        "/api/v1/offers/",
        {**_form_data(vendor, "0.3"), "case": case.pk, "change_reason": "From the quote"},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert Offer.objects.get(pk=response.json()["id"]).prepayment_ratio == Decimal("0.3")


def test_trailing_zeros_do_not_count_as_places(priya):
    form = OfferForm(_form_data(make_vendor(priya), "30.0000"))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prepayment_ratio"] == Decimal("0.3")
    assert not OfferForm(_form_data(make_vendor(priya), "30.125")).is_valid()

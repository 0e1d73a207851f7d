"""Offer and comparison pages write prices as people read them, not as stored decimals."""

from decimal import Decimal

import pytest
from django.urls import reverse

from tests.factories import make_case, make_offer

pytestmark = pytest.mark.django_db


@pytest.fixture
def reserved(priya):
    case = make_case(priya)
    offer = make_offer(
        priya,
        case,
        accelerator_count=48,
        unit_price=Decimal("1150000"),
        billing_basis="reserved",
        prepayment_ratio=Decimal("0.3"),
        contract_term_months=12,
    )
    offer.refresh_from_db()
    assert str(offer.unit_price) == "1150000.000000"  # as the database keeps it
    return offer


@pytest.mark.parametrize(("accept", "share"), [("en", "30 %"), ("zh-CN,zh;q=0.9", "30%")])
def test_the_offer_page_shows_the_quote_grouped(browser_as, reserved, accept, share):
    page = browser_as("priya").get(
        reverse("offers:detail", kwargs={"pk": reserved.pk}), HTTP_ACCEPT_LANGUAGE=accept
    )
    html = page.content.decode()
    assert "1,150,000.00 USD" in html
    assert "1150000.000000" not in html and "1150000.00" not in html
    assert f"<dd>{share}</dd>" in html  # the prepayment, a share of 1 stored as 0.3000
    assert "0.3000" not in html


def test_the_comparison_page_explains_the_price_with_grouped_amounts(browser_as, reserved):
    url = reverse("scorecards:comparison", kwargs={"pk": reserved.case_id})
    html = browser_as("priya").get(url).content.decode()
    assert "Contract value: 1,150,000.00" in html
    assert "1150000.00" not in html

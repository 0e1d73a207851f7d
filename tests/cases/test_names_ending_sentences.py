"""A vendor whose name ends in a full stop ("Pte. Ltd.") ends a sentence with one, not two."""

import pytest
from django.urls import reverse

from apps.core.formats import full_stop, one_full_stop
from tests.factories import make_case, make_offer, make_vendor

pytestmark = pytest.mark.django_db

NAME = "Aurora Compute Pte. Ltd."


def test_the_case_page_ends_the_sentence_on_the_vendors_own_full_stop(priya, browser_as):
    case = make_case(priya)
    make_offer(priya, case, vendor=make_vendor(priya, name=NAME))
    html = browser_as("priya").get(reverse("cases:detail", args=[case.pk])).content.decode()
    assert f"No passing spec verification for {NAME}<" in html
    assert "Ltd.." not in html


def test_a_full_stop_is_added_once_and_an_ellipsis_is_kept():
    assert full_stop(NAME) == NAME
    assert full_stop("Blue Ridge GPU Cloud") == "Blue Ridge GPU Cloud."
    assert one_full_stop(f"Offer of {NAME}.") == f"Offer of {NAME}"
    assert one_full_stop(f"Approved — {NAME}. Decided by Tariq.") == (
        f"Approved — {NAME} Decided by Tariq."
    )
    assert one_full_stop("Still waiting...") == "Still waiting..."
    assert one_full_stop(f"{NAME}的报价。") == f"{NAME}的报价。"

"""Once an offer is approved, the case page no longer offers to add another."""

import pytest
from django.urls import reverse

from apps.approvals.services import approval_decide, case_submit_for_approval
from tests.approvals.factories import make_ready_case

pytestmark = pytest.mark.django_db

ADD_OFFER = "Add offer</a>"


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_add_offer_is_offered_until_the_case_is_decided(people, browser_as):
    case, offer, _made = make_ready_case(people)
    page = reverse("cases:detail", args=[case.pk])
    assert ADD_OFFER in browser_as("priya").get(page).content.decode()

    case = case_submit_for_approval(actor=people["priya"], case=case)
    assert ADD_OFFER in browser_as("priya").get(page).content.decode()
    approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Best value"
    )
    html = browser_as("priya").get(page).content.decode()
    assert "Approved" in html
    assert ADD_OFFER not in html

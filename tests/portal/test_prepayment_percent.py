"""Li Wei types her prepayment in percent, as priya does on the offer form
(docs/rules/portal.md#what-the-vendor-types).

30 means 30 % and is kept as 0.3, the share of 1 the offer holds; reviewers read it in
percent and correct it in percent; 150 is refused by name with the bounds in percent.
"""

from decimal import Decimal

import pytest
from django.urls import reverse

from apps.offers.models import Offer
from apps.portal.claims import claim_named
from apps.portal.models import Proposal, ProposalStatus
from tests.portal.factories import make_invitation, open_portal
from tests.portal.vendor import section_url

pytestmark = pytest.mark.django_db

PERCENT_BOUNDS = "Enter a percentage from 0 to 100 (30 means 30 %)."


@pytest.fixture
def portal(client, priya):
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    return invitation, secret


def _prepayment(invitation) -> Proposal:
    return Proposal.objects.get(invitation=invitation, claim="prepayment_ratio")


def test_the_vendor_types_percent_and_the_share_is_kept(client, portal):
    invitation, secret = portal
    page = client.get(section_url(secret, "commercial"))
    assert page.status_code == 200
    assert "Prepayment (%)" in page.text and "30 means 30 %" in page.text
    assert "30 %" in page.text  # what the offer holds now (0.3)

    sent = client.post(section_url(secret, "commercial"), {"prepayment_ratio": "12.5"})
    assert sent.status_code == 302
    assert _prepayment(invitation).value == "0.125"
    again = client.get(section_url(secret, "commercial"))
    assert 'value="12.5"' in again.text  # shown back as she typed it
    assert "12.5 %" in again.text


@pytest.mark.parametrize("typed", ["150", "-1", "0.3%"])
def test_a_share_past_its_bounds_is_refused_by_name_in_percent(client, portal, typed):
    invitation, secret = portal
    response = client.post(
        section_url(secret, "commercial"), {"prepayment_ratio": typed, "unit_price": "2.95"}
    )
    assert response.status_code == 400
    assert "Prepayment (%)" in response.text
    if typed != "0.3%":
        assert PERCENT_BOUNDS in response.text
    # One refused answer refuses the section whole.
    assert not Proposal.objects.filter(invitation=invitation).exists()


def test_an_unknown_currency_is_refused_by_name(client, portal):
    invitation, secret = portal
    response = client.post(section_url(secret, "commercial"), {"currency": "XYZ"})
    assert response.status_code == 400
    assert "XYZ is not one of the available choices" in response.text
    assert not Proposal.objects.filter(invitation=invitation).exists()


def test_reviewers_read_percent_accept_the_share_and_correct_in_percent(client, portal, browser_as):
    invitation, secret = portal
    client.post(section_url(secret, "commercial"), {"prepayment_ratio": "40"})
    proposal = _prepayment(invitation)
    offer = invitation.offer
    answers = browser_as("priya").get(reverse("portal:answers", args=[offer.pk]))
    assert answers.status_code == 200 and "40 %" in answers.text

    decide = reverse("portal:proposal-decide", args=[offer.pk, proposal.pk])
    corrected = browser_as("priya").post(
        decide, {"decision": "edit", "value": "35", "note": "As signed", "version": 1}
    )
    assert corrected.status_code == 302
    assert Offer.objects.get(pk=offer.pk).prepayment_ratio == Decimal("0.35")
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.EDITED and proposal.accepted_value == "0.35"


def test_a_correction_past_its_bounds_is_refused_and_nothing_changes(client, portal, browser_as):
    invitation, secret = portal
    client.post(section_url(secret, "commercial"), {"prepayment_ratio": "40"})
    proposal = _prepayment(invitation)
    offer = invitation.offer
    decide = reverse("portal:proposal-decide", args=[offer.pk, proposal.pk])
    refused = browser_as("priya").post(
        decide, {"decision": "edit", "value": "0.35 of it", "note": "", "version": 1}
    )
    assert refused.status_code == 400
    assert Offer.objects.get(pk=offer.pk).prepayment_ratio == Decimal("0.3")
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


def test_the_claim_reads_percent_both_ways():
    claim = claim_named("commercial", "prepayment_ratio")
    assert claim.stored_text(" 30 ") == "0.3"
    assert claim.stored_text("100") == "1"
    assert claim.stored_text("") == ""
    assert claim.typed_text("0.3") == "30" and claim.typed_text("0.30") == "30"
    assert claim.display("0.125") == "12.5 %" and claim.display("0") == "0 %"
    assert claim.display("not a number") == "not a number"
    assert claim.parse(claim.stored_text("30")) == Decimal("0.3")
    # Other claims are kept as typed.
    price = claim_named("commercial", "unit_price")
    assert price.stored_text(" 2.95 ") == "2.95" and price.typed_text("2.95") == "2.95"

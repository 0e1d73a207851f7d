"""The organisation's invitation pages of an offer: who may invite, read and revoke."""

from datetime import timedelta

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from apps.core.services import tracked_update
from apps.portal.models import InvitationState, UseKind, VendorInvitation
from tests.portal.factories import make_invitation, make_offer_with_checklist

pytestmark = pytest.mark.django_db

ALL = ("priya", "lena", "tariq", "aude", "ada")
INVITE = {
    "contact_name": "Li Wei",
    "email": "li.wei@vendor.example",
    "language": "zh-hans",
    "days": 7,
}


@pytest.fixture
def offer(priya, lena):
    return make_offer_with_checklist(priya)


def _url(offer):
    return reverse("portal:invitations", args=[offer.pk])


@pytest.mark.parametrize("who", ALL)
def test_every_role_reads_the_invitations_of_an_offer(browser_as, offer, priya, who):
    invitation, _secret = make_invitation(priya, offer)
    page = browser_as(who).get(_url(offer))
    assert page.status_code == 200
    assert "li.wei@vendor.example" in page.text
    assert "Invitation sent" in page.text  # the list of uses
    can_invite = who in ("priya", "ada")
    assert ("Send the invitation" in page.text) is can_invite
    assert (reverse("portal:invitation-revoke", args=[offer.pk, invitation.pk]) in page.text) is (
        can_invite
    )


def test_anonymous_visitors_are_sent_to_sign_in(client, offer):
    for url in (_url(offer), reverse("portal:answers", args=[offer.pk])):
        response = client.get(url)
        assert response.status_code == 302 and "login" in response.url


def test_procurement_invites_and_the_contact_gets_the_link_in_their_language(browser_as, offer):
    response = browser_as("priya").post(_url(offer), INVITE)
    assert response.status_code == 302
    invitation = VendorInvitation.objects.get(offer=offer)
    assert invitation.language == "zh-hans" and invitation.state == InvitationState.OPEN
    assert mail.outbox[-1].to == ["li.wei@vendor.example"]
    assert "/portal/" in mail.outbox[-1].body
    page = browser_as("priya").get(_url(offer))
    assert "Li Wei" in page.text and "Open" in page.text


@pytest.mark.parametrize("who", ("lena", "tariq", "aude"))
def test_other_roles_cannot_invite(browser_as, offer, who):
    assert browser_as(who).post(_url(offer), INVITE).status_code == 403
    assert not VendorInvitation.objects.exists() and not mail.outbox


def test_an_invitation_that_cannot_be_e_mailed_is_not_kept(browser_as, offer, settings):
    settings.EMAIL_BACKEND = "tests.portal.test_invitation_pages.FailingBackend"
    page = browser_as("priya").post(_url(offer), INVITE)
    assert page.status_code == 200
    assert "could not be sent" in page.text
    assert not VendorInvitation.objects.exists()


class FailingBackend:
    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        raise ConnectionRefusedError("mail server down")


def test_bad_input_is_shown_and_nothing_stored(browser_as, offer):
    page = browser_as("priya").post(_url(offer), {**INVITE, "email": "nope", "days": 400})
    assert page.status_code == 200 and "has-error" in page.text
    assert not VendorInvitation.objects.exists()


def test_revoking_says_why_and_twice_is_a_conflict(browser_as, offer, priya):
    invitation, _secret = make_invitation(priya, offer)
    url = reverse("portal:invitation-revoke", args=[offer.pk, invitation.pk])
    assert browser_as("priya").post(url, {"reason": ""}).status_code == 400
    assert browser_as("priya").post(url, {"reason": "Wrong contact"}).status_code == 302
    invitation.refresh_from_db()
    assert invitation.state == InvitationState.REVOKED
    assert invitation.revoke_reason == "Wrong contact"
    assert invitation.uses.filter(kind=UseKind.REVOKED).exists()
    again = browser_as("priya").post(url, {"reason": "Again"})
    assert again.status_code == 409 and "already revoked" in again.text
    page = browser_as("aude").get(_url(offer))
    assert "Wrong contact" in page.text and "Revoked" in page.text


@pytest.mark.parametrize("who", ("lena", "tariq", "aude"))
def test_only_procurement_revokes(browser_as, offer, priya, who):
    invitation, _secret = make_invitation(priya, offer)
    url = reverse("portal:invitation-revoke", args=[offer.pk, invitation.pk])
    assert browser_as(who).post(url, {"reason": "No"}).status_code == 403
    invitation.refresh_from_db()
    assert invitation.revoked_at is None


def test_an_invitation_is_revoked_only_through_its_own_offer(browser_as, offer, priya):
    other = make_offer_with_checklist(priya)
    invitation, _secret = make_invitation(priya, other)
    url = reverse("portal:invitation-revoke", args=[offer.pk, invitation.pk])
    assert browser_as("priya").post(url, {"reason": "No"}).status_code == 404


def test_the_offer_page_links_to_the_vendor_pages(browser_as, offer, priya):
    make_invitation(priya, offer)
    page = browser_as("aude").get(reverse("offers:detail", args=[offer.pk]))
    assert page.status_code == 200
    assert reverse("portal:answers", args=[offer.pk]) in page.text
    assert reverse("portal:invitations", args=[offer.pk]) in page.text
    assert "1 invitation, 1 open." in page.text


def test_the_invitations_page_in_chinese(browser_as, offer, priya):
    make_invitation(priya, offer)
    page = browser_as("priya").get(_url(offer), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    assert page.status_code == 200
    assert "供应商邀请" in page.text
    assert "发送邀请" in page.text


def test_an_expired_invitation_shows_as_expired(browser_as, offer, priya):
    invitation, _secret = make_invitation(priya, offer)
    tracked_update(
        invitation,
        actor=priya,
        reason="Test: lapsed",
        fields={"expires_at": timezone.now() - timedelta(hours=1)},
    )
    page = browser_as("lena").get(_url(offer))
    assert 'badge warn">Expired' in page.text


def test_the_offer_page_summary_in_chinese(browser_as, offer, priya):
    make_invitation(priya, offer)
    page = browser_as("priya").get(
        reverse("offers:detail", args=[offer.pk]), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9"
    )
    assert "1 个邀请，1 个有效。" in page.text and "审核供应商的答复" in page.text

"""What the vendor's pages never do: show the organisation's judgement or another offer,
take a write without the form's token, after the invitation closed, or open to anyone
without the code."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from apps.core.services import StateConflict, tracked_update
from apps.portal.claims import clause_items
from apps.portal.models import InvitationUse, Proposal, UseKind, VendorDocument, VendorInvitation
from apps.portal.services.invitations import invitation_revoke
from apps.portal.services.proposals import proposals_submit
from tests.contracts.factories import set_statuses
from tests.factories import make_offer, make_vendor
from tests.portal.factories import make_invitation, make_offer_with_checklist, open_portal
from tests.portal.vendor import documents_url, reply_url, reviewed, section_url

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.7\n%%EOF\n"
SECTIONS = ("spec", "commercial", "clause", "exit")


@pytest.fixture
def portal(client, priya, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    return invitation, secret


def _written(invitation) -> tuple[int, int, int]:
    return (
        Proposal.objects.filter(invitation=invitation).count(),
        VendorDocument.objects.filter(invitation=invitation).count(),
        InvitationUse.objects.filter(
            invitation=invitation, kind__in=[UseKind.PROPOSED, UseKind.UPLOADED, UseKind.REPLIED]
        ).count(),
    )


def test_writes_without_the_form_s_token_are_refused(portal):
    invitation, secret = portal
    browser = Client(enforce_csrf_checks=True)
    open_portal(browser, invitation)
    assert browser.get(section_url(secret, "spec")).status_code == 200
    assert browser.post(section_url(secret, "spec"), {"cards_per_node": "8"}).status_code == 403
    assert _written(invitation) == (0, 0, 0)


def test_a_link_for_one_offer_cannot_reach_another_s_answers(client, priya, tariq, portal):
    invitation, secret = portal
    other, other_secret = make_invitation(priya, email="ops@other.example")
    open_portal(Client(), other)  # a session of its own elsewhere; this browser holds A only
    theirs = Proposal.objects.create(
        invitation=other, section="spec", claim="cards_per_node", value="16"
    )
    theirs = reviewed(theirs, tariq, "questioned", "Sixteen per node, really?")
    url = reply_url(secret, "spec", theirs.pk)
    assert client.post(url, {f"reply-{theirs.pk}-reply": "Yes."}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == "questioned" and theirs.vendor_reply == ""
    page = client.get(section_url(secret, "spec")).text
    assert "Sixteen per node, really?" not in page
    # B's own pages, through A's session: sent to B's start page, never shown.
    assert client.get(section_url(other_secret, "spec")).status_code == 302
    assert client.get(documents_url(other_secret)).status_code == 302


def test_another_offer_s_documents_are_not_listed(client, priya, portal):
    invitation, secret = portal
    other, other_secret = make_invitation(priya, email="ops@other.example")
    browser = Client()
    open_portal(browser, other)
    browser.post(
        documents_url(other_secret),
        {"kind": "sla", "file": SimpleUploadedFile("their-sla.pdf", PDF)},
    )
    assert VendorDocument.objects.filter(invitation=other).exists()
    assert "their-sla.pdf" not in client.get(documents_url(secret)).text


def test_the_pages_never_show_the_organisation_s_judgement(client, priya, lena, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    offer = make_offer_with_checklist(priya)
    make_offer(priya, offer.case, vendor=make_vendor(priya, name="Rival Compute Ltd"))
    checklist = offer.clause_checklist
    first = clause_items(offer)[0]
    set_statuses(lena, checklist, {first.key: "needs_negotiation"})
    tracked_update(
        type(first).objects.get(pk=first.pk),
        actor=lena,
        reason="Reviewed",
        fields={"note": "Internal: push back hard on this", "clause_reference": "Our ref 9"},
    )
    invitation, secret = make_invitation(priya, offer)
    open_portal(client, invitation)
    pages = (
        "".join(client.get(section_url(secret, section)).text for section in SECTIONS)
        + client.get(documents_url(secret)).text
        + client.get(f"/portal/{secret}/answers/").text
    )
    assert first.title in pages
    for internal in (
        "Internal: push back hard on this",
        "Our ref 9",
        "Needs negotiation",
        "needs_negotiation",
        first.guidance[:40] if first.guidance else "no guidance",
        "Rival Compute Ltd",
        "Lena",
        "scorecard",
    ):
        assert internal not in pages, internal


def test_a_revoked_or_expired_invitation_takes_no_write(client, priya, portal):
    invitation, secret = portal
    invitation_revoke(actor=priya, invitation=invitation, reason="Wrong contact")
    assert client.post(section_url(secret, "spec"), {"cards_per_node": "8"}).status_code == 410
    assert (
        client.post(
            documents_url(secret), {"kind": "sla", "file": SimpleUploadedFile("a.pdf", PDF)}
        ).status_code
        == 410
    )
    assert _written(invitation) == (0, 0, 0)

    later, later_secret = make_invitation(priya, email="ops@vendor.example")
    open_portal(client, later)
    VendorInvitation.objects.filter(pk=later.pk).update(expires_at=timezone.now())
    assert (
        client.post(section_url(later_secret, "spec"), {"cards_per_node": "8"}).status_code == 410
    )
    assert _written(later) == (0, 0, 0)


def test_an_invitation_closed_while_the_vendor_typed_refuses_the_submit(priya, portal):
    invitation, _secret = portal
    opened = VendorInvitation.objects.get(pk=invitation.pk)  # as the page read it
    invitation_revoke(actor=priya, invitation=invitation, reason="Wrong contact")
    with pytest.raises(StateConflict):
        proposals_submit(invitation=opened, section="spec", answers={"cards_per_node": "8"})
    assert _written(invitation) == (0, 0, 0)


@pytest.mark.parametrize("persona", [None, "priya", "lena", "tariq", "aude", "ada"])
def test_staff_and_strangers_without_the_code_are_sent_to_the_start_page(
    persona, priya, people, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    invitation, secret = make_invitation(priya)
    vendor = Client()
    open_portal(vendor, invitation)
    vendor.post(section_url(secret, "spec"), {"cards_per_node": "8", "driver_version": "550.54"})
    browser = Client()
    if persona:
        browser.force_login(people[persona])
    start = f"/portal/{secret}/"
    pages = [section_url(secret, section) for section in SECTIONS] + [documents_url(secret)]
    for url in pages:
        page = browser.get(url)
        assert page.status_code == 302 and page.url == start, url
        posted = browser.post(url, {"cards_per_node": "4"})
        assert posted.status_code == 302 and posted.url == start, url
    proposal = Proposal.objects.get(invitation=invitation, claim="cards_per_node")
    assert (
        browser.post(
            reply_url(secret, "spec", proposal.pk), {f"reply-{proposal.pk}-reply": "x"}
        ).url
        == start
    )
    assert Proposal.objects.get(invitation=invitation, claim="cards_per_node").value == "8"
    assert _written(invitation) == (2, 0, 1)


def test_the_pages_speak_chinese(client, portal):
    _invitation, secret = portal
    page = client.get(section_url(secret, "spec"), HTTP_ACCEPT_LANGUAGE="zh-hans").text
    assert "数据表提示" in page  # "Datasheet hints"
    assert "提交答复" in page  # "Send your answers"
    assert "当前记录" in page  # "On record now"
    documents = client.get(documents_url(secret), HTTP_ACCEPT_LANGUAGE="zh-hans").text
    assert "上传文件" in documents  # "Upload a document"
    assert "说明" in documents  # "Description"

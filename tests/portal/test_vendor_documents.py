"""Li Wei uploads the papers behind her answers: kept whole with their SHA-256, or not at all."""

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.core.services import StateConflict, tracked_update
from apps.portal.models import InvitationUse, UseKind, VendorDocument, VendorInvitation
from apps.portal.services.invitations import invitation_revoke
from apps.portal.services.proposals import document_upload
from tests.portal.factories import make_invitation, open_portal
from tests.portal.vendor import documents_url

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n"


@pytest.fixture
def portal(client, priya, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    return invitation, secret


def _upload(client, secret, name, content, kind="sla", description="Signed SLA"):
    return client.post(
        documents_url(secret),
        {"kind": kind, "description": description, "file": SimpleUploadedFile(name, content)},
    )


def _nothing_stored(invitation, stored_files):
    return (
        not VendorDocument.objects.filter(invitation=invitation).exists()
        and not InvitationUse.objects.filter(invitation=invitation, kind=UseKind.UPLOADED).exists()
        and stored_files() == []
    )


def test_a_document_is_stored_with_its_digest_and_listed(client, portal, stored_files):
    invitation, secret = portal
    assert client.get(documents_url(secret)).status_code == 200
    answer = _upload(client, secret, "sla.pdf", PDF)
    assert answer.status_code == 302 and answer.url == documents_url(secret)
    document = VendorDocument.objects.get(invitation=invitation)
    assert document.sha256 == hashlib.sha256(PDF).hexdigest()
    assert (document.name, document.kind, document.size_bytes) == ("sla.pdf", "sla", len(PDF))
    assert document.content_type == "application/pdf" and document.status == "pending"
    [stored] = stored_files()
    assert stored.storage_name == document.storage_name and stored.read_bytes() == PDF
    [use] = InvitationUse.objects.filter(invitation=invitation, kind=UseKind.UPLOADED)
    assert use.detail == "Service level agreement: sla.pdf"
    assert document.history.get().history_change_reason == "Uploaded by the vendor (Li Wei)"

    page = client.get(documents_url(secret)).text
    assert "sla.pdf" in page and document.sha256 in page and "Awaiting review" in page
    assert f"{len(PDF)}\xa0bytes" in page  # the size, formatted


def test_a_rejected_document_shows_the_reason(client, portal, lena):
    _invitation, secret = portal
    _upload(client, secret, "sla.pdf", PDF)
    document = VendorDocument.objects.get()
    tracked_update(
        document,
        actor=lena,
        reason="Reviewed",
        fields={"status": "rejected", "review_note": "Unsigned copy.", "reviewed_by": lena},
    )
    page = client.get(documents_url(secret)).text
    assert "Rejected" in page and "Unsigned copy." in page


def test_an_upload_over_the_limit_is_refused_and_nothing_is_stored(
    client, portal, settings, stored_files
):
    invitation, secret = portal
    settings.PORTAL_DOCUMENT_MAX_BYTES = 1024
    # Declared over the limit and its envelope: refused before a byte is read.
    refused = client.generic(
        "POST",
        documents_url(secret),
        b"",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(1024 + 1024 * 1024),
    )
    assert refused.status_code == 413
    assert "larger than" in refused.text
    # Within the envelope but over the limit itself: refused by the size it reports.
    page = _upload(client, secret, "sla.pdf", PDF + b"x" * 1024)
    assert page.status_code == 400 and "larger than 1.0" in page.text
    assert _nothing_stored(invitation, stored_files)


@pytest.mark.parametrize(
    "name,content,reason",
    [
        ("tool.exe", b"MZ\x90\x00", "Files of this type are not taken here"),
        ("notes.txt", b"plain words", "Files of this type are not taken here"),
        ("sla.pdf", b"GIF89a not a pdf", "not a PDF file"),
        ("../../etc/passwd", b"root:x:0:0", "Files of this type are not taken here"),
        ("sla.pdf", b"", "The file is empty."),
    ],
)
def test_a_file_of_the_wrong_type_or_empty_is_refused(
    client, portal, stored_files, name, content, reason
):
    invitation, secret = portal
    page = _upload(client, secret, name, content)
    assert page.status_code == 400
    assert reason in page.text
    assert _nothing_stored(invitation, stored_files)


def test_a_document_needs_a_kind(client, portal, stored_files):
    invitation, secret = portal
    assert _upload(client, secret, "sla.pdf", PDF, kind="scorecard").status_code == 400
    assert _nothing_stored(invitation, stored_files)


def test_the_upload_form_checks_csrf(portal, stored_files):
    invitation, secret = portal
    browser = Client(enforce_csrf_checks=True)
    open_portal(browser, invitation)
    refused = browser.post(
        documents_url(secret), {"kind": "sla", "file": SimpleUploadedFile("sla.pdf", PDF)}
    )
    assert refused.status_code == 403
    assert _nothing_stored(invitation, stored_files)


@pytest.mark.s3
def test_a_document_goes_to_the_bucket(client, priya, s3_bucket):
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    assert _upload(client, secret, "spec.pdf", PDF, kind="spec_sheet").status_code == 302
    document = VendorDocument.objects.get(invitation=invitation)
    assert s3_bucket.read(document.storage_name) == PDF


def test_an_upload_after_the_invitation_closed_stores_nothing(priya, portal, stored_files):

    invitation, _secret = portal
    opened = VendorInvitation.objects.get(pk=invitation.pk)  # as the page read it
    invitation_revoke(actor=priya, invitation=invitation, reason="Wrong contact")
    with pytest.raises(StateConflict):
        document_upload(
            invitation=opened,
            kind="sla",
            description="",
            upload=SimpleUploadedFile("sla.pdf", PDF),
        )
    assert _nothing_stored(invitation, stored_files)


@pytest.mark.s3
def test_a_store_that_cannot_be_reached_keeps_no_record(client, priya, lone_s3):
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    lone_s3.server.stop()
    page = _upload(client, secret, "sla.pdf", PDF)
    assert page.status_code == 503
    assert "The file store cannot be reached just now" in page.text
    assert not VendorDocument.objects.filter(invitation=invitation).exists()
    assert not InvitationUse.objects.filter(invitation=invitation, kind=UseKind.UPLOADED).exists()


def test_an_invitation_takes_so_many_documents_and_bytes_in_all(
    client, portal, settings, stored_files
):
    """A vendor cannot fill the store through one invitation: past the count or the total
    size, the upload is refused whole, saying how to send more."""
    invitation, secret = portal
    settings.PORTAL_DOCUMENTS_PER_INVITATION = 2
    assert _upload(client, secret, "one.pdf", PDF).status_code == 302
    assert _upload(client, secret, "two.pdf", PDF).status_code == 302
    refused = _upload(client, secret, "three.pdf", PDF)
    assert refused.status_code == 400 and "already holds 2 documents" in refused.text
    assert VendorDocument.objects.filter(invitation=invitation).count() == 2
    assert len(stored_files()) == 2

    settings.PORTAL_DOCUMENTS_PER_INVITATION = 50
    settings.PORTAL_DOCUMENTS_TOTAL_MAX_BYTES = 3 * len(PDF) - 1
    refused = _upload(client, secret, "three.pdf", PDF)
    assert refused.status_code == 400 and "over" in refused.text and "in all" in refused.text
    assert VendorDocument.objects.filter(invitation=invitation).count() == 2
    assert len(stored_files()) == 2
    assert InvitationUse.objects.filter(invitation=invitation, kind=UseKind.UPLOADED).count() == 2

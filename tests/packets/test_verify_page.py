"""The verification page: upload a PDF, learn whether it is a packet of ours, unchanged."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.packets.forms import MAX_UPLOAD_BYTES
from tests.packets.factories import issue_packet, make_packet_case

pytestmark = pytest.mark.whole_case


def _upload(client, content: bytes, name="packet.pdf", **extra):
    file = SimpleUploadedFile(name, content, content_type="application/pdf")
    return client.post(reverse("packets:verify"), {"file": file}, **extra)


def test_an_issued_packet_is_valid_and_one_changed_byte_is_not(
    browser_as, priya, django_capture_on_commit_callbacks
):
    packet = issue_packet(
        priya, make_packet_case(priya, offers=1), django_capture_on_commit_callbacks
    )
    content = packet.file.read()
    client = browser_as("aude")

    page = _upload(client, content).content.decode()
    assert f"Valid: this is packet {packet.number}, unchanged." in page
    assert "Diligence development signing key" in page

    altered = bytearray(content)
    altered[len(altered) // 3] ^= 0x01
    page = _upload(client, bytes(altered)).content.decode()
    assert "Not valid: this file was changed after it was signed." in page
    assert "the file is damaged" not in page
    assert "no packet issued here has these exact bytes" in page


def test_a_file_that_is_not_a_pdf_is_refused_clearly(browser_as):
    response = _upload(browser_as("lena"), b"PK\x03\x04 a zip file", name="packet.pdf")
    assert response.status_code == 200
    assert "This file is not a PDF" in response.content.decode()


def test_a_signed_pdf_that_was_never_issued_here_is_not_valid(browser_as):
    response = _upload(browser_as("tariq"), b"%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n")
    page = response.content.decode()
    assert "Not valid" in page and "no packet issued here has these exact bytes" in page


def test_an_oversized_upload_is_refused_before_it_is_read(browser_as):
    client = browser_as("aude")
    response = _upload(client, b"%PDF-1.7\n", CONTENT_LENGTH=str(MAX_UPLOAD_BYTES * 2))
    assert response.status_code == 413
    assert "larger than 50" in response.content.decode()

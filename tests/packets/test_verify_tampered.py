"""The verification page says a signed file changed since it was signed in those words, not
as a generic error: a byte changed, bytes added, a title rewritten."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from pypdf import PdfWriter

from apps.packets.signing import get_signer, sign_pdf

pytestmark = pytest.mark.django_db


def _upload(client, content: bytes):
    file = SimpleUploadedFile("packet.pdf", content, content_type="application/pdf")
    return client.post(reverse("packets:verify"), {"file": file})


def _signed_here(tmp_path) -> bytes:
    """A small PDF signed with this system's key, as a packet is (never issued)."""
    unsigned, signed = tmp_path / "unsigned.pdf", tmp_path / "signed.pdf"
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_metadata({"/Title": "Packet DIL-2026-000099"})
    with open(unsigned, "wb") as handle:
        writer.write(handle)
    sign_pdf(unsigned, signed, get_signer(), reason="Audit packet DIL-2026-000099")
    return signed.read_bytes()


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda content: _flipped(content, 200), id="a byte changed"),
        pytest.param(lambda content: content + b"\n%% a line added\n", id="bytes added"),
        pytest.param(
            lambda content: content.replace(b"/Title (Packet", b"/Title (Paket!", 1),
            id="the title rewritten",
        ),
    ],
)
def test_a_file_changed_after_signing_is_said_to_be_so(browser_as, tmp_path, tamper):
    content = _signed_here(tmp_path)
    client = browser_as("aude")
    untouched = _upload(client, content).content.decode()
    assert "changed after it was signed" not in untouched
    assert "no packet issued here has these exact bytes" in untouched

    changed = tamper(content)
    assert changed != content and len(changed) >= len(content)
    page = _upload(client, changed).content.decode()
    assert "Not valid: this file was changed after it was signed." in page
    assert "This file was changed after it was signed: the bytes the signature covers" in page
    # Not a generic error.
    assert "the file is damaged" not in page
    assert "The signature does not cover the whole file." not in page


def _flipped(content: bytes, index: int) -> bytes:
    altered = bytearray(content)
    altered[index] ^= 0x01
    return bytes(altered)

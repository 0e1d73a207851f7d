"""The *Verify a packet* page with every bad PDF: "not valid" with the reason, never a 500.

The page keeps nothing: the snapshot of every table and stored file is unchanged.
"""

import copy
import io

import pytest
from django.test import TestCase, override_settings
from django.urls import reverse
from pypdf import PdfReader

from apps.packets.forms import MAX_UPLOAD_BYTES
from apps.packets.verification import verify_packet_bytes
from tests.badinput.conftest import signing_in_tmp
from tests.badinput.corpus import PDF, Payload, appended_update, minimal_pdf
from tests.badinput.refusal import CountingInput, as_upload, assert_refused, stored_state
from tests.packets.factories import issue_packet, make_packet_case
from tests.stored import store_folder

pytestmark = pytest.mark.whole_case

URL = reverse("packets:verify")


def verdict(response) -> str:
    """The page's "Not valid" and its reasons, or the form's refusal of the file."""
    assert response.status_code in (200, 400, 413), response.status_code
    result = response.context.get("result")
    if result is None:
        errors = response.context["form"].errors.get("file") or [
            response.context.get("upload_error")
        ]
        assert errors and errors[0], "neither a verdict nor a refusal"
        return " ".join(errors)
    assert not result.valid, "a bad upload was found valid"
    assert "Not valid" in response.content.decode()
    assert result.problems
    return " ".join(result.problems)


@pytest.fixture
def client(browser_as):
    return browser_as("aude")


@pytest.fixture(scope="module")
def _issued(module_people, tmp_path_factory):
    """A real packet, rendered and signed once for the module, its file in a folder of its
    own; returns the folder, the packet and its bytes."""
    priya = module_people["priya"]
    media = tmp_path_factory.mktemp("packet-media")
    with override_settings(MEDIA_ROOT=media, **signing_in_tmp(tmp_path_factory)):
        case = make_packet_case(priya, offers=1)
        packet = issue_packet(priya, case, TestCase.captureOnCommitCallbacks)
        content = packet.file.read()
    return media, packet, content


@pytest.fixture
def issued(_issued, people, media_root):
    """The module's issued packet and its bytes, its file in the test's storage."""
    media, packet, content = _issued
    store_folder(media)
    return copy.deepcopy(packet), content


def send_with(client):
    return lambda payload, **extra: client.post(URL, {"file": as_upload(payload)}, **extra)


@pytest.mark.parametrize("name", sorted(PDF))
def test_every_bad_pdf_is_not_valid_with_a_reason(client, media_root, name):
    assert_refused(
        PDF[name](minimal_pdf()),
        send=send_with(client),
        snapshot=lambda: stored_state(media_root),
        reason=verdict,
    )


def test_every_bad_variant_of_an_issued_packet_is_not_valid(client, issued, media_root):
    """The same corpus made from a real signed packet: truncated, appended to, re-typed…"""
    _packet, content = issued
    assert verify_packet_bytes(content).valid  # the base is a good packet
    reasons = {}
    for name in sorted(PDF):
        payload = PDF[name](content)
        if payload.body == content:
            continue  # a file name or media type alone does not change the packet
        reasons[name] = assert_refused(
            payload,
            send=send_with(client),
            snapshot=lambda: stored_state(media_root),
            reason=verdict,
        )
    # Bytes appended after the signature: the file was changed after it was signed.
    assert "changed after it was signed" in reasons["appended_update"]
    assert "not byte-identical" in reasons["appended_update"]
    assert "not a PDF" in reasons["zip_named_pdf"]


def test_an_appended_update_is_seen_by_readers_yet_not_valid(issued):
    _packet, content = issued
    updated = appended_update(content, text="a changed total")
    reader = PdfReader(io.BytesIO(updated))
    assert len(reader.pages) >= 1  # a well-formed update, not garbage
    result = verify_packet_bytes(updated)
    assert not result.valid
    assert not result.covers_whole_document
    assert result.issued_packet is None


# --- size, before the body is read ------------------------------------------------------------


def _multipart(content: bytes) -> bytes:
    return (
        b"--BoUnDaRy\r\n"
        b'Content-Disposition: form-data; name="file"; filename="packet.pdf"\r\n'
        b"Content-Type: application/pdf\r\n\r\n" + content + b"\r\n--BoUnDaRy--\r\n"
    )


BOUNDARY = "multipart/form-data; boundary=BoUnDaRy"


def _post_counting(client, body: bytes, content_length: str):
    stream = CountingInput(body)
    extra = {"wsgi.input": stream, "CONTENT_LENGTH": content_length, "CONTENT_TYPE": BOUNDARY}
    return client.generic("POST", URL, b"", content_type=BOUNDARY, **extra), stream


def test_a_declared_oversize_upload_is_refused_unread(client, media_root):
    before = stored_state(media_root)
    body = _multipart(minimal_pdf())
    response, stream = _post_counting(client, body, str(MAX_UPLOAD_BYTES * 2))
    assert response.status_code == 413 and "larger than 50" in response.content.decode()
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


@pytest.mark.parametrize("declared", ["abc", "-5", "1e9", " "])
def test_a_malformed_content_length_is_refused_unread(client, media_root, declared):
    before = stored_state(media_root)
    response, stream = _post_counting(client, _multipart(minimal_pdf()), declared)
    assert response.status_code == 400
    assert response.context["upload_error"] == "The upload states no valid length."
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


def test_a_body_longer_than_declared_is_cut_at_the_declared_length(client, media_root):
    before = stored_state(media_root)
    body = _multipart(minimal_pdf())
    response, stream = _post_counting(client, body + b"\0" * 1_000_000, str(len(body) // 2))
    assert response.status_code < 500
    assert stream.bytes_read <= len(body) // 2
    assert stored_state(media_root) == before


def test_the_pdf_corpus_is_what_it_claims():
    base = minimal_pdf()
    assert base.startswith(b"%PDF-1.7") and base.rstrip().endswith(b"%%EOF")
    updated = PDF["appended_update"](base).body
    assert updated.startswith(base) and updated.count(b"startxref") == 2
    assert Payload("x", b"").filename == "upload.bin"

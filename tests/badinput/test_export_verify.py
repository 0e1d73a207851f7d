"""The *Verify an export* page with every bad ZIP: a "not valid" verdict that says why, never a 500.

Nothing is stored either: the page checks the upload and forgets it.
"""

import hashlib
import io
import json
import zipfile

import pytest
from django.urls import reverse

from apps.audit.export_check import verify_export
from apps.audit.exports import MANIFEST, SIGNATURE, build_case_export
from tests.badinput.corpus import BOMB_BYTES, ZIP, Payload, manifest_payloads, members_of, zip_of
from tests.badinput.refusal import CountingInput, as_upload, assert_refused, stored_state
from tests.factories import FULL_SPEC, make_case, make_offer

URL = reverse("audit:verify-export")
MANIFEST_CORPUS = manifest_payloads(MANIFEST)


@pytest.fixture
def export(priya) -> bytes:
    case = make_case(priya, name="Exported")
    make_offer(priya, case, spec=FULL_SPEC)
    buffer = io.BytesIO()
    build_case_export(case, buffer)
    return buffer.getvalue()


def verdict(response) -> str:
    """The page's "not valid" verdict and its reasons, or the form's refusal."""
    assert response.status_code in (200, 400, 413), response.status_code
    check = response.context["check"]
    if check is None:
        errors = response.context["form"].errors.get("file")
        assert errors, "neither a verdict nor a form error"
        return " ".join(errors)
    assert not check.valid, "a bad upload was found valid"
    assert "Not valid." in response.content.decode()
    assert check.problems
    return " ".join(check.problems)


@pytest.fixture
def send(browser_as):
    client = browser_as("aude")
    return lambda payload, **extra: client.post(URL, {"file": as_upload(payload)}, **extra)


def test_the_corpus_base_is_a_valid_export(send, export):
    response = send(Payload("valid", export, "application/zip", "export.zip"))
    assert response.context["check"].valid


@pytest.mark.parametrize("name", sorted(ZIP))
def test_every_bad_archive_is_not_valid_with_a_reason(send, export, media_root, name):
    assert_refused(
        ZIP[name](export),
        send=send,
        snapshot=lambda: stored_state(media_root),
        reason=verdict,
    )


@pytest.mark.parametrize("name", sorted(MANIFEST_CORPUS))
def test_every_bad_manifest_is_not_valid_with_a_reason(send, export, media_root, name):
    assert_refused(
        MANIFEST_CORPUS[name](export),
        send=send,
        snapshot=lambda: stored_state(media_root),
        reason=verdict,
    )


@pytest.mark.parametrize(
    "name,words",
    [
        ("nul_in_name", "Unsafe"),
        ("nul_after_member_name", "Unsafe"),
        ("parent_directory", "Unsafe"),
        ("absolute_path", "Unsafe"),
        ("backslashes", "Unsafe"),
        ("windows_drive", "Unsafe"),
        ("very_long_name", "not in the manifest"),
        ("duplicate_member", "twice"),
        ("encrypted_member", "cannot be read"),
        ("unsupported_compression", "cannot be read"),
        ("huge_declared_size", "does not match"),
        ("bomb_member", "does not match"),
        ("not_a_zip", "not a ZIP"),
        ("truncated_half", "not a ZIP"),
    ],
)
def test_the_reason_names_the_problem(export, name, words):
    check = verify_export(io.BytesIO(ZIP[name](export).body))
    assert not check.valid
    assert any(words in problem for problem in check.problems), check.problems


def _forged_bomb(export: bytes) -> bytes:
    """A member of BOMB_BYTES zeros that an edited (so unsigned) manifest lists truthfully."""
    members = dict(members_of(export))
    zeros = b"\0" * BOMB_BYTES
    manifest = json.loads(members[MANIFEST])
    manifest["files"].append(
        {
            "path": "records/bomb.json",
            "size": len(zeros),
            "sha256": hashlib.sha256(zeros).hexdigest(),
        }
    )
    members[MANIFEST] = json.dumps(manifest).encode()
    members["records/bomb.json"] = zeros
    return zip_of(list(members.items()))


def test_an_unsigned_manifest_cannot_make_the_server_inflate_more_than_an_upload(export, settings):
    settings.AUDIT_EXPORT_MAX_UPLOAD_BYTES = 4 * 1024 * 1024
    archive = _forged_bomb(export)
    assert len(archive) < 1024 * 1024 < BOMB_BYTES
    check = verify_export(io.BytesIO(archive))
    assert not check.valid
    assert "not signed" in " ".join(check.problems) or "signature" in " ".join(check.problems)
    assert any("more than" in p and "not checked" in p for p in check.problems), check.problems


def test_a_signed_manifest_is_read_in_full(export, settings):
    """The budget applies to unsigned manifests only: a genuine export checks completely."""
    settings.AUDIT_EXPORT_MAX_UPLOAD_BYTES = 1  # smaller than any member
    check = verify_export(io.BytesIO(export))
    assert check.valid, check.problems


# --- size, before the body is read ------------------------------------------------------------


BOUNDARY = "multipart/form-data; boundary=BoUnDaRy"


def _post_counting(client, body: bytes, content_length: str):
    stream = CountingInput(body)
    extra = {"wsgi.input": stream, "CONTENT_LENGTH": content_length, "CONTENT_TYPE": BOUNDARY}
    return client.generic("POST", URL, b"", content_type=BOUNDARY, **extra), stream


def _multipart(content: bytes) -> bytes:
    return (
        b"--BoUnDaRy\r\n"
        b'Content-Disposition: form-data; name="file"; filename="export.zip"\r\n'
        b"Content-Type: application/zip\r\n\r\n" + content + b"\r\n--BoUnDaRy--\r\n"
    )


def test_a_declared_oversize_upload_is_refused_unread(browser_as, media_root, settings):
    settings.AUDIT_EXPORT_MAX_UPLOAD_BYTES = 1000
    client = browser_as("aude")
    before = stored_state(media_root)
    body = _multipart(b"PK" * 100_000)
    response, stream = _post_counting(client, body, str(len(body)))
    assert response.status_code == 413
    assert "larger than exports" in " ".join(response.context["form"].errors["file"])
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


@pytest.mark.parametrize("declared", ["abc", "-5", "1e9", " "])
def test_a_malformed_content_length_is_refused_not_a_crash(browser_as, media_root, declared):
    client = browser_as("aude")
    before = stored_state(media_root)
    body = _multipart(b"PK" * 1000)
    response, stream = _post_counting(client, body, declared)
    assert response.status_code == 400
    assert response.context["form"].errors["file"] == ["The upload states no valid length."]
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


def test_a_body_longer_than_declared_is_cut_at_the_declared_length(browser_as, media_root, export):
    client = browser_as("aude")
    before = stored_state(media_root)
    body = _multipart(export)
    response, stream = _post_counting(client, body + b"\0" * 1_000_000, str(len(body) // 2))
    assert response.status_code < 500
    assert stream.bytes_read <= len(body) // 2
    after = stored_state(media_root)
    assert after == before, {
        k: (before["rows"].get(k), v)
        for k, v in after["rows"].items()
        if before["rows"].get(k) != v
    }


def test_a_zip_of_only_safe_names_but_no_manifest_is_not_valid():
    check = verify_export(io.BytesIO(zip_of([("records/a.json", b"{}")])))
    assert f"{MANIFEST} is missing." in check.problems
    assert f"{SIGNATURE} is missing." in check.problems


def test_the_zip_corpus_is_what_it_claims(export):
    raw = ZIP["nul_in_name"](export).body
    assert b"manifest.json\x00../../x" in raw
    with zipfile.ZipFile(io.BytesIO(ZIP["duplicate_member"](export).body)) as archive:
        names = archive.namelist()
    assert len(names) == len(set(names)) + 1

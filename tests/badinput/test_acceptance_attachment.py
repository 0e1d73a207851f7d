"""POST /api/v1/acceptance-results/<pk>/attachments/ with bad files and hostile names.

Refusals store nothing; an accepted file is stored under a name the server makes,
whatever name the client sent.
"""

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from tests.acceptance.factories import approved_offer, make_plan, record_faults
from tests.badinput.corpus import HOSTILE_FILE_NAMES, Payload, attachment_payloads
from tests.badinput.refusal import (
    CountingInput,
    api_reason,
    as_upload,
    assert_refused,
    stored_state,
)

LIMIT = 4096


@pytest.fixture
def result(people, tariq, settings):
    settings.ACCEPTANCE_ATTACHMENT_MAX_BYTES = LIMIT
    _case, offer = approved_offer(people)
    [result] = record_faults(tariq, make_plan(tariq, offer), kinds=("network",))
    return result


def send_with(api_as, result):
    client = api_as("tariq")  # signed in (its token made) before anything is snapshotted

    def send(payload: Payload):
        url = f"/api/v1/acceptance-results/{result.pk}/attachments/"
        return client.post(url, {"file": as_upload(payload)}, format="multipart")

    return send


REFUSED = {
    **attachment_payloads(LIMIT),
    "wrong_type_exe": Payload("wrong_type_exe", b"MZ\x90\x00", "application/octet-stream", "a.exe"),
    "no_extension": Payload("no_extension", b"log line\n", "text/plain", "README"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_attachments_are_refused_and_nothing_is_stored(api_as, result, media_root, name):
    assert_refused(
        REFUSED[name],
        send=send_with(api_as, result),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )


@pytest.mark.parametrize("filename", HOSTILE_FILE_NAMES)
def test_hostile_file_names_never_choose_the_stored_path(api_as, result, media_root, filename):
    payload = Payload("hostile_name", b"fault injected at 10:02\n", "text/plain", filename)
    send = send_with(api_as, result)
    before = stored_state(media_root)
    response = send(payload)
    assert response.status_code in (201, 400), response.content[:300]
    if response.status_code == 400:
        assert api_reason(response)
        assert stored_state(media_root) == before
        return
    stored = [p for p in Path(media_root).rglob("*") if p.is_file()]
    assert len(stored) == 1
    assert Path(media_root).resolve() in stored[0].resolve().parents


BOUNDARY = "multipart/form-data; boundary=BoUnDaRy"


def _multipart(size: int) -> bytes:
    return (
        b"--BoUnDaRy\r\n"
        b'Content-Disposition: form-data; name="file"; filename="fault.log"\r\n'
        b"Content-Type: text/plain\r\n\r\n" + b"x" * size + b"\r\n--BoUnDaRy--\r\n"
    )


@pytest.mark.parametrize("client_kind", ["token", "session"])
def test_an_oversized_declared_body_is_refused_before_a_byte_is_read(
    api_as, tariq, result, media_root, client_kind
):
    """Multipart parsing would spool the whole body to disk before the size check."""
    if client_kind == "token":
        client, headers = api_as("tariq"), {}
    else:
        client = Client(enforce_csrf_checks=True)
        client.force_login(tariq)
        client.get(reverse("acceptance:attachment_add", args=[result.pk]))
        headers = {"HTTP_X_CSRFTOKEN": client.cookies["csrftoken"].value}
    before = stored_state(media_root)
    stream = CountingInput(_multipart(1000))
    response = client.generic(
        "POST",
        f"/api/v1/acceptance-results/{result.pk}/attachments/",
        b"",
        content_type=BOUNDARY,
        **headers,
        **{
            "wsgi.input": stream,
            "CONTENT_LENGTH": str(LIMIT + 1024 * 1024),
            "CONTENT_TYPE": BOUNDARY,
        },
    )
    assert response.status_code == 413
    assert "larger than the 4.0" in response.json()["detail"]
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


def test_a_body_within_the_limit_is_still_read_and_stored(api_as, result, media_root):
    body = _multipart(100)
    response = api_as("tariq").generic(
        "POST",
        f"/api/v1/acceptance-results/{result.pk}/attachments/",
        body,
        content_type=BOUNDARY,
    )
    assert response.status_code == 201, response.content[:300]
    assert response.json()["size_bytes"] == 100

"""POST /api/v1/red-flag-waivers/ with an evidence file: bad files and hostile names.

Refusals store nothing (no waiver, no history row, no file); an accepted file is stored
under a name the server makes, whatever name the client sent.
"""

from pathlib import Path

import pytest

from tests.badinput.corpus import HOSTILE_FILE_NAMES, Payload, attachment_payloads, minimal_pdf
from tests.badinput.refusal import api_reason, as_upload, assert_refused, stored_state
from tests.contracts.factories import item, make_checklist, set_statuses

LIMIT = 4096


@pytest.fixture
def flagged(lena, priya, settings):
    settings.WAIVER_EVIDENCE_MAX_BYTES = LIMIT
    checklist = make_checklist(lena, creator=priya)
    set_statuses(lena, checklist, {"sla": "missing"})
    return item(checklist, "sla")


def send_with(api_as, flagged):
    client = api_as("lena")  # signed in (its token made) before anything is snapshotted

    def send(payload: Payload):
        body = {"item": flagged.pk, "reason": "Credits suffice", "evidence": as_upload(payload)}
        return client.post("/api/v1/red-flag-waivers/", body, format="multipart")

    return send


REFUSED = {
    **attachment_payloads(LIMIT),
    "wrong_type_exe": Payload("wrong_type_exe", b"MZ\x90\x00", "application/octet-stream", "a.exe"),
    "exe_named_pdf": Payload("exe_named_pdf", b"MZ\x90\x00", "application/pdf", "letter.pdf"),
    "zip_named_png": Payload("zip_named_png", b"PK\x03\x04", "image/png", "scan.png"),
    "no_extension": Payload("no_extension", b"a letter\n", "text/plain", "README"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_evidence_is_refused_and_nothing_is_stored(api_as, flagged, media_root, name):
    assert_refused(
        REFUSED[name],
        send=send_with(api_as, flagged),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )


@pytest.mark.parametrize("filename", HOSTILE_FILE_NAMES)
def test_hostile_file_names_never_choose_the_stored_path(api_as, flagged, media_root, filename):
    payload = Payload("hostile_name", minimal_pdf("vendor letter"), "application/pdf", filename)
    send = send_with(api_as, flagged)
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
    assert stored[0].name.endswith(".pdf") and "/" not in response.json()["evidence"]["name"]

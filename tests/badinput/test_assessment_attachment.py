"""PUT /api/v1/data-export-assessments/<pk>/attachments/<key>/ with bad files and names.

Refusals (empty, oversized, no reason) store nothing; hostile file names are accepted
only under a name the storage generates, inside the attachments folder.
"""

from pathlib import Path

import pytest

from apps.assessments.models import MAX_ATTACHMENT_BYTES, AssessmentAnswer
from tests.assessments.factories import make_assessment
from tests.badinput.corpus import HOSTILE_FILE_NAMES, Payload, attachment_payloads
from tests.badinput.refusal import (
    CountingInput,
    api_reason,
    as_upload,
    assert_refused,
    stored_state,
)
from tests.factories import make_case

BASE = "/api/v1/data-export-assessments/"


@pytest.fixture
def assessment(priya, lena):
    return make_assessment(lena, make_case(priya))


@pytest.fixture
def api(api_as):
    return api_as("lena")


def url(assessment, key="lawful_source") -> str:
    return f"{BASE}{assessment.pk}/attachments/{key}/"


def send_with(api, assessment, **fields):
    def send(payload: Payload):
        body = {
            "file": as_upload(payload),
            "change_reason": "Scan of the letter",
            "version": assessment.version,
            **fields,
        }
        return api.put(url(assessment), body, format="multipart")

    return send


REFUSED = attachment_payloads(MAX_ATTACHMENT_BYTES)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_files_are_refused_and_nothing_is_stored(api, assessment, media_root, name):
    assert_refused(
        REFUSED[name],
        send=send_with(api, assessment),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )


def test_no_change_reason_is_refused_and_nothing_is_stored(api, assessment, media_root):
    assert_refused(
        Payload("ok", b"%PDF-1.7 letter", "application/pdf", "letter.pdf"),
        send=send_with(api, assessment, change_reason=""),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )


@pytest.mark.parametrize("filename", HOSTILE_FILE_NAMES)
def test_hostile_file_names_never_choose_the_stored_path(api, assessment, media_root, filename):
    payload = Payload("hostile_name", b"%PDF-1.7 letter", "application/pdf", filename)
    before = stored_state(media_root)
    response = send_with(api, assessment)(payload)
    assert response.status_code in (200, 400), response.content[:300]
    if response.status_code == 400:
        # Refused for its name, or, where the name has no extension taken, for its type.
        reason = api_reason(response)
        assert (
            reason == "file: ['This file name cannot be used.']"
            or "Files of this type are not taken here" in reason
        ), reason
        assert stored_state(media_root) == before
        return
    stored = [p for p in Path(media_root).rglob("*") if p.is_file()]
    [path] = stored
    assert path.resolve().is_relative_to((Path(media_root) / "assessments").resolve())
    name = AssessmentAnswer.objects.get(question_key="lawful_source").attachment.name
    assert ".." not in name and "\\" not in name and "\x00" not in name
    assert len(name) <= 255


def test_a_declared_oversize_attachment_is_refused_before_it_is_read(api, assessment, media_root):
    before = stored_state(media_root)
    stream = CountingInput(b"x" * 1000)
    response = api.generic(
        "PUT",
        url(assessment),
        b"",
        content_type="multipart/form-data; boundary=BoUnDaRy",
        **{
            "wsgi.input": stream,
            "CONTENT_LENGTH": str(MAX_ATTACHMENT_BYTES * 20),
            "CONTENT_TYPE": "multipart/form-data; boundary=BoUnDaRy",
        },
    )
    assert response.status_code == 413, response.content[:300]
    assert "larger than the 10.0\xa0MB" in api_reason(response)
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before

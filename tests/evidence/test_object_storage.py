"""Evidence uploads into an S3 bucket (moto's server on 127.0.0.1): a refusal leaves the
bucket empty, and a store that goes away mid-upload fails the upload cleanly with 503,
nothing half-written, and the harness's re-send stores it once the store is back."""

import hashlib

import pytest
from rest_framework.test import APIClient

from apps.core import s3
from apps.evidence.models import EvidenceBundle, EvidenceUpload, SpecVerification
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.s3

URL = "/api/v1/evidence/"
UNAVAILABLE = "The file store cannot be reached just now"


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def post(raw: bytes, token: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client.post(URL, data=raw, content_type="application/json")


def test_a_bundle_is_stored_in_the_bucket_byte_for_byte(world, cpu_bundle, s3_bucket):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    response = post(raw, world["token"])
    assert response.status_code == 201, response.json()
    bundle = EvidenceBundle.objects.get()
    assert s3_bucket.names() == [bundle.storage_name]
    assert s3_bucket.read(bundle.storage_name) == raw
    assert hashlib.sha256(raw).hexdigest() == bundle.sha256


@pytest.mark.parametrize("case", ["not_the_schema", "nonce", "artifact_edited", "not_json"])
def test_a_malformed_upload_leaves_the_bucket_empty(world, cpu_bundle, s3_bucket, case):
    document = bundle_for(cpu_bundle, world["record"])
    if case == "not_the_schema":
        document["steps"] = {**document["steps"], "loadtest": {"status": "ok"}}
    elif case == "nonce":
        document["nonce"] = "made-up"
    elif case == "artifact_edited":
        artifact = document["artifacts"][0]
        edited = artifact["content"].replace("NVIDIA GeForce RTX 4090", "NVIDIA H200")
        document["artifacts"] = [{**artifact, "content": edited}, *document["artifacts"][1:]]
    raw = b'{"format": "diligence-evidence' if case == "not_json" else serialise(document)
    response = post(raw, world["token"])
    assert response.status_code in (400, 403), response.content[:300]
    assert s3_bucket.names() == []
    assert EvidenceBundle.objects.count() == 0 and SpecVerification.objects.count() == 0


def _store_goes_away_at(monkeypatch, lone_s3, method: str):
    """Take the store away when the upload reaches ``method`` of the storage."""
    real = getattr(s3.PrivateS3Storage, method)

    def then_gone(self, *args, **kwargs):
        lone_s3.server.stop()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(s3.PrivateS3Storage, method, then_gone)


def test_the_store_gone_before_the_bytes_are_written_answers_503_with_nothing_kept(
    world, cpu_bundle, lone_s3, monkeypatch
):
    _store_goes_away_at(monkeypatch, lone_s3, "_save_new")
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    response = post(raw, world["token"])
    assert response.status_code == 503, response.content[:300]
    assert UNAVAILABLE in response.json()["detail"] and response["Retry-After"]
    # No upload claimed and no bundle: nothing points at bytes that were never written.
    assert EvidenceUpload.objects.count() == 0 and EvidenceBundle.objects.count() == 0


def test_the_store_gone_after_the_write_keeps_the_upload_to_read_again(
    world, cpu_bundle, lone_s3, monkeypatch, settings, s3_server
):
    """The bytes went in whole; the store then went away before they were read back.
    The harness is told 503 (and sends again); the upload waits to be read, and a
    re-send once the store is back is read and verified — one object, one bundle."""
    _store_goes_away_at(monkeypatch, lone_s3, "_open")
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    response = post(raw, world["token"])
    assert response.status_code == 503, response.content[:300]
    upload = EvidenceUpload.objects.get()
    assert upload.state == EvidenceUpload.State.RECEIVED  # neither refused nor failed
    assert EvidenceBundle.objects.count() == 0

    # The store is back (the same bucket, here moved to a running server with the object).
    monkeypatch.undo()
    from tests.conftest import S3Bucket, use_s3_storage

    back = S3Bucket(s3_server, s3_server.new_bucket())
    back.write(upload.storage_name, raw)
    use_s3_storage(settings, s3_server, back.name)
    again = post(raw, world["token"])
    assert again.status_code in (200, 201), again.json()
    bundle = EvidenceBundle.objects.get()
    assert back.names() == [bundle.storage_name] and bundle.sha256 == upload.sha256
    upload.refresh_from_db()
    assert upload.state == EvidenceUpload.State.VERIFIED

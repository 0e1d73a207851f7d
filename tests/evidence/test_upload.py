"""POST /api/v1/evidence/: storage, dedupe, and every refusal with nothing stored."""

import base64
import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.core.services import tracked_update
from apps.evidence.bundle import BundleRefused
from apps.evidence.models import EvidenceBundle, EvidenceUpload, HarnessToken, SpecVerification
from apps.evidence.services import harness_token_revoke
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres

URL = "/api/v1/evidence/"


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def post(raw: bytes, token: str | None, **headers):
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client.post(URL, data=raw, content_type="application/json", **headers)


def assert_nothing_stored(stored_files):
    assert EvidenceBundle.objects.count() == 0
    assert SpecVerification.objects.count() == 0
    assert stored_files() == []


def test_stores_the_exact_bytes_with_digest_and_verifies(world, cpu_bundle, stored_files):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    response = post(raw, world["token"])
    assert response.status_code == 201, response.json()
    bundle = EvidenceBundle.objects.get()
    assert bundle.sha256 == hashlib.sha256(raw).hexdigest() == response.json()["sha256"]
    [path] = stored_files()
    assert path.read_bytes() == raw
    assert bundle.received_at > bundle.run_started_at  # server clock kept apart from the run's
    assert bundle.offer == world["offer"] and bundle.case == world["case"]
    assert bundle.verification.verdict == "failed"  # one RTX 4090 is not 8× H200
    history = bundle.history.get()
    assert history.history_change_reason.startswith("Uploaded with harness token dlh_")
    world["record"].refresh_from_db()
    assert world["record"].last_used_at is not None


def test_the_same_bundle_again_returns_the_existing_record(world, cpu_bundle, stored_files):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    first = post(raw, world["token"])
    again = post(raw, world["token"])
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert EvidenceBundle.objects.count() == 1 and len(stored_files()) == 1


@pytest.mark.parametrize(
    "credentials,status",
    [(None, 401), ("dlh_not-a-token", 401), ("Bearer nonsense", 401)],
)
def test_missing_or_wrong_token_is_refused(world, cpu_bundle, stored_files, credentials, status):
    client = APIClient()
    if credentials:
        client.credentials(
            HTTP_AUTHORIZATION=credentials if " " in credentials else f"Token {credentials}"
        )
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    response = client.post(URL, data=raw, content_type="application/json")
    assert response.status_code == status
    assert_nothing_stored(stored_files)


def test_expired_token_is_refused(world, cpu_bundle, stored_files, tariq):
    tracked_update(
        world["record"],
        actor=tariq,
        reason="test: expire",
        fields={"expires_at": timezone.now() - timedelta(minutes=1)},
    )
    response = post(serialise(bundle_for(cpu_bundle, world["record"])), world["token"])
    assert response.status_code == 403
    assert "expired" in response.json()["detail"]
    assert_nothing_stored(stored_files)


def test_revoked_token_is_refused(world, cpu_bundle, stored_files, tariq):
    harness_token_revoke(actor=tariq, token=world["record"], reason="Vendor run finished")
    response = post(serialise(bundle_for(cpu_bundle, world["record"])), world["token"])
    assert response.status_code == 403
    assert "revoked" in response.json()["detail"]
    assert_nothing_stored(stored_files)


def test_a_user_cannot_upload(world, cpu_bundle, stored_files, api_as, browser_as):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    assert api_as("ada").post(URL, raw, content_type="application/json").status_code == 403
    response = browser_as("tariq").post(URL, raw, content_type="application/json")
    assert response.status_code == 403
    assert_nothing_stored(stored_files)


def test_a_harness_token_is_refused_everywhere_else(world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['token']}")
    for path in ("/api/v1/cases/", "/api/v1/evidence-bundles/", "/api/v1/harness-tokens/"):
        assert client.get(path).status_code == 401
    assert client.post("/api/v1/harness-tokens/", {"case": world["case"].pk}).status_code == 401


def test_too_large_is_refused_before_reading(world, cpu_bundle, stored_files, settings):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    settings.EVIDENCE_MAX_BYTES = len(raw) - 1
    response = post(raw, world["token"])
    assert response.status_code == 413
    assert "EVIDENCE_MAX_BYTES" in response.json()["detail"]
    assert_nothing_stored(stored_files)


def test_body_longer_than_declared_length_is_capped(world, rf, cpu_bundle, stored_files, settings):
    """A lying Content-Length still cannot make the server read past the limit."""
    from apps.evidence.api import EvidenceUploadView

    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    settings.EVIDENCE_MAX_BYTES = 1000
    request = rf.post(URL, data=raw, content_type="application/json")
    request.META["CONTENT_LENGTH"] = "10"
    request.META["HTTP_AUTHORIZATION"] = f"Token {world['token']}"
    response = EvidenceUploadView.as_view()(request)
    assert response.status_code in (400, 413)
    assert_nothing_stored(stored_files)


def _mutations(document):
    artifact = document["artifacts"][0]
    edited_xml = artifact["content"].replace("NVIDIA GeForce RTX 4090", "NVIDIA H200")
    return {
        "not_the_schema": (
            {"steps": {**document["steps"], "loadtest": {"status": "ok"}}},
            "steps/loadtest",
        ),
        "missing_field": ({"host_id": "not-a-digest"}, "host_id"),
        "unknown_format_version": ({"format_version": "diligence-evidence/9"}, "format_version"),
        "artifact_edited": (
            {"artifacts": [{**artifact, "content": edited_xml}, *document["artifacts"][1:]]},
            "artifacts/0/sha256",
        ),
        "bad_base64": (
            {
                "artifacts": [
                    {**artifact, "encoding": "base64", "content": "!!"},
                    *document["artifacts"][1:],
                ]
            },
            "artifacts",
        ),
    }


@pytest.mark.parametrize(
    "case", ["not_the_schema", "missing_field", "unknown_format_version", "artifact_edited"]
)
def test_malformed_bundles_are_refused_naming_the_field(world, cpu_bundle, stored_files, case):
    changes, field = _mutations(cpu_bundle)[case]
    raw = serialise(bundle_for(cpu_bundle, world["record"], **changes))
    response = post(raw, world["token"])
    assert response.status_code == 400, response.json()
    assert response.json()["field"] == field
    assert field.split("/")[0] in response.json()["detail"] or case == "artifact_edited"
    assert_nothing_stored(stored_files)


def test_unknown_format_version_says_so(world, cpu_bundle, stored_files):
    raw = serialise(bundle_for(cpu_bundle, world["record"], format_version="diligence-evidence/9"))
    detail = post(raw, world["token"]).json()["detail"]
    assert "Unknown format_version" in detail and "diligence-evidence/1" in detail


def test_raw_data_edited_after_writing_fails_the_digest(world, cpu_bundle, stored_files):
    """The harness sends X-Bundle-Sha256 of the bytes it wrote; an edited body no longer matches."""
    original = serialise(bundle_for(cpu_bundle, world["record"]))
    document = bundle_for(cpu_bundle, world["record"])
    request = document["steps"]["loadtest"]["result"]["cells"][0]["requests"][0]
    request["t_first_ns"] -= 5_000_000  # a faster first token than was measured
    response = post(
        serialise(document),
        world["token"],
        HTTP_X_BUNDLE_SHA256=hashlib.sha256(original).hexdigest(),
    )
    assert response.status_code == 400
    assert response.json()["field"] == "X-Bundle-Sha256"
    assert_nothing_stored(stored_files)


def test_artifact_content_edited_fails_its_digest(world, cpu_bundle, stored_files):
    changes, _field = _mutations(cpu_bundle)["artifact_edited"]
    response = post(serialise(bundle_for(cpu_bundle, world["record"], **changes)), world["token"])
    assert response.status_code == 400
    assert "does not match its digest" in response.json()["detail"]
    assert_nothing_stored(stored_files)


def test_nonce_not_issued_for_this_token(world, cpu_bundle, stored_files, tariq):
    other = make_token(tariq, world["case"])
    for nonce in (other.record.nonce, None, "made-up"):
        raw = serialise({**bundle_for(cpu_bundle, world["record"]), "nonce": nonce})
        response = post(raw, world["token"])
        assert response.status_code == 400
        assert response.json()["field"] == "nonce"
    assert_nothing_stored(stored_files)


def test_edited_client_summaries_are_flagged(world, cpu_bundle):
    document = bundle_for(cpu_bundle, world["record"])
    cell = document["steps"]["loadtest"]["result"]["cells"][0]
    cell["summary"]["ttft_ms"]["p50"] /= 2  # a prettier number than the raw events give
    cell["summary"]["output_tok_s"] *= 3
    response = post(serialise(document), world["token"])
    assert response.status_code == 201
    flagged = {d["metric"] for d in EvidenceBundle.objects.get().client_summary_disagreements}
    assert {"ttft_ms.p50", "output_tok_s"} <= flagged


def test_an_honest_bundle_has_no_disagreements(world, cpu_bundle):
    post(serialise(bundle_for(cpu_bundle, world["record"])), world["token"])
    assert EvidenceBundle.objects.get().client_summary_disagreements == []


def test_failure_after_saving_the_file_removes_it(world, cpu_bundle, stored_files, monkeypatch):
    from apps.evidence import services

    def broken(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(services, "headline", lambda *a: broken())
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    with pytest.raises(BundleRefused) as refused:
        services.bundle_receive(token=world["record"], raw=raw)
    assert refused.value.status == 500
    assert "could not verify this bundle (RuntimeError)" in refused.value.message
    assert_nothing_stored(stored_files)
    assert EvidenceUpload.objects.get().state == EvidenceUpload.State.FAILED

    # Through the API the harness is told to send it again (a 5xx it retries); once the
    # server reads it, the same bytes are stored and verified.
    response = post(raw, world["token"])
    assert response.status_code == 500 and "Send the same bundle again" in response.json()["detail"]
    monkeypatch.undo()
    assert post(raw, world["token"]).status_code == 201
    assert EvidenceBundle.objects.get().sha256 == hashlib.sha256(raw).hexdigest()
    assert [u.state for u in EvidenceUpload.objects.order_by("pk")] == [
        "failed",
        "failed",
        "verified",
    ]


def test_schema_is_published_from_the_harness_file(api_as, people):
    import json

    from apps.evidence.bundle import schema_path

    response = api_as("aude").get("/api/v1/evidence/schema/")
    assert response.status_code == 200
    assert response.json() == json.loads(schema_path().read_text())
    assert APIClient().get("/api/v1/evidence/schema/").status_code == 401


def test_base64_artifacts_are_checked_too(world, cpu_bundle, stored_files):
    document = bundle_for(cpu_bundle, world["record"])
    data = b"\x00binary tool output"
    entry = {
        "name": "blob.bin",
        "media_type": "application/octet-stream",
        "encoding": "base64",
        "size": len(data),
        "sha256": hashlib.sha256(data + b"x").hexdigest(),
        "content": base64.b64encode(data).decode(),
    }
    document["artifacts"].append(entry)
    document["manifest"]["artifacts"].append({k: entry[k] for k in ("name", "sha256", "size")})
    assert post(serialise(document), world["token"]).status_code == 400
    assert_nothing_stored(stored_files)
    assert HarnessToken.objects.get().last_used_at is None

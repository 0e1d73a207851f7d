"""POST /api/v1/evidence/ with every bad body: a 4xx that says why, and nothing stored."""

import json

import pytest
from rest_framework.test import APIClient

from apps.evidence.models import EvidenceUpload
from tests.badinput.corpus import JSON, Payload
from tests.badinput.refusal import CountingInput, api_reason, assert_refused, stored_state
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres

URL = "/api/v1/evidence/"


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    return make_token(tariq, case, offer)


@pytest.fixture
def valid(world, cpu_bundle) -> bytes:
    return serialise(bundle_for(cpu_bundle, world.record))


def evidence_snapshot(media_root) -> dict:
    """Everything stored, but for the refused uploads' receipts.

    A refused upload keeps its row (state "refused", the reason, its bytes
    removed): it is what the harness reads to learn why. Any other upload
    state, like any other row or file, is something stored.
    """
    state = stored_state(media_root)
    del state["rows"]["evidence.EvidenceUpload"]
    state["uploads not refused"] = EvidenceUpload.objects.exclude(state="refused").count()
    return state


def send_with(token: str):
    def send(payload: Payload, **extra):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        return client.post(URL, data=payload.body, content_type=payload.content_type, **extra)

    return send


@pytest.mark.parametrize("name", sorted(JSON))
def test_every_bad_json_body_is_refused(world, valid, media_root, name):
    payload = JSON[name](valid)
    assert_refused(
        payload,
        send=send_with(world.token),
        snapshot=lambda: evidence_snapshot(media_root),
        reason=api_reason,
    )


def _document_mutations(document: dict) -> dict:
    """Schema-valid bundles whose values do not fit what the server stores or reads."""
    harness = document["harness"]
    return {
        "huge_bundle_id": {"bundle_id": "b" * 100_000},
        "huge_harness_version": {"harness": {**harness, "version": "9" * 10_000}},
        "impossible_start_time": {"started_utc": "2026-13-45T25:61:00Z"},
        "impossible_finish_time": {"finished_utc": "2026-02-30T00:00:00Z"},
    }


MUTATIONS = sorted(_document_mutations({"harness": {}}))


@pytest.mark.parametrize("name", MUTATIONS)
def test_values_that_do_not_fit_are_refused(world, cpu_bundle, media_root, name):
    changes = _document_mutations(cpu_bundle)[name]
    raw = serialise(bundle_for(cpu_bundle, world.record, **changes))
    stated = assert_refused(
        Payload(name, raw, "application/json"),
        send=send_with(world.token),
        snapshot=lambda: evidence_snapshot(media_root),
        reason=api_reason,
    )
    assert "bundle" in stated.lower() or "time" in stated.lower()


def test_duplicate_keys_are_refused_even_when_the_last_value_is_right(
    world, cpu_bundle, media_root
):
    """Parsers disagree on which duplicate wins: the nonce the server reads must be unambiguous."""
    good = serialise(bundle_for(cpu_bundle, world.record))
    ambiguous = b'{"nonce":"someone-elses",' + good[1:]
    stated = assert_refused(
        Payload("duplicate_nonce", ambiguous, "application/json"),
        send=send_with(world.token),
        snapshot=lambda: evidence_snapshot(media_root),
        reason=api_reason,
    )
    assert "nonce" in stated and "twice" in stated


@pytest.mark.parametrize("name", ["nan", "infinity", "huge_integer", "deep_arrays"])
def test_the_refusal_names_the_problem(world, valid, media_root, name):
    words = {
        "nan": "NaN",
        "infinity": "Infinity",
        "huge_integer": "digits",
        "deep_arrays": "nested",
    }
    stated = assert_refused(
        JSON[name](valid),
        send=send_with(world.token),
        snapshot=lambda: evidence_snapshot(media_root),
        reason=api_reason,
    )
    assert words[name] in stated


def test_the_valid_bundle_is_still_accepted(world, valid):
    """The corpus's base is a good bundle: the refusals above are about the damage alone."""
    response = send_with(world.token)(Payload("valid", valid, "application/json"))
    assert response.status_code == 201, response.json()


# --- size, before the body is read ------------------------------------------------------------


def _post_counting(token: str, body: bytes, content_length):
    stream = CountingInput(body)
    extra = {
        "wsgi.input": stream,
        "HTTP_AUTHORIZATION": f"Token {token}",
        "CONTENT_TYPE": "application/json",
    }
    if content_length is not None:
        extra["CONTENT_LENGTH"] = content_length
    client = APIClient()
    response = client.generic("POST", URL, b"", content_type="application/json", **extra)
    return response, stream


def _without_length(token: str, body: bytes):
    """A request with no Content-Length at all (the test client always sets one)."""
    from django.test.client import RequestFactory

    from apps.evidence.api import EvidenceUploadView

    stream = CountingInput(body)
    request = RequestFactory().generic(
        "POST", URL, b"", content_type="application/json", **{"wsgi.input": stream}
    )
    request.META.pop("CONTENT_LENGTH", None)
    request.META["HTTP_AUTHORIZATION"] = f"Token {token}"
    from django.core.handlers.wsgi import LimitedStream

    request._stream = LimitedStream(stream, 0)  # what WSGIRequest makes of a missing length
    return EvidenceUploadView.as_view()(request), stream


def test_a_declared_oversize_body_is_refused_unread(world, media_root, settings):
    settings.EVIDENCE_MAX_BYTES = 1000
    before = evidence_snapshot(media_root)
    response, stream = _post_counting(world.token, b"{" * 5000, "5000")
    assert response.status_code == 413 and "EVIDENCE_MAX_BYTES" in response.json()["detail"]
    assert stream.bytes_read == 0
    assert evidence_snapshot(media_root) == before


@pytest.mark.parametrize("declared", ["999999999999999999999", "-1", "abc", "1e9", " "])
def test_a_lying_content_length_never_reads_past_the_limit(world, media_root, settings, declared):
    settings.EVIDENCE_MAX_BYTES = 1000
    before = evidence_snapshot(media_root)
    response, stream = _post_counting(world.token, b"[" * 50_000, declared)
    assert 400 <= response.status_code < 500
    assert response.json()["detail"]
    assert stream.bytes_read <= settings.EVIDENCE_MAX_BYTES + 1
    assert evidence_snapshot(media_root) == before


def test_a_body_longer_than_its_declared_length_is_cut_at_the_declared_length(
    world, valid, media_root
):
    before = evidence_snapshot(media_root)
    response, stream = _post_counting(world.token, valid + b" " * 100_000, str(len(valid) // 2))
    assert response.status_code == 400 and "not a UTF-8 JSON document" in response.json()["detail"]
    assert stream.bytes_read == len(valid) // 2
    assert evidence_snapshot(media_root) == before


def test_a_body_without_content_length_is_not_read(world, valid, media_root):
    before = evidence_snapshot(media_root)
    response, stream = _without_length(world.token, valid)
    assert response.status_code == 400 and response.data["detail"] == "The body is empty."
    assert stream.bytes_read == 0
    assert evidence_snapshot(media_root) == before


def test_the_json_corpus_is_what_it_claims(valid):
    """Guards the generator: each payload really is broken in the way its name says."""
    assert JSON["truncated_half"](valid).body == valid[: len(valid) // 2]
    assert JSON["utf16_with_bom"](valid).body.startswith(b"\xff\xfe")
    assert b"NaN" in JSON["nan"](valid).body
    top_level_keys = json.loads(JSON["duplicate_keys"](valid).body, object_pairs_hook=list)
    assert len(top_level_keys) == len(json.loads(valid)) + 1


@pytest.mark.parametrize(
    "text,refused",
    [
        ('{"n": %s}' % ("9" * 40), None),
        ('{"n": -%s}' % ("9" * 40), None),
        ('{"n": 1%s}' % ("0" * 40), "has 41 digits"),
        ('{"n": [[-1%s]]}' % ("0" * 99), "has 100 digits"),
        ('{"n": %s}' % ("7" * 5000), "has 5000 digits"),  # past Python's own bound
        ('{"a": {"\\u0000": 1}}', "NUL character"),
        ('{"a": ["ok", "\\ud800"]}', "unpaired surrogate"),
        ('{"a": true, "b": 1.5, "c": null}', None),
    ],
)
def test_the_reader_bounds_integers_and_text_wherever_they_sit(text, refused):
    from apps.evidence.bundle import BundleRefused, decode

    if refused is None:
        assert isinstance(decode(text.encode()), dict)
        return
    with pytest.raises(BundleRefused) as error:
        decode(text.encode())
    assert refused in error.value.message


@pytest.mark.parametrize("depth,refused", [(64, False), (65, True)])
def test_the_reader_counts_depth_to_the_innermost_value(depth, refused):
    from apps.evidence.bundle import BundleRefused, decode

    text = '{"a":' + "[" * (depth - 2) + "1" + "]" * (depth - 2) + "}"  # 1 sits at `depth`
    if not refused:
        decode(text.encode())
        return
    with pytest.raises(BundleRefused, match="nested more than 64 levels"):
        decode(text.encode())

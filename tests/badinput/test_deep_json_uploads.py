"""JSON nested far deeper than any record, wherever it rides: as the body, inside a line of an
uploaded set, inside a string a line holds, in a multipart field. Always a 400 (or the
set's refusal) that says so, never a 500, and nothing stored."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework import parsers
from rest_framework.test import APIClient

from apps.core.parsers import JSONParser
from apps.workloads.models import WorkloadSet
from tests.badinput.corpus import Payload
from tests.badinput.refusal import api_reason, assert_refused, stored_state
from tests.evidence.factories import make_token
from tests.factories import make_case, make_offer

DEEP = 100_000
MAX_EXPECTED_JSON_DEPTH = 64  # apps/workloads/rules.py
DEEP_ARRAYS = b"[" * DEEP + b"]" * DEEP
DEEP_OBJECTS = b'{"a":' * DEEP + b"1" + b"}" * DEEP


@pytest.fixture
def case(tariq):
    return make_case(tariq)


def _sample(expected: str) -> bytes:
    line = {"id": "deep", "input": "Say it as JSON", "expected": expected}
    return json.dumps(line | {"comparison": {"kind": "json"}}).encode() + b"\n"


def _set_url(case, kind="samples") -> str:
    return f"/api/v1/cases/{case.pk}/workload-sets/?kind={kind}&name=deep"


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    "expected", [_nested(DEEP), '{"a":' * DEEP + "1" + "}" * DEEP, _nested(900)]
)
def test_a_sample_whose_expected_json_nests_too_deep_is_refused_by_the_api(
    api_as, case, media_root, expected
):
    api = api_as("tariq")
    stated = assert_refused(
        Payload("deep expected", _sample(expected), "application/x-ndjson"),
        send=lambda p: api.post(_set_url(case), data=p.body, content_type=p.content_type),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )
    assert "refused" in stated
    reasons = api.post(_set_url(case), data=_sample(expected), content_type="text/plain").json()
    assert reasons["refusals"] == [
        {"line": 1, "reason": "'expected' is JSON nested more than 64 levels deep"}
    ]


def test_the_same_sample_is_refused_on_the_page(browser_as, case):
    response = browser_as("tariq").post(
        reverse("workloads:set_upload", args=[case.pk]),
        {
            "kind": "samples",
            "name": "deep",
            "file": SimpleUploadedFile("s.jsonl", _sample(_nested(DEEP))),
        },
    )
    assert response.status_code == 200
    assert "nested more than 64 levels deep" in response.content.decode()
    assert not WorkloadSet.objects.exists()


def test_expected_json_up_to_the_bound_is_taken(api_as, case):
    """The document is level 1: 64 arrays are at the bound, 65 one too many
    (docs/rules/evidence.md#workload-sets)."""
    api = api_as("tariq")
    past = api.post(
        _set_url(case), data=_sample(_nested(MAX_EXPECTED_JSON_DEPTH + 1)), content_type="x/y"
    )
    assert past.status_code == 400
    at_bound = api.post(
        _set_url(case), data=_sample(_nested(MAX_EXPECTED_JSON_DEPTH)), content_type="x/y"
    )
    assert at_bound.status_code == 201, at_bound.content
    assert WorkloadSet.objects.get().item_count == 1


@pytest.mark.parametrize("body", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
@pytest.mark.parametrize("kind", ["prompts", "samples"])
@pytest.mark.parametrize("content_type", ["application/x-ndjson", "application/json"])
def test_a_set_whose_line_nests_too_deep_is_refused(api_as, case, kind, body, content_type):
    response = api_as("tariq").post(_set_url(case, kind), data=body, content_type=content_type)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["refusals"] == [{"line": 1, "reason": "the JSON is nested too deeply"}]


@pytest.mark.parametrize("body", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
def test_the_harness_set_fetch_never_reads_a_body(tariq, case, body):
    token = make_token(tariq, case, None)
    harness = APIClient()
    harness.credentials(HTTP_AUTHORIZATION=f"Token {token.token}")
    url = "/api/v1/harness/sets/?kind=prompts"
    fetched = harness.generic("GET", url, data=body, content_type="application/json")
    assert fetched.status_code == 404
    posted = harness.post(url, data=body, content_type="application/json")
    assert posted.status_code in (400, 405), posted.content[:300]


@pytest.mark.parametrize("body", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
def test_an_evidence_bundle_nested_too_deep_is_refused_however_it_is_sent(tariq, case, body):
    offer = make_offer(tariq, case)
    token = make_token(tariq, case, offer)
    harness = APIClient()
    harness.credentials(HTTP_AUTHORIZATION=f"Token {token.token}")
    as_body = harness.post("/api/v1/evidence/", data=body, content_type="application/json")
    assert as_body.status_code == 400
    assert as_body.json()["detail"] == "The bundle is nested more than 64 levels deep."
    as_file = harness.post(
        "/api/v1/evidence/",
        {"bundle": SimpleUploadedFile("bundle.json", body)},
        format="multipart",
    )
    assert as_file.status_code == 400
    assert "not a UTF-8 JSON document" in as_file.json()["detail"]


@pytest.mark.parametrize(
    "url",
    ["/api/v1/red-flag-waivers/", "/api/v1/cases/{case}/findings/accept/"],
    ids=["red-flag waiver", "finding acceptance"],
)
@pytest.mark.parametrize("body", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
def test_endpoints_that_also_take_files_bound_their_json_too(api_as, case, url, body):
    response = api_as("lena").post(
        url.format(case=case.pk), data=body, content_type="application/json"
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json()["detail"] == "JSON parse error - nested more than 64 levels deep."


def _api_views():
    from django.urls import get_resolver

    def walk(patterns):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                yield from walk(pattern.url_patterns)
            elif getattr(pattern.callback, "cls", None) is not None:
                yield pattern.callback.cls

    return sorted(set(walk(get_resolver().url_patterns)), key=lambda view: view.__qualname__)


def test_every_api_view_reads_json_through_the_bounded_parser():
    """DRF's own parser turns a deep body into a RecursionError (a 500)."""
    unbounded = [
        f"{view.__module__}.{view.__qualname__}"
        for view in _api_views()
        for parser in view.parser_classes
        if issubclass(parser, parsers.JSONParser) and not issubclass(parser, JSONParser)
    ]
    assert not unbounded

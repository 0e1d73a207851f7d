"""Every JSON API body goes through one parser: broken JSON is a 4xx, never a 500.

Shown on creating a case (POST /api/v1/cases/); the parser is the API's default, so the
same holds for every endpoint that reads a JSON body.
"""

import json

import pytest

from apps.cases.models import ProcurementCase
from tests.badinput.corpus import JSON, Payload
from tests.badinput.refusal import CountingInput, api_reason, assert_refused, stored_state

pytestmark = pytest.mark.postgres

URL = "/api/v1/cases/"
VALID = json.dumps({"name": "Inference cluster", "workload": "inference"}).encode()

# Well-formed JSON whose oddity sits in a member the endpoint does not know: an API that
# ignores unknown members may accept these (the evidence upload, which keeps the raw
# bytes, refuses them). They must never be a 500.
IGNORED_MEMBERS = {
    "duplicate_keys",
    "lone_surrogate_escape",
    "nul_escape",
    "overflowing_float",
    "moderately_deep_inside_valid",
}


@pytest.fixture
def api(api_as):
    return api_as("priya")


def send_with(api):
    return lambda payload: api.post(URL, data=payload.body, content_type=payload.content_type)


@pytest.mark.parametrize("name", sorted(set(JSON) - IGNORED_MEMBERS))
def test_every_bad_json_body_is_a_4xx_and_stores_nothing(api, media_root, name):
    assert_refused(
        JSON[name](VALID),
        send=send_with(api),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )


@pytest.mark.parametrize("name", sorted(IGNORED_MEMBERS))
def test_oddities_in_unknown_members_are_never_a_500(api, name):
    response = send_with(api)(JSON[name](VALID))
    assert response.status_code in (201, 400), response.content[:300]


@pytest.mark.parametrize("name", ["deep_arrays", "deep_objects", "moderately_deep_inside_valid"])
def test_deep_nesting_is_a_parse_error(api, name):
    response = send_with(api)(JSON[name](VALID))
    assert response.status_code == 400
    assert response.json()["detail"] == "JSON parse error - nested more than 64 levels deep."
    assert not ProcurementCase.objects.exists()


def test_nesting_up_to_the_bound_is_read(api):
    """The document is level 1: 63 arrays inside it are 64 levels, 64 are one too many."""
    at_bound = {"name": "Nested", "workload": "inference", "zz": json.loads("[" * 63 + "]" * 63)}
    response = api.post(URL, at_bound, format="json")
    assert response.status_code == 201, response.content
    past_bound = {**at_bound, "zz": json.loads("[" * 64 + "]" * 64)}
    response = api.post(URL, past_bound, format="json")
    assert response.status_code == 400


def test_an_integer_of_more_than_40_digits_is_a_parse_error(api):
    body = b'{"name": "Big", "workload": "inference", "zz": ' + b"9" * 41 + b"}"
    response = api.post(URL, data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "JSON parse error - an integer has 41 digits; at most 40 are read."
    )
    body = b'{"name": "Big", "workload": "inference", "zz": -' + b"9" * 40 + b"}"
    assert api.post(URL, data=body, content_type="application/json").status_code == 201


def test_a_declared_oversize_body_is_refused_unread(api, media_root, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    before = stored_state(media_root)
    stream = CountingInput(b" " * 5000)
    response = api.generic(
        "POST",
        URL,
        b"",
        content_type="application/json",
        **{"wsgi.input": stream, "CONTENT_LENGTH": "5000", "CONTENT_TYPE": "application/json"},
    )
    assert response.status_code == 413
    assert api_reason(response) == (
        "The body is larger than the 1000-byte limit (DATA_UPLOAD_MAX_MEMORY_SIZE)."
    )
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


def test_the_valid_body_is_still_accepted(api):
    response = send_with(api)(Payload("valid", VALID, "application/json"))
    assert response.status_code == 201, response.content
    assert ProcurementCase.objects.get().name == "Inference cluster"


def test_a_multipart_body_is_refused_unread_where_no_upload_is_expected(api, media_root):
    """Only endpoints that take a file parse multipart; elsewhere it is a 415, read or not."""
    before = stored_state(media_root)
    stream = CountingInput(b"--b\r\n" + b"x" * 5000)
    response = api.generic(
        "POST",
        URL,
        b"",
        content_type="multipart/form-data; boundary=b",
        **{"wsgi.input": stream, "CONTENT_LENGTH": str(10 * 1024**3)},
    )
    assert response.status_code == 415
    assert "multipart/form-data" in api_reason(response)
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before

"""Property-based fuzzing of the whole REST API from its own OpenAPI schema.

For each operation schemathesis generates requests; each is sent as every
role in turn. Whatever the input and whoever asks, the API must never answer
5xx, and every documented response must match its schema.
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ("priya", "lena", "tariq", "aude", "ada")
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


@pytest.fixture
def _connection_kept_across_requests():
    """The WSGI application closes the connection after each request; the test's
    transaction lives on it, so keep it open, as Django's own test client does."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(db, people, monkeypatch, _connection_kept_across_requests):
    from django.core.wsgi import get_wsgi_application
    from rest_framework.throttling import SimpleRateThrottle

    # Thousands of requests in a few seconds: rate limits would answer 429.
    monkeypatch.setattr(SimpleRateThrottle, "allow_request", lambda self, request, view: True)
    case = make_case(people["priya"])
    make_offer(people["priya"], case, spec=FULL_SPEC)
    headers = {}
    for role in ROLES:
        token, _ = Token.objects.get_or_create(user=people[role])
        headers[role] = {"Authorization": f"Token {token.key}"}
    schema = schemathesis.openapi.from_wsgi(
        "/api/schema/", get_wsgi_application(), headers=headers["aude"]
    )
    schema.role_headers = headers
    return schema


FUZZ_SETTINGS = settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


# The operations are cut into shards (every n-th operation), so that test processes
# share them; every operation is in exactly one shard.
SHARDS = 4


@pytest.mark.whole_case
@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_server_errors_and_responses_match_the_schema(api_schema, shard):
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) > 20
    for operation in operations[shard::SHARDS]:

        @FUZZ_SETTINGS
        @given(case=operation.as_strategy())
        def every_role_gets_a_sound_answer(case):
            for role in ROLES:
                case.call_and_validate(headers=api_schema.role_headers[role], checks=CHECKS)

        every_role_gets_a_sound_answer()

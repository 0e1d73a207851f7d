"""Refused uploads are bounded records: a token holder cannot bloat the pages listing them.

The offending value a refusal quotes is cut to a few hundred characters, the whole
reason to REFUSAL_CHARS; the case's evidence page lists refused and failed uploads
a page at a time.
"""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from apps.evidence.bundle import (
    FIELD_CHARS,
    QUOTED_CHARS,
    REFUSAL_CHARS,
    BundleRefused,
    check_schema,
    decode,
    quoted,
)
from apps.evidence.models import EvidenceUpload
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

LONG = 100_000  # characters of the offending value


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def upload(raw: bytes, token: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client.post("/api/v1/evidence/", data=raw, content_type="application/json")


# --- the reason's bounds, as units --------------------------------------------


def test_a_quoted_value_is_cut_with_an_ellipsis():
    assert quoted("short") == "'short'"
    long = quoted("x" * LONG)
    assert len(long) == QUOTED_CHARS and long.startswith("'xxx") and long.endswith("…")


def test_every_refusal_bounds_its_message_and_field():
    refusal = BundleRefused("m" * LONG, field="f" * LONG)
    assert len(refusal.message) == REFUSAL_CHARS and refusal.message.endswith("…")
    assert len(refusal.field) == FIELD_CHARS
    assert BundleRefused("short", field="host_id").message == "short"


def test_a_schema_refusal_quotes_the_long_value_cut_and_still_says_what_is_wrong(cpu_bundle):
    document = {**cpu_bundle, "host_id": "h" * LONG}
    with pytest.raises(BundleRefused) as refused:
        check_schema(document)
    message = refused.value.message
    assert len(message) <= QUOTED_CHARS + 200
    assert "at host_id:" in message and message.endswith(
        '…" does not match "^sha256:[0-9a-f]{64}$"'
    )


def test_a_long_duplicated_key_is_quoted_cut():
    key = "k" * LONG
    with pytest.raises(BundleRefused) as refused:
        decode(f'{{"{key}": 1, "{key}": 2}}'.encode())
    assert len(refused.value.message) < QUOTED_CHARS + 200
    assert "appears twice" in refused.value.message
    assert len(refused.value.field) == FIELD_CHARS


# --- through the upload endpoint ----------------------------------------------


@pytest.mark.parametrize(
    "field,value,names",
    [
        ("host_id", "h" * LONG, "host_id"),
        ("format_version", "v" * LONG, "format_version"),
        ("bundle_id", "b" * LONG, "bundle_uuid"),  # fits the schema, not the stored record
    ],
)
def test_a_refused_upload_with_a_100_kb_value_stores_a_bounded_reason_naming_the_field(
    world, cpu_bundle, field, value, names
):
    raw = serialise(bundle_for(cpu_bundle, world["record"], **{field: value}))
    response = upload(raw, world["token"])
    assert response.status_code == 400, response.content
    assert len(response.content) < REFUSAL_CHARS + FIELD_CHARS + 200
    stored = EvidenceUpload.objects.get()
    assert stored.state == EvidenceUpload.State.REFUSED
    assert len(stored.refusal) <= REFUSAL_CHARS
    assert value[: QUOTED_CHARS + 1] not in stored.refusal  # quoted a few hundred at most
    assert names in stored.refusal and stored.refusal_field == names
    assert response.json()["field"] == names


# --- the evidence page lists refused uploads a page at a time -------------------


def refused_uploads(world, count: int) -> None:
    start = timezone.now() - timedelta(hours=1)
    for n in range(count):
        EvidenceUpload.objects.create(
            token=world["record"],
            case=world["case"],
            sha256=f"{n:064x}",
            size=100,
            storage_name="",
            state=EvidenceUpload.State.REFUSED,
            received_at=start + timedelta(seconds=n),
            finished_at=start + timedelta(seconds=n),
            refusal=f"Refusal number {n:02d}.",
            refusal_field="host_id",
            refusal_status=400,
        )


def shown(text: str) -> list[int]:
    return [n for n in range(100) if f"Refusal number {n:02d}." in text]


def test_the_evidence_page_shows_twenty_refused_uploads_and_links_the_next_page(browser_as, world):
    refused_uploads(world, 45)
    client = browser_as("tariq")
    url = reverse("evidence:case", args=[world["case"].pk])
    first = client.get(url).content.decode()
    assert shown(first) == list(range(25, 45))  # the newest twenty
    assert 'href="?page=2"' in first and "Page 1 of 3" in first
    second = client.get(url, {"page": 2}).content.decode()
    assert shown(second) == list(range(5, 25))
    assert 'href="?page=3"' in second and 'href="?page=1"' in second
    third = client.get(url, {"page": 3}).content.decode()
    assert shown(third) == list(range(5))
    assert "?page=4" not in third and "Page 3 of 3" in third


def test_the_evidence_page_without_refused_uploads_has_no_such_section(browser_as, world):
    text = browser_as("tariq").get(reverse("evidence:case", args=[world["case"].pk])).content
    assert b"Uploads not stored as evidence" not in text


def test_the_evidence_page_query_count_does_not_grow_with_refused_uploads(
    browser_as, world, django_assert_max_num_queries
):
    client = browser_as("tariq")
    url = reverse("evidence:case", args=[world["case"].pk])
    refused_uploads(world, 1)
    with CaptureQueriesContext(connection) as one:
        assert client.get(url).status_code == 200
    EvidenceUpload.objects.all().delete()
    refused_uploads(world, 45)
    for page in (1, 3):
        with django_assert_max_num_queries(len(one)):
            response = client.get(url, {"page": page})
        assert response.status_code == 200
    assert len(one) <= 20


def test_a_long_refusal_stays_bounded_on_the_page(browser_as, world):
    refused_uploads(world, 1)
    upload_row = EvidenceUpload.objects.get()
    upload_row.refusal = BundleRefused("r" * LONG).message
    upload_row.save(update_fields=["refusal"])
    text = browser_as("tariq").get(reverse("evidence:case", args=[world["case"].pk])).content
    assert b"r" * (REFUSAL_CHARS - 1) in text and b"r" * REFUSAL_CHARS not in text


def test_json_of_the_refused_upload_status_is_bounded(world, cpu_bundle, tariq, api_as):
    raw = serialise(bundle_for(cpu_bundle, world["record"], host_id="h" * LONG))
    upload(raw, world["token"])
    status = api_as("tariq").get(f"/api/v1/evidence/uploads/{EvidenceUpload.objects.get().pk}/")
    assert status.status_code == 200
    assert len(json.dumps(status.json())) < REFUSAL_CHARS + FIELD_CHARS + 500

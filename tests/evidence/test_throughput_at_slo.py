"""Throughput at the SLO through the public surface: a rate-search bundle uploaded to
POST /api/v1/evidence/, its checks read back from the API, the claims page and the evidence
page; and a bundle whose client summary claims more than its raw requests give fails on
the server."""

import copy
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from rest_framework.test import APIClient

from apps.acceptance.selectors import AcceptanceState
from apps.evidence.models import EvidenceBundle
from apps.evidence.rules import throughput
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.evidence.ratesearch_bundles import ratesearch_document
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.django_db

URL = "/api/v1/evidence/"


@pytest.fixture
def world(tariq):
    case = make_case(tariq)  # P95 TTFT 1.5 s, error rate 0.5 %
    spec = FULL_SPEC | {
        "throughput_requests_per_s": Decimal("15"),
        "throughput_tokens_per_s": Decimal("300"),
    }
    offer = make_offer(tariq, case, spec=spec)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def upload(world, document) -> EvidenceBundle:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['token']}")
    raw = serialise(bundle_for(document, world["record"]))
    response = client.post(URL, data=raw, content_type="application/json")
    assert response.status_code == 201, response.json()
    return EvidenceBundle.objects.get(pk=response.json()["id"])


def test_a_rate_search_verifies_the_declared_throughput(world, api_as, browser_as):
    bundle = upload(world, ratesearch_document())
    assert bundle.client_summary_disagreements == []

    found = api_as("tariq").get("/api/v1/spec-verifications/", {"offer": world["offer"].pk})
    [verification] = found.json()["results"]
    checks = {c["key"]: c for c in verification["checks"]}
    assert checks[throughput.RATE_KEY]["status"] == "pass"
    requests, tokens = checks[throughput.REQUESTS_KEY], checks[throughput.TOKENS_KEY]
    assert (requests["status"], tokens["status"]) == ("pass", "fail")  # 17.4/s, 139 tokens/s
    assert requests["measured"] == "17.36 requests/s at 20.00 req/s offered"
    assert requests["bundle"] == bundle.pk
    assert verification["sources"]["ratesearch"]["bundle"] == bundle.pk
    goodput = verification["headline"]["goodput_at_slo"]
    assert goodput["rate_rps"] == pytest.approx(20.0) and goodput["limit_found"] is True

    claims = browser_as("ada").get(reverse("portal:claims", args=[world["offer"].pk]))
    assert claims.status_code == 200
    text = claims.content.decode()
    assert "17.36 requests/s at 20.00 req/s offered" in text
    assert "138.85 output tokens/s at 20.00 req/s offered" in text

    page = browser_as("tariq").get(reverse("evidence:detail", args=[bundle.pk]))
    body = page.content.decode()
    assert 'id="rate-search"' in body and 'id="rate-step-3"' in body
    assert f'id="check-{throughput.REQUESTS_KEY}"' in body

    # The acceptance report prints the throughput at the SLO beside the ladder.
    state = AcceptanceState(
        plan=SimpleNamespace(case=world["case"]),
        layers=(),
        overall="",
        measurements=SimpleNamespace(verification=bundle.verification, performance=None),
        results=[],
        approval=None,
        signoff=None,
    )
    report = render_to_string("acceptance/ladder.html", {"state": state})
    assert "20.00 requests/s offered, goodput 17.36 requests/s and 138.9 output tokens/s" in report


def test_a_client_summary_claiming_a_higher_rate_fails_on_the_server(world):
    document = ratesearch_document()
    result = document["steps"]["ratesearch"]["result"]
    spoofed = copy.deepcopy(result["steps"][2]["summary"])  # the 40/s step, TTFT 3 s
    spoofed["ttft_ms"]["p95"] = 1200.0
    spoofed["goodput_req_s"], spoofed["goodput_tok_s"] = 38.0, 304.0
    result["steps"][2].update(summary=spoofed, meets_slo=True)
    result["best"] = {
        "index": 3,
        "target_rps": 40.0,
        "offered_rps": 40.0,
        "goodput_req_s": 38.0,
        "goodput_tok_s": 304.0,
    }
    bundle = upload(world, document)
    flagged = {(d["where"], d["metric"]) for d in bundle.client_summary_disagreements}
    assert {
        ("ratesearch/step3", "ttft_ms.p95"),
        ("ratesearch/step3", "goodput_req_s"),
        ("ratesearch/best", "goodput_req_s"),
    } <= flagged
    checks = {c["key"]: c for c in bundle.verification.checks}
    # The server's own reading: the 40/s step misses the SLO, 20/s is the highest that holds.
    assert checks[throughput.RATE_KEY]["measured"].startswith("20.00 req/s offered")
    assert checks[throughput.TOKENS_KEY]["status"] == "fail"  # 139, not the 304 claimed

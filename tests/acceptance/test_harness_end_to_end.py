"""Issue 9, end to end: the harness's own soak and correctness runs against its mock, with
an injected outage, a restart and a wrong answer, uploaded as evidence for an approved
offer — and the case's acceptance shows each failure with its reason. The correctness
reference is one a tech lead vouched for: the baseline's own run against it is pinned
as the case's baseline first (docs/rules/evidence.md#expected-answers)."""

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence.services import harness_token_create
from tests.acceptance.factories import approved_offer, make_plan
from tests.evidence.factories import bundle_for, serialise
from tests.evidence.test_soak_correctness import acceptance_bundles  # noqa: F401 (fixture)

pytestmark = pytest.mark.whole_case


def _upload(token, document) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.token}")
    raw = serialise(bundle_for(document, token.record))
    response = client.post("/api/v1/evidence/", data=raw, content_type="application/json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def test_injected_downtime_and_a_wrong_answer_fail_the_acceptance_with_reasons(
    people,
    tariq,
    api_as,
    browser_as,
    acceptance_bundles,  # noqa: F811
):
    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    # The team's own baseline, run against the reference and pinned as the case's baseline.
    own = harness_token_create(actor=tariq, case=case)
    baseline = _upload(own, acceptance_bundles["baseline_correctness"])
    pinned = api_as("tariq").post(
        "/api/v1/baselines/",
        {"bundle": baseline, "reason": "Our own hardware, same model and weights"},
        format="json",
    )
    assert pinned.status_code == 201, pinned.json()
    token = harness_token_create(actor=tariq, case=case, offer=offer)
    _upload(token, acceptance_bundles["soak"])
    _upload(token, acceptance_bundles["correctness"])

    state = api_as("aude").get(f"/api/v1/acceptance-plans/{plan.pk}/state/").json()
    layers = {layer["layer"]: layer for layer in state["layers"]}
    assert state["overall"] == "failed"

    connectivity = layers["connectivity"]
    assert connectivity["status"] == "failed"
    soak_reason = next(r for r in connectivity["reasons"] if r.startswith("Restart-free soak"))
    restarts, outages = map(
        int, re.search(r"\((\d+) restarts, (\d+) outages\)", soak_reason).groups()
    )
    assert restarts >= 1 and outages >= 1, soak_reason
    assert any(r.startswith("Health checks") for r in connectivity["reasons"])

    correctness = layers["correctness"]
    assert correctness["status"] == "failed"
    [core] = [r for r in correctness["reasons"] if r.startswith("Core set against the reference")]
    assert "8 of 9" in core and "arith-mul" in core, core

    page = browser_as("tariq").get(reverse("acceptance:plan", args=[plan.pk])).content.decode()
    assert "arith-mul" in page
    assert "Restart-free soak" in page
    case.refresh_from_db()
    assert case.status == case.Status.APPROVED  # not accepted

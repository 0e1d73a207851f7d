"""A pinned baseline, then a re-run after maintenance with an injected slowdown and one wrong
answer: the harness runs twice against its own mock (the second time slowed down and
answering one item wrongly), both bundles are uploaded, a tech lead pins the first as the
offer's baseline, and the second is reported as a regression against it — on the API, on
the evidence page with its chart, in the acceptance's fifth layer and in the packet's
acceptance chapter, in English and in Chinese."""

import re

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from rest_framework.test import APIClient

from apps.acceptance import packet, rules
from apps.acceptance.selectors import acceptance_state
from apps.evidence.services import harness_token_create
from tests.acceptance.factories import approved_offer, make_plan
from tests.evidence.conftest import run_harness
from tests.evidence.factories import bundle_for, serialise
from tests.evidence.test_soak_correctness import harness, mock_process

pytestmark = pytest.mark.whole_case

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
# One ladder level with enough requests for a P95 (130), one round, one prompt set.
LOAD = ("--ladder", "2", "--rounds", "1", "--min-requests-per-level", "130")


@pytest.fixture(scope="session")
def baseline_and_rerun(tmp_path_factory):
    """Two real runs: the baseline on a quick mock, the re-run on one 8× slower to the first
    token and 4× slower per token, answering arith-mul wrongly."""
    work = tmp_path_factory.mktemp("baseline")
    quick, quick_url = mock_process()
    slow, slow_url = mock_process("--ttft-ms", "16", "--itl-ms", "4", "--wrong-answer", "arith-mul")
    try:
        reference = work / "reference.json"
        done = harness(
            "correctness", "--endpoint", quick_url, "--model", "m",
            "--record-reference", str(reference),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs = {}
        for name, url in (("baseline", quick_url), ("rerun", slow_url)):
            out = work / f"{name}.json"
            done = run_harness(
                url, out, "--nonce", "placeholder", "--reference", str(reference), *LOAD
            )
            assert done.returncode == 0, done.stderr[-2000:]
            runs[name] = out.read_bytes()
    finally:
        for process in (quick, slow):
            process.terminate()
            process.wait(timeout=10)
    return runs


def _upload(token, raw: bytes) -> int:
    import json

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.token}")
    body = serialise(bundle_for(json.loads(raw), token.record))
    response = client.post("/api/v1/evidence/", data=body, content_type="application/json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_a_slowed_rerun_with_a_wrong_answer_regresses_against_the_pinned_baseline(
    people, tariq, api_as, browser_as, baseline_and_rerun
):
    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    token = harness_token_create(actor=tariq, case=case, offer=offer)
    first = _upload(token, baseline_and_rerun["baseline"])

    pinned = api_as("tariq").post(
        "/api/v1/baselines/",
        {"bundle": first, "offer": offer.pk, "reason": "First accepted run, before maintenance"},
        format="json",
    )
    assert pinned.status_code == 201, pinned.json()
    # With a baseline and no run after it, the fifth layer holds nothing back.
    layers = {layer.layer: layer for layer in acceptance_state(plan).layers}
    assert layers[rules.MAINTENANCE].status == rules.NOT_APPLICABLE

    second = _upload(token, baseline_and_rerun["rerun"])
    body = api_as("aude").get(f"/api/v1/evidence-bundles/{second}/comparison/").json()
    assert body["state"] == "compared" and body["regressed"] is True
    assert body["baseline"]["bundle"] == first
    assert body["tolerances"]["from_acceptance_plan"] is True
    metrics = {(m["metric"], m["where"]): m for m in body["metrics"]}

    throughput = metrics[("throughput", "2")]
    assert throughput["direction"] == "higher" and throughput["regression"] is True
    assert throughput["new"] < throughput["baseline"] * 0.9
    ttft = metrics[("ttft_p95", "2")]
    assert ttft["direction"] == "lower" and ttft["regression"] is True
    assert ttft["new"] > ttft["baseline"] * 1.1 and ttft["change_pct"] > 10
    assert metrics[("tpot_p50", "2")]["regression"] is True
    assert metrics[("error_rate", "2")]["regression"] is False

    [wrong] = [a for a in body["answers"] if a["regression"]]
    assert wrong["item"] == "arith-mul" and wrong["baseline_passed"] and not wrong["new_passed"]
    assert sum(a["regression"] for a in body["answers"]) == 1

    # Each finding names the metric, the baseline value and the new value.
    findings = body["findings"]
    [tokens] = [f for f in findings if f.startswith("Output tokens/s at concurrency 2")]
    baseline_value, new_value = re.findall(r"([\d,]+\.\d\d) tok/s", tokens)
    assert _number(baseline_value) == pytest.approx(throughput["baseline"], abs=0.01)
    assert _number(new_value) == pytest.approx(throughput["new"], abs=0.01)
    assert any(f.startswith("P95 time to first token at concurrency 2 regressed") for f in findings)
    assert any(f.startswith("Answer arith-mul regressed") and "391" in f for f in findings)

    # The acceptance's re-run after maintenance fails, naming each regression.
    state = api_as("aude").get(f"/api/v1/acceptance-plans/{plan.pk}/state/").json()
    [maintenance] = [layer for layer in state["layers"] if layer["layer"] == "maintenance"]
    assert maintenance["status"] == "failed" and state["overall"] == "failed"
    reasons = " ".join(maintenance["reasons"])
    assert "Output tokens/s at concurrency 2 regressed" in reasons
    assert "Answer arith-mul regressed" in reasons

    # The evidence page shows the comparison with its chart; the pin stays with tech leads.
    page = browser_as("lena").get(reverse("evidence:detail", args=[second])).content.decode()
    assert "Against the pinned baseline" in page and "Regressions against the baseline" in page
    assert 'aria-label="Output tokens/s"' in page and "<polyline" in page
    assert "Answer arith-mul regressed" in page
    assert reverse("evidence:baseline-pin", args=[second]) not in page
    tech_page = browser_as("tariq").get(reverse("evidence:detail", args=[first])).content.decode()
    assert "This run is the baseline" in tech_page

    # The packet's acceptance chapter carries the same comparison.
    section = packet.packet_section(case)
    html = render_to_string(section.template, {"section": section})
    assert "Re-run after maintenance against the baseline" in html
    assert "Output tokens/s at concurrency 2 regressed" in html
    assert "Answer arith-mul regressed" in html and "<svg" in html

    # And in Chinese.
    chinese = api_as("aude").get(f"/api/v1/evidence-bundles/{second}/comparison/", **ZH).json()
    assert any("并发 2" in f and "输出" in f for f in chinese["findings"]), chinese["findings"]
    with translation.override("zh-hans"):
        html = render_to_string(section.template, {"section": packet.packet_section(case)})
    assert "维护后复测" in html

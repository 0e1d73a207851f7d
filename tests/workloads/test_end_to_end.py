"""End to end on the CPU: a case's 600-prompt set (three tiers) and 50-item core sample set,
uploaded through the API, drive a harness run against the mock; the harness fetches them
with its token, the uploaded bundle records their digests, the server verifies the answers
with them, and a run on the built-in sets is refused while the plan requires the case's."""

import hashlib
import json
import subprocess
import sys

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence.acceptance import correctness_measurements_for_offer
from apps.evidence.models import EvidenceBundle
from apps.evidence.services import harness_token_create
from apps.workloads.models import WorkloadSet
from apps.workloads.packet import packet_section
from apps.workloads.services import plan_workload_set
from tests.acceptance.factories import approved_offer, make_plan
from tests.evidence.conftest import harness_env
from tests.evidence.test_soak_correctness import mock_process
from tests.factories import restore_default_templates
from tests.workloads.setfiles import jsonl, prompt_lines, sample_lines

pytestmark = pytest.mark.whole_case

SMALL_RUN = [
    *("--model", "m", "--ladder", "1", "--rounds", "1", "--max-tokens", "8"),
    *("--min-requests-per-level", "0", "--requests-per-stream", "2"),
    *("--min-requests-per-cell", "3", "--warmup-requests", "1"),
    *("--skip", "calibrate,bench,netprobe,authprobe", "--no-alloc-probe"),
]


def _harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", "run", *args, *SMALL_RUN],
        env=harness_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.django_db(transaction=True)
def test_the_cases_sets_drive_a_run_and_the_verification_uses_them(
    live_server, people, tariq, api_as, browser_as, tmp_path
):
    restore_default_templates()  # a transactional test starts from empty tables
    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    prompts_raw, samples_raw = jsonl(prompt_lines(per_tier=200)), jsonl(sample_lines(50))
    api = api_as("tariq")
    uploaded = {}
    for kind, raw in (("prompts", prompts_raw), ("samples", samples_raw)):
        response = api.post(
            f"/api/v1/cases/{case.pk}/workload-sets/?kind={kind}&name=customer-{kind}",
            data=raw,
            content_type="application/x-ndjson",
        )
        assert response.status_code == 201, response.json()
        uploaded[kind] = response.json()
    assert uploaded["prompts"]["statistics"]["tiers"]["long"]["count"] == 200
    prompt_set = WorkloadSet.objects.get(pk=uploaded["prompts"]["id"])
    sample_set = WorkloadSet.objects.get(pk=uploaded["samples"]["id"])
    plan_workload_set(actor=tariq, plan=plan, prompt_set=prompt_set, sample_set=sample_set)

    answers = tmp_path / "answers.jsonl"  # the mock answers each sample as expected
    answers.write_bytes(samples_raw)
    mock, endpoint = mock_process("--answers", str(answers))
    issued = harness_token_create(actor=tariq, case=case, offer=offer)
    upload = f"{live_server.url}/api/v1/evidence/"
    try:
        out = tmp_path / "bundle.json"
        done = _harness(
            "--endpoint", endpoint, "--prompt-set", "case", "--sample-set", "case",
            "--upload", upload, "--token", issued.token, "--nonce", issued.record.nonce,
            "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

        document = json.loads(out.read_bytes())
        used = document["workload_sets"]
        assert used["prompt_set"]["sha256"] == hashlib.sha256(prompts_raw).hexdigest()
        assert used["sample_set"]["sha256"] == hashlib.sha256(samples_raw).hexdigest()
        assert used["prompt_set"]["source"] == used["sample_set"]["source"] == "case"
        assert used["prompt_set"]["tiers"] == {"short": 200, "medium": 200, "long": 200}
        cells = document["steps"]["loadtest"]["result"]["cells"]
        assert {c["prompt_set"] for c in cells} == {"short", "medium", "long"}
        assert "Customer ticket" not in out.read_text()  # digests, never the prompts

        bundle = EvidenceBundle.objects.get(token=issued.record)
        assert bundle.summary["workload_sets"]["prompt_set"]["sha256"] == prompt_set.sha256
        assert bundle.summary["workload_sets"]["sample_set"]["sha256"] == sample_set.sha256
        run = correctness_measurements_for_offer(offer)[0]
        assert run.bundle_id == bundle.pk
        assert len(run.items) == 50 and all(item.passed for item in run.items)
        assert sum(item.core for item in run.items) == 45
        page = browser_as("aude").get(reverse("evidence:detail", args=[bundle.pk]))
        body = page.content.decode()
        assert "customer-prompts v1" in body and "customer-samples v1" in body
        assert prompt_set.sha256 in body

        # The built-in sets never satisfy a plan that names the case's sets.
        built_in = tmp_path / "built-in.json"
        again = _harness(
            "--endpoint", endpoint, "--prompt-sets", "short", "--upload", upload,
            "--token", issued.token, "--nonce", issued.record.nonce, "--out", str(built_in),
        )  # fmt: skip
        assert again.returncode == 4, again.stderr[-2000:]
        receipt = json.loads((tmp_path / "built-in.json.upload.json").read_text())
        assert "requires the case's prompt set customer-prompts v1" in json.dumps(receipt)
        assert json.loads(built_in.read_bytes())["workload_sets"]["prompt_set"]["source"] == (
            "built-in"
        )
        assert EvidenceBundle.objects.filter(token=issued.record).count() == 1
    finally:
        mock.terminate()
        mock.wait(timeout=10)

    # The acceptance chapter of the packet: digests and statistics, never a line of a set.
    section = packet_section(case)
    html = render_to_string(section.template, {**section.context, "section": section})
    assert prompt_set.sha256 in html and sample_set.sha256 in html
    assert "Customer ticket" not in html and "Question 1" not in html
    assert len(section.manifest_files) == 2


def test_a_token_of_another_case_cannot_fetch_the_sets(people, tariq, tmp_path):
    case, offer = approved_offer(people)
    other, _other_offer = approved_offer(people)
    api = APIClient()
    api.force_authenticate(tariq)
    api.post(
        f"/api/v1/cases/{case.pk}/workload-sets/?kind=prompts&name=p",
        data=jsonl(prompt_lines(per_tier=1)),
        content_type="application/x-ndjson",
    )
    token = harness_token_create(actor=tariq, case=other).token
    harness = APIClient()
    harness.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert harness.get("/api/v1/harness/sets/", {"kind": "prompts"}).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_rerun_on_the_cases_sets_regresses_against_the_pinned_baseline(
    live_server, people, tariq, api_as, tmp_path
):
    """The case's sets drive a first run, pinned as the offer's baseline; after maintenance
    the same sets drive a second run on an endpoint slowed down and answering q-1 wrongly:
    the second run is reported as a regression against the baseline, naming the metric, the
    baseline value and the new value, and the acceptance's re-run layer fails on it."""
    restore_default_templates()  # a transactional test starts from empty tables
    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    lines = sample_lines(50)
    prompts_raw, samples_raw = jsonl(prompt_lines(per_tier=20)), jsonl(lines)
    api = api_as("tariq")
    sets = {}
    for kind, raw in (("prompts", prompts_raw), ("samples", samples_raw)):
        response = api.post(
            f"/api/v1/cases/{case.pk}/workload-sets/?kind={kind}&name=customer-{kind}",
            data=raw,
            content_type="application/x-ndjson",
        )
        assert response.status_code == 201, response.json()
        sets[kind] = WorkloadSet.objects.get(pk=response.json()["id"])
    plan_workload_set(
        actor=tariq, plan=plan, prompt_set=sets["prompts"], sample_set=sets["samples"]
    )

    right = tmp_path / "right.jsonl"  # the endpoint answers every sample as expected
    right.write_bytes(samples_raw)
    wrong = tmp_path / "wrong.jsonl"  # …except q-1, after maintenance
    wrong.write_bytes(jsonl([{**line, "expected": "9999"} if line["id"] == "q-1" else line
                             for line in lines]))  # fmt: skip
    quick, quick_url = mock_process("--answers", str(right))
    slow, slow_url = mock_process("--answers", str(wrong), "--ttft-ms", "40", "--itl-ms", "8")
    issued = harness_token_create(actor=tariq, case=case, offer=offer)
    upload = f"{live_server.url}/api/v1/evidence/"
    bundles = []
    try:
        for name, endpoint in (("baseline", quick_url), ("rerun", slow_url)):
            done = _harness(
                "--endpoint", endpoint, "--prompt-set", "case", "--sample-set", "case",
                "--upload", upload, "--token", issued.token, "--nonce", issued.record.nonce,
                "--out", str(tmp_path / f"{name}.json"),
            )  # fmt: skip
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            bundles.append(EvidenceBundle.objects.filter(token=issued.record).latest("pk").pk)
            if name == "baseline":
                pinned = api.post(
                    "/api/v1/baselines/",
                    {"bundle": bundles[0], "offer": offer.pk, "reason": "Before maintenance"},
                    format="json",
                )
                assert pinned.status_code == 201, pinned.json()
    finally:
        for process in (quick, slow):
            process.terminate()
            process.wait(timeout=10)

    first, second = bundles
    assert first != second
    for pk in bundles:  # both runs used the case's sets, by digest
        used = EvidenceBundle.objects.get(pk=pk).summary["workload_sets"]
        assert used["prompt_set"]["sha256"] == sets["prompts"].sha256
        assert used["sample_set"]["sha256"] == sets["samples"].sha256

    body = api_as("aude").get(f"/api/v1/evidence-bundles/{second}/comparison/").json()
    assert body["state"] == "compared" and body["regressed"] is True, body
    assert body["baseline"]["bundle"] == first
    slower = [m for m in body["metrics"] if m["metric"] == "throughput" and m["regression"]]
    assert slower and all(m["new"] < m["baseline"] for m in slower)
    [answer] = [a for a in body["answers"] if a["regression"]]
    assert answer["item"] == "q-1" and answer["baseline_passed"] and not answer["new_passed"]
    findings = " ".join(body["findings"])
    assert "Output tokens/s at concurrency" in findings and "tok/s now" in findings
    assert "Answer q-1 regressed" in findings

    state = api_as("aude").get(f"/api/v1/acceptance-plans/{plan.pk}/state/").json()
    [maintenance] = [layer for layer in state["layers"] if layer["layer"] == "maintenance"]
    assert maintenance["status"] == "failed"
    assert "Answer q-1 regressed" in " ".join(maintenance["reasons"])

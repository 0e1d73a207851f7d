"""End to end on the CPU: the harness runs against its mock and uploads to a live server."""

import html
import json
import shlex
import subprocess
import sys

import pytest
from django.urls import reverse

from apps.evidence.models import EvidenceBundle
from apps.evidence.services import harness_token_create
from tests.evidence.conftest import FIXTURES, harness_env, run_harness
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = [pytest.mark.whole_case, pytest.mark.postgres]


@pytest.mark.django_db(transaction=True)
def test_harness_uploads_and_the_verification_shows_the_device_mismatch(
    live_server, mock_endpoint, tariq, tmp_path
):
    case = make_case(tariq)
    offer = make_offer(tariq, case, accelerator_model="NVIDIA H100 SXM5 80GB", spec=FULL_SPEC)
    issued = harness_token_create(actor=tariq, case=case, offer=offer)
    upload = f"{live_server.url}/api/v1/evidence/"
    out = tmp_path / "bundle.json"
    result = run_harness(
        mock_endpoint,
        out,
        "--upload",
        upload,
        "--token",
        issued.token,
        "--nonce",
        issued.record.nonce,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert issued.token not in out.read_text()  # the harness never writes the token down
    receipt = json.loads((tmp_path / "bundle.json.upload.json").read_text())
    assert receipt["http_status"] == 201

    bundle = EvidenceBundle.objects.select_related("verification").get()
    # Whoever ran it reads the server's verdict and where to see it, at the console.
    page = f"{live_server.url}/evidence/{bundle.pk}/"
    assert "[diligence-harness] verdict: failed\n" in result.stderr
    assert f"[diligence-harness] evidence page: {page}\n" in result.stderr
    assert json.loads(result.stdout)["upload"]["upload"]["evidence_url"] == page
    checks = {c["key"]: c for c in bundle.verification.checks}
    assert bundle.verification.verdict == "failed"
    assert checks["identity.device_count"]["status"] == "fail"  # 1 GPU seen, 8 declared
    assert checks["identity.sku"]["status"] == "fail"
    assert (
        "RTX 4090 24GB is not the declared NVIDIA H100 SXM5 80GB"
        in checks["identity.sku"]["detail"]
    )
    assert bundle.client_summary_disagreements == []

    again = subprocess.run(
        [sys.executable, "-m", "diligence_harness", "upload", str(out)]
        + ["--upload", upload, "--token", issued.token],
        env=harness_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["http_status"] == 200
    assert EvidenceBundle.objects.count() == 1


# Small enough for a CPU run; the order matters: the last of a repeated option wins, so
# these shrink what the page asked for (the plan's ladder, a 30-minute soak) and no more.
CPU_SIZE = [
    *("--ladder", "1,2", "--rounds", "1", "--prompt-sets", "short", "--max-tokens", "16"),
    *("--warmup-requests", "1", "--quick", "--bench-rounds", "2", "--sustained-s", "0.2"),
    *("--skip", "calibrate", "--net-count", "3", "--no-alloc-probe"),
    # The case's SLO starts the rate search too: one step of the 130 requests a P95 needs.
    *("--rate-start", "100", "--rate-max", "100", "--rate-requests", "130"),
    *("--soak-duration", "2s", "--soak-interval", "0.5s", "--gpu-interval", "1s"),
    *("--nvidia-smi-xml", str(FIXTURES / "rtx-4090-1x-v12.xml")),
    *("--disk-bytes", "8MiB", "--disk-block-bytes", "1MiB", "--disk-random-ops", "50"),
    *("--train-steps", "2", "--train-warmup", "1"),
]


@pytest.mark.django_db(transaction=True)
def test_the_token_pages_command_runs_every_step_and_prints_the_verdict_and_page(
    live_server, mock_endpoint, browser_as, tariq, tmp_path
):
    case = make_case(tariq)
    offer = make_offer(tariq, case, accelerator_model="NVIDIA H100 SXM5 80GB", spec=FULL_SPEC)
    page = browser_as("tariq").post(
        reverse("evidence:tokens", args=[case.pk]),
        {"offer": offer.pk, "ttl_hours": 2, "endpoint": mock_endpoint, "model": "mock"},
        HTTP_HOST=live_server.url.removeprefix("http://"),
    )
    body = page.content.decode()
    commands = {}
    for name in ("reference-command", "run-command"):
        start = body.index(f'<code id="{name}">') + len(f'<code id="{name}">')
        commands[name] = shlex.split(html.unescape(body[start : body.index("</code>", start)]))
    harness = [sys.executable, "-m", "diligence_harness"]

    # First the reference, recorded on a baseline (here the same mock), as the page says.
    reference = commands["reference-command"]
    reference = [mock_endpoint if part == "<YOUR_BASELINE_URL>" else part for part in reference]
    done = subprocess.run(
        harness + reference[2:], cwd=tmp_path, env=harness_env(), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]

    command = harness + commands["run-command"][2:] + CPU_SIZE
    result = subprocess.run(
        command, cwd=tmp_path, env=harness_env(), capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    document = json.loads((tmp_path / "bundle.json").read_bytes())
    steps = {name: step["status"] for name, step in document["steps"].items()}
    assert steps == {
        "inventory": "ok",
        "environment": "ok",
        "bench": "ok",
        "loadtest": "ok",
        "calibrate": "skipped",
        "netprobe": "ok",
        "authprobe": "ok",
        "correctness": "ok",
        "soak": "ok",
        "ratesearch": "ok",
        "node": "skipped",  # neither torch nor nvidia-smi on this machine
        "disk": "ok",
        "train": "skipped",  # no torch on this machine
    }
    bundle = EvidenceBundle.objects.select_related("verification").get()
    assert bundle.case_id == case.pk and bundle.offer_id == offer.pk
    checks = {c["key"]: c for c in bundle.verification.checks}
    # By default every level sends enough requests for the server to state its P95.
    assert {checks[f"service.ttft_p95.c{c}"]["status"] for c in (1, 2)} <= {"pass", "fail"}
    # The rate search's one step held the case's SLO on the mock: the capacity is above it.
    assert checks["service.throughput_at_slo"]["status"] == "pass"
    evidence_page = f"{live_server.url}/evidence/{bundle.pk}/"
    assert result.stderr.splitlines()[-2:] == [
        f"[diligence-harness] verdict: {bundle.verification.verdict}",
        f"[diligence-harness] evidence page: {evidence_page}",
    ]

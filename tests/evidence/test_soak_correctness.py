"""Soak and correctness evidence: real harness bundles against the mock with injected
downtime, a restart and a wrong answer, uploaded through POST /api/v1/evidence/, then
read back through the acceptance selectors and the bundle page."""

import copy
import hashlib
import json
import os
import stat
import subprocess
import sys

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence.acceptance import (
    CorrectnessItem,
    correctness_measurements_for_offer,
    soak_measurements_for_offer,
)
from apps.evidence.models import EvidenceBundle
from tests.evidence.conftest import FIXTURES, free_port, harness_env
from tests.evidence.factories import bundle_for, make_bundle_record, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.whole_case

URL = "/api/v1/evidence/"
TOLERANCE_S = 0.4
GPU_UUID = "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94"


def harness(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", *args],
        env=env or harness_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def mock_process(*extra: str):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "diligence_harness", "mock-server", "--port", str(port)]
        + ["--ttft-ms", "2", "--itl-ms", "1", "--max-seconds", "300", *extra],
        env=harness_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    process.stdout.readline()  # {"event": "listening", ...}
    return process, f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="session")
def acceptance_bundles(tmp_path_factory):
    """A soak (outage 0.5–1.0 s, restart at 1.6 s) and a correctness run (one wrong
    answer) written by the harness, with a reference recorded on a clean baseline, and
    the correctness run of that baseline itself against the same reference."""
    work = tmp_path_factory.mktemp("acceptance")
    smi = work / "nvidia-smi"  # one A10G from a real capture, so ECC and Xid are measured
    smi.write_text(f'#!/bin/sh\ncat "{FIXTURES / "a10g-1x-v11.xml"}"\n')
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    kernel_log = work / "kern.log"
    kernel_log.write_text("[    1.0] boot\n")
    env = {**harness_env(), "PATH": f"{work}:{os.environ['PATH']}"}
    baseline, baseline_url = mock_process()
    faulty, faulty_url = mock_process(
        "--down", "0.5:1.0", "--restart-at", "1.6", "--restart-outage-s", "0.2",
        "--wrong-answer", "arith-mul",
    )  # fmt: skip
    try:
        reference = work / "reference.json"
        done = harness(
            "correctness", "--endpoint", baseline_url, "--model", "m",
            "--record-reference", str(reference),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        soak_out, correctness_out = work / "soak.json", work / "correctness.json"
        done = harness(
            "soak", "--endpoint", faulty_url, "--model", "m", "--duration", "2.5s",
            "--interval", "0.1s", "--gpu-interval", "1s", "--kernel-log", str(kernel_log),
            "--nonce", "placeholder", "--out", str(soak_out), env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        done = harness(
            "correctness", "--endpoint", faulty_url, "--model", "m", "--reference",
            str(reference), "--nonce", "placeholder", "--out", str(correctness_out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # The same reference run on the baseline itself: the run a tech lead pins, which
        # vouches for the reference file (docs/rules/evidence.md#expected-answers).
        baseline_out = work / "baseline-correctness.json"
        done = harness(
            "correctness", "--endpoint", baseline_url, "--model", "m", "--reference",
            str(reference), "--nonce", "placeholder", "--out", str(baseline_out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        for process in (baseline, faulty):
            process.terminate()
            process.wait(timeout=10)
    return {
        "soak": json.loads(soak_out.read_bytes()),
        "correctness": json.loads(correctness_out.read_bytes()),
        "baseline_correctness": json.loads(baseline_out.read_bytes()),
        "reference": reference.read_bytes(),
    }


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def upload(world, document: dict):
    raw = serialise(bundle_for(document, world["record"]))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['token']}")
    return client.post(URL, data=raw, content_type="application/json"), raw


def test_a_soak_bundle_is_stored_byte_for_byte_and_read_by_the_server(
    world, acceptance_bundles, stored_files
):
    response, raw = upload(world, acceptance_bundles["soak"])
    assert response.status_code == 201, response.json()
    bundle = EvidenceBundle.objects.get()
    [path] = stored_files()
    assert path.read_bytes() == raw and bundle.sha256 == hashlib.sha256(raw).hexdigest()
    assert bundle.client_summary_disagreements == []
    [measurement] = soak_measurements_for_offer(world["offer"])
    assert measurement.bundle_id == bundle.pk and measurement.bundle_sha256 == bundle.sha256
    assert 2.4 < measurement.duration_s < 4.0
    # The mock's clock starts at the soak's first connection, just after its start.
    [(start, end), (restart_start, restart_end)] = measurement.outages
    assert abs(start - 0.5) <= TOLERANCE_S and abs(end - 1.0) <= TOLERANCE_S
    assert abs(restart_start - 1.4) <= TOLERANCE_S and abs(restart_end - 1.6) <= TOLERANCE_S
    [restart] = measurement.restarts_at_s
    assert abs(restart - 1.6) <= TOLERANCE_S
    assert measurement.health_checks_ok < measurement.health_checks_total
    assert measurement.ecc_uncorrected == 0 and measurement.xid_measured
    assert measurement.xid_events == ()


def test_the_bundle_page_shows_the_soak_and_the_correctness(world, acceptance_bundles, browser_as):
    soak, _ = upload(world, acceptance_bundles["soak"])
    correctness, _ = upload(world, acceptance_bundles["correctness"])
    page = browser_as("lena").get(reverse("evidence:detail", kwargs={"pk": soak.json()["id"]}))
    text = page.content.decode()
    assert page.status_code == 200 and 'id="soak"' in text and "endpoint restarted at 1." in text
    assert "Downtime" in text and "Uncorrected ECC errors" in text
    page = browser_as("aude").get(
        reverse("evidence:detail", kwargs={"pk": correctness.json()["id"]})
    )
    text = page.content.decode()
    assert 'id="correctness"' in text and 'id="mismatch-arith-mul"' in text
    assert "11 / 12" in text and "8 / 9" in text and "differs by 1 (tolerance 0)" in text
    assert 'id="mismatch-arith-add"' not in text


def test_correctness_measurement_names_the_wrong_answer(world, acceptance_bundles):
    response, _raw = upload(world, acceptance_bundles["correctness"])
    assert response.status_code == 201, response.json()
    [measurement] = correctness_measurements_for_offer(world["offer"])
    reference = acceptance_bundles["reference"]
    assert measurement.reference_name == "reference.json"
    assert measurement.reference_sha256 == hashlib.sha256(reference).hexdigest()
    assert "exact after whitespace normalisation" in measurement.tolerance
    assert "numeric within abs 0 or rel 0" in measurement.tolerance
    assert len(measurement.items) == 12
    failed = [item for item in measurement.items if not item.passed]
    assert failed == [
        CorrectnessItem(
            item_id="arith-mul",
            core=True,
            passed=False,
            expected="391",
            received="392",
            reason="differs by 1 (tolerance 0)",
        )
    ]
    core = [item for item in measurement.items if item.core]
    assert sum(item.passed for item in core) == 8 and len(core) == 9


def synthetic_soak(document: dict, *, minutes: int, restart_at_s: int, interval_s: int = 10):
    """A long soak built from raw records (real time in tests stays short)."""
    doc = copy.deepcopy(document)
    result = doc["steps"]["soak"]["result"]
    start = 10**12
    ticks = range(0, minutes * 60 + 1, interval_s)
    result["t_start_ns"], result["t_end_ns"] = start, start + minutes * 60 * 10**9
    result["interval_s"] = interval_s
    result["probes"] = [
        {"tick": i, "kind": "models", "t_ns": start + t * 10**9, "ok": True,
         "http_status": 200, "latency_ms": 3.0, "error": None}
        for i, t in enumerate(ticks)
    ]  # fmt: skip
    result["metrics"]["samples"] = [
        {"t_ns": start + t * 10**9 + 5_000_000, "http_status": 200, "error": None,
         "process_start_time_seconds": 1.0e9 if t < restart_at_s else 1.0e9 + restart_at_s}
        for t in ticks
    ]  # fmt: skip
    result["metrics"]["samples"][restart_at_s // interval_s]["t_ns"] = start + restart_at_s * 10**9
    result["boot_ids"] = [{"t_ns": start, "boot_id": "b", "error": None}]
    result["gpu"]["samples"] = []
    result["xid"]["events"] = []
    result["summary"] = {
        "observed_duration_s": minutes * 60.0,
        "health_checks_total": len(ticks),
        "health_checks_ok": len(ticks),
        "outages": [],
        "downtime_s": 0,
        "restarts": [{"at_s": float(restart_at_s), "kind": "endpoint"}],
        "xid_events": [],
        "ecc_uncorrected": None,
    }
    return doc


def test_a_restart_at_minute_29_of_a_45_minute_soak(world, acceptance_bundles):
    document = synthetic_soak(acceptance_bundles["soak"], minutes=45, restart_at_s=29 * 60)
    response, _raw = upload(world, document)
    assert response.status_code == 201, response.json()
    [measurement] = soak_measurements_for_offer(world["offer"])
    assert measurement.restarts_at_s == (1740.0,)
    assert measurement.duration_s == 2700.0 and measurement.outages == ()
    assert measurement.health_checks_total == measurement.health_checks_ok == 271
    assert measurement.ecc_uncorrected is None  # no GPU samples: not measured, not zero
    assert EvidenceBundle.objects.get().client_summary_disagreements == []


def test_edited_client_summaries_are_recorded_and_ignored(world, acceptance_bundles):
    soak = copy.deepcopy(acceptance_bundles["soak"])
    soak["steps"]["soak"]["result"]["summary"]["downtime_s"] = 0.0
    soak["steps"]["soak"]["result"]["summary"]["restarts"] = []
    correctness = copy.deepcopy(acceptance_bundles["correctness"])
    result = correctness["steps"]["correctness"]["result"]
    [wrong] = [item for item in result["items"] if item["id"] == "arith-mul"]
    wrong["passed"], wrong["reason"] = True, ""
    result["summary"]["passed"] = 12
    assert upload(world, soak)[0].status_code == 201
    assert upload(world, correctness)[0].status_code == 201
    soak_record, correctness_record = EvidenceBundle.objects.order_by("pk")
    metrics = {(d["where"], d["metric"]) for d in soak_record.client_summary_disagreements}
    assert metrics == {("soak", "downtime_s"), ("soak", "restarts.count")}
    metrics = {(d["where"], d["metric"]) for d in correctness_record.client_summary_disagreements}
    assert metrics == {("correctness/arith-mul", "passed"), ("correctness", "passed")}
    [measurement] = correctness_measurements_for_offer(world["offer"])
    assert [i.item_id for i in measurement.items if not i.passed] == ["arith-mul"]
    [soak_measurement] = soak_measurements_for_offer(world["offer"])
    assert len(soak_measurement.restarts_at_s) == 1 and soak_measurement.outages


def test_a_correctness_section_without_its_reference_is_refused(
    world, acceptance_bundles, stored_files
):
    document = copy.deepcopy(acceptance_bundles["correctness"])
    document["artifacts"] = [
        a for a in document["artifacts"] if a["name"] != "correctness-reference.json"
    ]
    document["manifest"]["artifacts"] = [
        a for a in document["manifest"]["artifacts"] if a["name"] != "correctness-reference.json"
    ]
    response, _raw = upload(world, document)
    assert response.status_code == 400
    assert "does not carry" in json.dumps(response.json())
    assert EvidenceBundle.objects.count() == 0 and stored_files() == []


def test_selectors_are_newest_first_in_one_query(
    world, tariq, acceptance_bundles, django_assert_num_queries
):
    other = make_offer(tariq, world["case"], spec=FULL_SPEC)
    make_bundle_record(world["case"], world["offer"], world["record"], n=7)  # no sections
    first = synthetic_soak(acceptance_bundles["soak"], minutes=30, restart_at_s=600)
    second = synthetic_soak(acceptance_bundles["soak"], minutes=31, restart_at_s=60)
    assert upload(world, first)[0].status_code == 201
    assert upload(world, second)[0].status_code == 201
    assert upload(world, acceptance_bundles["correctness"])[0].status_code == 201
    with django_assert_num_queries(1):
        soaks = soak_measurements_for_offer(world["offer"])
    with django_assert_num_queries(1):
        runs = correctness_measurements_for_offer(world["offer"])
    assert [m.restarts_at_s for m in soaks] == [(60.0,), (600.0,)]
    assert len(runs) == 1
    assert soak_measurements_for_offer(other) == []
    assert correctness_measurements_for_offer(other) == []


def test_xid_lines_ecc_rises_and_a_returning_gpu_are_read_from_raw_samples(
    world, acceptance_bundles
):
    document = synthetic_soak(acceptance_bundles["soak"], minutes=10, restart_at_s=300)
    result = document["steps"]["soak"]["result"]
    start = result["t_start_ns"]

    def sample(at_s: int, ecc: int | None, present: bool = True) -> dict:
        gpus = [{"uuid": GPU_UUID, "pci_bus_id": "00000000:00:1E.0",
                 "ecc_uncorrected_volatile": ecc, "ecc_uncorrected_aggregate": ecc}]  # fmt: skip
        return {"t_ns": start + at_s * 10**9, "ok": present, "error": None if present else "gone",
                "gpus": gpus if present else []}  # fmt: skip

    result["gpu"].update(status="measured", reason=None)
    # 3 errors, then a driver reload resets the counter (not a negative), then 1 more.
    result["gpu"]["samples"] = [sample(0, 5), sample(120, 8), sample(240, None, present=False),
                                sample(360, 0), sample(480, 1)]  # fmt: skip
    line = "[ 99.1] NVRM: Xid (PCI:0000:00:1e): 48, pid=1, DBE (double bit error) ECC error."
    result["xid"].update(status="measured", reason=None)
    result["xid"]["events"] = [{"t_ns": start + 130 * 10**9, "line": line}]
    result["summary"].update(
        ecc_uncorrected=4,
        xid_events=[{"at_s": 130.0, "line": line}],
        restarts=[{"at_s": 300.0, "kind": "endpoint"}, {"at_s": 360.0, "kind": "gpu"}],
    )
    response, _raw = upload(world, document)
    assert response.status_code == 201, response.json()
    [measurement] = soak_measurements_for_offer(world["offer"])
    assert measurement.xid_events == ((130.0, GPU_UUID, 48),) and measurement.xid_measured
    assert measurement.ecc_uncorrected == 4
    assert EvidenceBundle.objects.get().summary["soak"]["ecc_by_gpu"] == {GPU_UUID: 4}
    assert measurement.restarts_at_s == (300.0, 360.0)
    assert EvidenceBundle.objects.get().client_summary_disagreements == []

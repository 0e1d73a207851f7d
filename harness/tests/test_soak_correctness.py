"""`soak` and `correctness` through the command line, against the mock with injections."""

import json
import os
import stat
import subprocess
import sys
import threading
import time

import jsonschema
import pytest
from conftest import HARNESS_ROOT, fixture_path
from diligence_harness import schema
from diligence_harness.correctness import compare
from diligence_harness.correctness_set import input_set_sha256, load_inputs
from diligence_harness.mockinject import Injections
from diligence_harness.mockserver import MockConfig, MockServerThread
from diligence_harness.soak import parse_duration, parse_process_start
from test_cli_run import harness

INTERVAL_S = 0.1
# An outage is seen from the first failed check to the first good one: up to one
# interval late at each end, plus the scheduling noise of a shared machine.
TOLERANCE_S = 0.35
XID_LINE = "[ 1234.5678] NVRM: Xid (PCI:0000:00:1e): 79, pid=0, GPU has fallen off the bus."


def valid(bundle: dict) -> None:
    jsonschema.Draft202012Validator(schema.load_schema()).validate(bundle)
    assert schema.validate(bundle) == []


def fake_nvidia_smi(directory) -> dict:
    """An `nvidia-smi` on PATH that prints a real capture, with ECC counts and presence
    taken from files the test changes while the soak runs."""
    state = {"ecc": directory / "ecc", "gone": directory / "gone"}
    state["ecc"].write_text("0")
    script = directory / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        f'[ -e "{state["gone"]}" ] && {{ echo "No devices were found"; exit 6; }}\n'
        f'sed "s/<dram_uncorrectable>0</<dram_uncorrectable>$(cat "{state["ecc"]}")</" '
        f'"{fixture_path("nvidia-smi", "a10g-1x-v11.xml")}"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return state


@pytest.fixture(scope="module")
def soak_run(tmp_path_factory):
    """One 4-second soak: an outage, a restart, an Xid line, ECC errors, a GPU that
    disappears and comes back, and a host boot-id change."""
    work = tmp_path_factory.mktemp("soak")
    gpu = fake_nvidia_smi(work)
    kernel_log, boot_id = work / "kern.log", work / "boot_id"
    kernel_log.write_text("[    1.0] an unrelated line\n")
    boot_id.write_text("boot-a\n")
    out = work / "soak.json"
    injections = Injections(downtime=((0.9, 1.4),), restart_at_s=2.2, restart_outage_s=0.3)
    env = dict(os.environ, PYTHONPATH=HARNESS_ROOT, PATH=f"{work}:{os.environ['PATH']}")
    with MockServerThread(MockConfig(ttft_ms=2, itl_ms=1, injections=injections)) as mock:
        process = subprocess.Popen(
            [sys.executable, "-m", "diligence_harness", "soak", "--endpoint", mock.url + "/v1",
             "--model", "mock-model", "--duration", "4s", "--interval", f"{INTERVAL_S}s",
             "--gpu-interval", "0.25s", "--probe-timeout-s", "1", "--kernel-log", str(kernel_log),
             "--boot-id-command", f"cat {boot_id}", "--case", "C-1", "--nonce", "n-1",
             "--out", str(out)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

        def events():
            while mock.server.injected.started_ns is None:  # the soak's first probe
                time.sleep(0.01)
            time.sleep(1.0)
            with kernel_log.open("a") as handle:
                handle.write(XID_LINE + "\n")
            time.sleep(0.4)
            gpu["ecc"].write_text("2")
            time.sleep(0.4)
            gpu["gone"].write_text("")
            time.sleep(0.6)
            gpu["gone"].unlink()
            boot_id.write_text("boot-b\n")

        changer = threading.Thread(target=events)
        changer.start()
        stdout, stderr = process.communicate(timeout=60)
        changer.join()
        started_ns = mock.server.injected.started_ns
    assert process.returncode == 0, stderr
    bundle = json.loads(out.read_bytes())
    return bundle, started_ns, json.loads(stdout)


def test_soak_bundle_is_valid_and_holds_raw_probes(soak_run):
    bundle, _started, receipt = soak_run
    valid(bundle)
    assert receipt["steps"]["soak"] == "ok" and "correctness" not in bundle["steps"]
    result = bundle["steps"]["soak"]["result"]
    kinds = {p["kind"] for p in result["probes"]}
    assert kinds == {"models", "completion"}
    failed = [p for p in result["probes"] if not p["ok"]]
    assert failed and all(p["error"] and p["http_status"] is None for p in failed)
    assert all(p["latency_ms"] >= 0 and p["t_ns"] >= result["t_start_ns"] for p in result["probes"])


def test_soak_reports_the_outage_and_the_restart_within_tolerance(soak_run):
    bundle, started_ns, _receipt = soak_run
    result = bundle["steps"]["soak"]["result"]
    summary = result["summary"]
    offset = (started_ns - result["t_start_ns"]) / 1e9  # mock clock -> soak clock, seconds
    assert 3.9 < summary["observed_duration_s"] < 5.0
    expected = [(0.9 + offset, 1.4 + offset), (1.9 + offset, 2.2 + offset)]
    assert len(summary["outages"]) == 2, summary["outages"]
    for (start, end), (want_start, want_end) in zip(summary["outages"], expected):
        assert abs(start - want_start) <= TOLERANCE_S and abs(end - want_end) <= TOLERANCE_S
    assert abs(summary["downtime_s"] - 0.8) <= 2 * TOLERANCE_S
    endpoint = [r for r in summary["restarts"] if r["kind"] == "endpoint"]
    assert len(endpoint) == 1 and abs(endpoint[0]["at_s"] - (2.2 + offset)) <= TOLERANCE_S
    assert summary["health_checks_ok"] < summary["health_checks_total"]
    assert {f["id"] for f in bundle["findings"]} >= {"SOAK-OUTAGE", "SOAK-RESTART"}


def test_soak_reads_xid_ecc_gpu_presence_and_boot_id(soak_run):
    bundle, _started, _receipt = soak_run
    result = bundle["steps"]["soak"]["result"]
    summary = result["summary"]
    assert result["xid"]["status"] == "measured" and result["xid"]["xid_lines_before_soak"] == 0
    assert [e["line"] for e in summary["xid_events"]] == [XID_LINE]
    assert summary["ecc_uncorrected"] == 2
    assert summary["ecc_deltas"] == {"GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94": 2}
    assert sorted(r["kind"] for r in summary["restarts"]) == ["endpoint", "gpu", "host"]
    gone = [s for s in result["gpu"]["samples"] if not s["ok"]]
    assert gone and gone[0]["gpus"] == []
    uuids = {g["uuid"] for s in result["gpu"]["samples"] for g in s["gpus"]}
    assert uuids == {"GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94"}
    assert {f["id"] for f in bundle["findings"]} >= {"SOAK-XID", "SOAK-ECC"}


def test_soak_without_a_gpu_says_not_measured(tmp_path):
    out = tmp_path / "soak.json"
    empty = tmp_path / "bin"
    empty.mkdir()
    env_path = f"{empty}:/usr/bin:/bin"  # no nvidia-smi anywhere on this PATH
    with MockServerThread(MockConfig(ttft_ms=1, itl_ms=1)) as mock:
        done = subprocess.run(
            [sys.executable, "-m", "diligence_harness", "soak", "--endpoint", mock.url,
             "--model", "m", "--duration", "0.5s", "--interval", "0.1s", "--probe", "models",
             "--kernel-log", str(tmp_path / "missing.log"), "--out", str(out)],
            env=dict(os.environ, PYTHONPATH=HARNESS_ROOT, PATH=env_path),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_bytes())["steps"]["soak"]["result"]
    assert result["gpu"]["status"] == "not_measured" and "not found" in result["gpu"]["reason"]
    assert result["xid"]["status"] == "not_measured"
    assert result["summary"]["ecc_uncorrected"] is None  # never an invented zero
    assert result["summary"]["outages"] == [] and result["summary"]["restarts"] == []
    assert {p["kind"] for p in result["probes"]} == {"models"}


def test_soak_refuses_bad_options_before_measuring(tmp_path):
    done = harness(
        "soak", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--duration", "soon",
        "--out", str(tmp_path / "x.json"),
    )  # fmt: skip
    assert done.returncode == 2 and "not a duration" in done.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "reference.json"
    with MockServerThread(MockConfig(ttft_ms=1, itl_ms=1)) as baseline:
        done = harness(
            "correctness", "--endpoint", baseline.url + "/v1", "--model", "mock-model",
            "--record-reference", str(path),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return path, json.loads(done.stdout)


def test_record_reference_writes_every_input_with_its_digest(reference):
    path, receipt = reference
    document = json.loads(path.read_bytes())
    items = load_inputs()
    assert document["format"] == "diligence-correctness-reference/1"
    assert document["input_set_sha256"] == input_set_sha256(items) == receipt["input_set_sha256"]
    assert [(e["id"], e["input_sha256"]) for e in document["items"]] == [
        (i["id"], i["input_sha256"]) for i in items
    ]
    assert {e["id"]: e["output"] for e in document["items"]}["arith-mul"] == "391"
    assert document["sampling"] == {"temperature": 0, "seed": 0}


def correctness(endpoint: str, ref, out, *extra: str):
    return harness(
        "correctness", "--endpoint", endpoint, "--model", "mock-model", "--reference", str(ref),
        "--out", str(out), "--nonce", "n-2", *extra,
    )  # fmt: skip


def test_correctness_round_trip_passes_in_full(reference, tmp_path):
    path, _receipt = reference
    with MockServerThread(MockConfig(ttft_ms=1, itl_ms=1)) as mock:
        done = correctness(mock.url, path, tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "c.json").read_bytes())["steps"]["correctness"]["result"]
    assert summary["summary"]["pass_rate"] == 1.0 and summary["summary"]["mismatches"] == []


def test_correctness_reports_one_wrong_answer(reference, tmp_path):
    path, _receipt = reference
    config = MockConfig(ttft_ms=1, itl_ms=1, injections=Injections(wrong_answers=("arith-mul",)))
    with MockServerThread(config) as mock:
        done = correctness(mock.url + "/v1", path, tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    bundle = json.loads((tmp_path / "c.json").read_bytes())
    valid(bundle)
    result = bundle["steps"]["correctness"]["result"]
    summary = result["summary"]
    assert (summary["passed"], summary["total"]) == (11, 12)
    assert (summary["core_passed"], summary["core_total"]) == (8, 9)
    assert summary["mismatches"] == [
        {
            "id": "arith-mul",
            "core": True,
            "expected": "391",
            "received": "392",
            "reason": "differs by 1 (tolerance 0)",
        }
    ]
    [artifact] = [a for a in bundle["artifacts"] if a["name"] == result["reference"]["artifact"]]
    assert artifact["sha256"] == result["reference"]["sha256"]
    assert artifact["content"] == path.read_text(encoding="utf-8")
    assert all(i["seed_sent"] for i in result["items"])
    [mismatch] = [f for f in bundle["findings"] if f["id"] == "CORR-MISMATCH"]
    assert mismatch["subject"] == "arith-mul" and mismatch["severity"] == "fail"


def test_a_reference_for_other_inputs_is_refused(reference, tmp_path):
    path, _receipt = reference
    document = json.loads(path.read_bytes())
    document["items"][0]["input_sha256"] = "0" * 64
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(document))
    done = correctness("http://127.0.0.1:9", altered, tmp_path / "c.json")
    assert done.returncode == 2
    assert "arith-add" in done.stderr and "different input" in done.stderr
    assert not (tmp_path / "c.json").exists()


def test_run_carries_both_sections_when_asked(reference, tmp_path):
    path, _receipt = reference
    out = tmp_path / "run.json"
    config = MockConfig(ttft_ms=1, itl_ms=1, injections=Injections(wrong_answers=("sqrt-two",)))
    with MockServerThread(config) as mock:
        done = harness(
            "run", "--endpoint", mock.url + "/v1", "--model", "mock-model", "--out", str(out),
            "--skip", "inventory,environment,bench,loadtest,calibrate,netprobe,authprobe",
            "--soak-duration", "0.5s", "--soak-interval", "0.1s", "--reference", str(path),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_bytes())
    valid(bundle)
    steps = bundle["steps"]
    assert steps["soak"]["status"] == "ok" and steps["correctness"]["status"] == "ok"
    assert steps["soak"]["result"]["summary"]["health_checks_total"] >= 5
    assert steps["correctness"]["result"]["summary"]["mismatches"][0]["id"] == "sqrt-two"


@pytest.mark.parametrize(
    "comparison,expected,received,passed",
    [
        ({"kind": "exact"}, "REMOTE COMPUTE", "  REMOTE\n  COMPUTE ", True),
        ({"kind": "exact"}, "Paris", "paris", False),
        ({"kind": "numeric", "abs_tol": 1e-4}, "1.4142", "The answer is 1.41421356", True),
        ({"kind": "numeric", "abs_tol": 1e-4}, "1.4142", "1.4144", False),
        ({"kind": "numeric", "rel_tol": 0.01}, "9000", "9050", True),
        ({"kind": "numeric"}, "42", "forty-two", False),
        ({"kind": "exact"}, "gpu", None, False),
        ({"kind": "json"}, '{"a": [1, 2]}', ' {"a": [1, 2]} ', True),
        ({"kind": "json"}, '{"a": 1}', "[" * 100_000 + "]" * 100_000, False),
    ],
)
def test_comparisons(comparison, expected, received, passed):
    ok, reason = compare(comparison, expected, received)
    assert ok is passed and (reason == "") is passed


def test_durations_and_metrics_parsing():
    assert parse_duration("30m") == 1800 and parse_duration("10s") == 10
    assert parse_duration("1.5") == 1.5 and parse_duration("1h") == 3600
    with pytest.raises(ValueError):
        parse_duration("0s")
    text = "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1.7e9\n"
    assert parse_process_start(text) == 1.7e9
    assert parse_process_start("up 1\n") is None


FAKE_PYNVML = """
import os

NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC = 1, 0, 1


class NVMLError(Exception):
    pass


def _state():
    with open(os.environ["FAKE_NVML_STATE"]) as handle:
        return handle.read().split()  # "<uncorrected count> ok|lost"


def nvmlInit(): pass
def nvmlShutdown(): pass
def nvmlDeviceGetCount(): return 1
def nvmlDeviceGetHandleByIndex(index): return index


def nvmlDeviceGetUUID(handle):
    if _state()[1] == "lost":
        raise NVMLError("GPU is lost")
    return b"GPU-fake-0"


class _Pci:
    busId = b"00000000:3B:00.0"


def nvmlDeviceGetPciInfo(handle): return _Pci()


def nvmlDeviceGetTotalEccErrors(handle, kind, counter):
    if counter == NVML_AGGREGATE_ECC:
        raise NVMLError("Not Supported")
    return int(_state()[0])
"""


def test_soak_falls_back_to_nvml_without_nvidia_smi(tmp_path):
    """No nvidia-smi on PATH, nvidia-ml-py importable: counters and presence from NVML."""
    (tmp_path / "pynvml.py").write_text(FAKE_PYNVML)
    state = tmp_path / "state"
    state.write_text("0 ok")
    (tmp_path / "bin").mkdir()
    out = tmp_path / "soak.json"
    env = dict(
        os.environ,
        PYTHONPATH=f"{tmp_path}:{HARNESS_ROOT}",
        PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin",
        FAKE_NVML_STATE=str(state),
    )
    with MockServerThread(MockConfig(ttft_ms=1, itl_ms=1)) as mock:
        process = subprocess.Popen(
            [sys.executable, "-m", "diligence_harness", "soak", "--endpoint", mock.url,
             "--model", "m", "--duration", "2s", "--interval", "0.1s", "--probe", "models",
             "--gpu-interval", "0.1s", "--out", str(out)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        while mock.server.injected.started_ns is None and process.poll() is None:
            time.sleep(0.01)
        for text in ("3 ok", "3 lost", "5 ok"):
            time.sleep(0.5)
            state.write_text(text)
        _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    result = json.loads(out.read_bytes())["steps"]["soak"]["result"]
    assert result["gpu"]["status"] == "measured" and result["gpu"]["source"].startswith("nvml")
    assert result["summary"]["ecc_uncorrected"] == 5
    assert [r["kind"] for r in result["summary"]["restarts"]] == ["gpu"]
    card = result["gpu"]["samples"][0]["gpus"][0]
    assert card["pci_bus_id"] == "0000:3b:00.0" and card["ecc_uncorrected_aggregate"] is None

"""`diligence-harness run` end to end on a machine without a GPU: CPU bench, mock endpoint,
bundle written, validated against the published schema and uploaded."""

import hashlib
import json
import os
import subprocess
import sys

import jsonschema
import pytest
from conftest import HARNESS_ROOT, fixture_path
from diligence_harness import schema
from diligence_harness.authprobe import run_authprobe
from diligence_harness.mockserver import MockConfig, MockServerThread
from diligence_harness.netprobe import probe

API_KEY = "sk-test-0123456789abcdef"
UPLOAD_TOKEN = "tok-upload-9876543210"


def harness(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=HARNESS_ROOT)
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def run_bundle(tmp_path_factory):
    import http.server
    import threading

    from test_bundle_upload import _Scripted  # the scripted upload receiver

    out = tmp_path_factory.mktemp("run") / "bundle.json"
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    _Scripted.script, _Scripted.seen = [(500, {}), (201, {})], []
    config = MockConfig(ttft_ms=15, itl_ms=2, api_key=API_KEY)
    with MockServerThread(config) as mock:
        done = harness(
            "run", "--case", "CASE-12", "--endpoint", mock.url + "/v1", "--model", "mock-model",
            "--api-key", API_KEY, "--nonce", "nonce-abc", "--out", str(out),
            "--upload", f"http://127.0.0.1:{receiver.server_address[1]}/evidence",
            "--token", UPLOAD_TOKEN, "--ladder", "1,2", "--rounds", "2", "--prompt-sets", "short",
            "--max-tokens", "6", "--requests-per-stream", "2", "--min-requests-per-cell", "2",
            "--min-requests-per-level", "0",
            "--warmup-requests", "1", "--calibrate-ladder", "1", "--calibrate-requests-per-stream",
            "1", "--net-count", "3", "--rate-limit-rps", "5",
        )  # fmt: skip
    receiver.shutdown()
    return done, out, list(_Scripted.seen)


def test_run_writes_a_valid_bundle_with_every_step(run_bundle):
    done, out, _seen = run_bundle
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    bundle = json.loads(data)
    jsonschema.Draft202012Validator(schema.load_schema()).validate(bundle)
    assert schema.validate(bundle) == []
    assert {name: s["status"] for name, s in bundle["steps"].items()} == {
        "inventory": "ok",
        "environment": "ok",
        "bench": "ok",
        "loadtest": "ok",
        "calibrate": "ok",
        "netprobe": "ok",
        "authprobe": "ok",
    }
    assert bundle["nonce"] == "nonce-abc" and bundle["case"] == "CASE-12"
    assert bundle["steps"]["bench"]["result"]["backend"] == "python-fallback"
    assert "interpreter" in bundle["steps"]["bench"]["result"]["backend_note"]
    receipt = json.loads(done.stdout)
    assert receipt["sha256"] == hashlib.sha256(data).hexdigest()


def test_raw_events_are_in_the_bundle(run_bundle):
    _done, out, _seen = run_bundle
    loadtest = json.loads(out.read_bytes())["steps"]["loadtest"]["result"]
    assert [(c["round"], c["concurrency"]) for c in loadtest["cells"]] == [
        (1, 1),
        (1, 2),
        (2, 1),
        (2, 2),
    ]
    request = loadtest["cells"][0]["requests"][0]
    assert (
        request["t_sched_ns"] <= request["t_send_ns"] < request["t_hdr_ns"] < request["t_first_ns"]
    )
    assert request["t_first_ns"] <= request["t_last_ns"] <= request["t_end_ns"]
    assert request["osl"] == 6 and request["osl_source"] == "server_usage"
    assert len([c for c in request["chunks"] if c[1]]) == 6
    assert loadtest["workload"]["prompt_sets"]["short"]["set_sha256"]
    assert loadtest["across_rounds"][0]["metrics"]["output_tok_s"]["n"] == 2


def test_secrets_never_appear_and_upload_sent_the_exact_bytes(run_bundle):
    done, out, seen = run_bundle
    data = out.read_bytes()
    assert API_KEY.encode() not in data and UPLOAD_TOKEN.encode() not in data
    assert "[REDACTED]" in json.loads(data)["command_line"]
    assert [h["Authorization"] for h, _ in seen] == [f"Token {UPLOAD_TOKEN}"] * 2
    assert seen[-1][1] == data  # retried once after the 500, then accepted
    assert json.loads(done.stdout)["upload"]["outcome"] == "uploaded"


def test_run_records_calibration_and_auth_findings(run_bundle):
    _done, out, _seen = run_bundle
    bundle = json.loads(out.read_bytes())
    level = bundle["steps"]["calibrate"]["result"]["levels"][0]
    assert level["concurrency"] == 1 and level["matched_requests"] == level["requests"]
    assert bundle["steps"]["authprobe"]["result"]["statuses"] == {
        "no_token": 401,
        "wrong_token": 401,
        "valid_token": 200,
    }
    # The mock declares no rate limit of its own, so the declared 5 req/s is not enforced.
    auth = [f["id"] for f in bundle["findings"] if f["step"] == "authprobe"]
    assert auth == ["AUTH-RATE-LIMIT"]


def test_run_without_inputs_skips_with_reasons(tmp_path):
    out = tmp_path / "b.json"
    # An SLO asks for the rate search too; without an endpoint it is skipped, with its reason.
    done = harness("run", "--skip", "bench,calibrate", "--slo-ttft-ms", "500", "--out", str(out))
    assert done.returncode == 0, done.stderr
    steps = json.loads(out.read_bytes())["steps"]
    for name in ("loadtest", "ratesearch"):
        assert steps[name] == steps[name] | {
            "status": "skipped",
            "reason": "no --endpoint and --model given",
        }
    assert steps["authprobe"]["reason"] == "no --endpoint given"
    assert steps["bench"]["reason"] == "--skip bench"
    assert validate_cli(out).returncode == 0


def validate_cli(path) -> subprocess.CompletedProcess:
    return harness("validate", str(path))


def test_inventory_from_captured_files(tmp_path):
    out = tmp_path / "inv.json"
    xml = fixture_path("nvidia-smi", "a100-sxm4-80gb-mig-1x-v12.xml")
    topo = fixture_path("constructed", "topo-m-4x-a100.txt")
    done = harness("inventory", "--nvidia-smi-xml", xml, "--topo", topo, "--out", str(out))
    assert done.returncode == 0, done.stderr
    bundle = json.loads(out.read_bytes())
    artifact = next(a for a in bundle["artifacts"] if a["name"].endswith(".xml"))
    with open(xml, "rb") as handle:
        assert artifact["sha256"] == hashlib.sha256(handle.read()).hexdigest()
    inventory = bundle["steps"]["inventory"]["result"]
    assert inventory["gpus"][0]["nvml"]["mig_mode_current"] == "Enabled"
    assert inventory["topology"]["matrix"]["GPU1"]["GPU2"] == "NV12"
    assert {"INV-MIG", "INV-ATTACHED"} <= {f["id"] for f in bundle["findings"]}


def test_authprobe_flags_an_open_endpoint_and_sees_rate_limits():
    with MockServerThread(MockConfig()) as open_mock:
        _result, findings = run_authprobe(open_mock.url, None, None)
    assert {f["id"] for f in findings} == {"AUTH-NO-TOKEN", "AUTH-WRONG-TOKEN"}
    with MockServerThread(MockConfig(api_key=API_KEY, rate_limit_rps=2)) as limited:
        result, findings = run_authprobe(limited.url, API_KEY, 2)
    assert result["rate_limit"]["requests"] == 9
    assert result["rate_limit"]["status_counts"]["429"] >= 1
    assert findings == []


def test_netprobe_measures_rtt_and_loss():
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        reachable = probe("127.0.0.1", port, count=5, interval_s=0.01)
    assert reachable["loss"] == 0 and len(reachable["rtt_ms_raw"]) == 5
    assert reachable["rtt_ms"]["mean"] < 50
    closed = probe("127.0.0.1", port, count=3, interval_s=0.01, timeout_s=0.5)
    assert closed["loss"] == 1.0 and closed["errors"]

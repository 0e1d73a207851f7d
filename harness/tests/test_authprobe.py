"""The endpoint security probe against the loopback mock answering right and wrong.

Each probe is recorded with what was sent, the status answered and the status
expected; a probe the operator gave no input for is recorded as not run.
"""

import json
import os
import subprocess
import sys

from conftest import HARNESS_ROOT
from diligence_harness import schema
from diligence_harness.authprobe import run_authprobe
from diligence_harness.mockserver import MockConfig, MockServerThread

API_KEY = "sk-test-right-0123456789"
FORBIDDEN = "sk-test-other-model-9876543210"


def _probes(result: dict) -> dict:
    return {p["probe"]: p for p in result["probes"]}


def test_an_endpoint_that_refuses_what_it_must():
    config = MockConfig(api_key=API_KEY, forbidden_key=FORBIDDEN, rate_limit_rps=2)
    with MockServerThread(config) as mock:
        result, findings = run_authprobe(
            mock.url, API_KEY, 2, forbidden_token=FORBIDDEN, model="mock-model"
        )
    probes = _probes(result)
    assert findings == []
    assert {name: (p["status"], p["expected"]) for name, p in probes.items()} == {
        "no_token": (401, 401),
        "wrong_token": (401, 401),
        "forbidden_token": (403, 403),
        "rate_limit": (429, 429),
    }
    assert all(p["ran"] for p in probes.values())
    assert probes["no_token"]["sent"] == "GET /v1/models without a token"
    assert "mock-model" in probes["forbidden_token"]["sent"]
    assert probes["rate_limit"]["requests"] == 9
    assert probes["rate_limit"]["status_counts"]["429"] >= 1
    assert result["statuses"]["forbidden_token"] == 403


def test_an_endpoint_that_answers_wrong():
    """Open to a request without a token, serving the forbidden token, with no rate limit."""
    config = MockConfig(
        api_key=API_KEY, forbidden_key=FORBIDDEN, forbidden_allowed=True, unauthenticated_status=200
    )
    with MockServerThread(config) as mock:
        result, findings = run_authprobe(mock.url, API_KEY, 2, forbidden_token=FORBIDDEN)
    probes = _probes(result)
    assert probes["no_token"]["status"] == 200
    assert probes["wrong_token"]["status"] == 200
    assert probes["forbidden_token"]["status"] == 200
    assert probes["rate_limit"]["status"] is None
    assert probes["rate_limit"]["status_counts"] == {"200": 9}
    assert [f["id"] for f in findings] == [
        "AUTH-NO-TOKEN",
        "AUTH-WRONG-TOKEN",
        "AUTH-FORBIDDEN-TOKEN",
        "AUTH-RATE-LIMIT",
    ]


def test_a_wrong_refusal_status_is_recorded_as_answered():
    with MockServerThread(MockConfig(api_key=API_KEY, unauthenticated_status=404)) as mock:
        result, findings = run_authprobe(mock.url, API_KEY, None)
    assert _probes(result)["no_token"]["status"] == 404
    assert {f["id"] for f in findings} == {"AUTH-NO-TOKEN", "AUTH-WRONG-TOKEN"}


def test_probes_without_their_input_are_recorded_as_not_run():
    with MockServerThread(MockConfig(api_key=API_KEY)) as mock:
        result, findings = run_authprobe(mock.url, API_KEY, None)
    probes = _probes(result)
    assert probes["forbidden_token"] == probes["forbidden_token"] | {
        "ran": False,
        "status": None,
        "expected": 403,
        "reason": "no such token supplied",
    }
    assert probes["rate_limit"]["ran"] is False
    assert probes["rate_limit"]["reason"] == "no rate limit declared"
    assert result["rate_limit"] is None and "forbidden_token" not in result["statuses"]
    assert findings == []


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", *args],
        env={**os.environ, "PYTHONPATH": str(HARNESS_ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_authprobe_command_takes_the_forbidden_token_from_the_environment(tmp_path):
    out = tmp_path / "auth.json"
    config = MockConfig(api_key=API_KEY, forbidden_key=FORBIDDEN, rate_limit_rps=2)
    with MockServerThread(config) as mock:
        done = _cli(
            "authprobe", "--endpoint", mock.url, "--api-key", API_KEY,
            "--rate-limit-rps", "2", "--out", str(out),
            env={"DILIGENCE_FORBIDDEN_TOKEN": FORBIDDEN},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    assert FORBIDDEN.encode() not in data and API_KEY.encode() not in data
    bundle = json.loads(data)
    assert schema.validate(bundle) == []
    probes = _probes(bundle["steps"]["authprobe"]["result"])
    assert probes["forbidden_token"]["status"] == 403
    assert probes["rate_limit"]["status"] == 429


def test_the_mock_server_command_refuses_the_forbidden_key():
    import socket
    import urllib.error
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "diligence_harness", "mock-server", "--port", str(port)]
        + ["--api-key", API_KEY, "--forbidden-key", FORBIDDEN, "--max-seconds", "60"],
        env={**os.environ, "PYTHONPATH": str(HARNESS_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        process.stdout.readline()  # listening
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/models", headers={"Authorization": f"Bearer {FORBIDDEN}"}
        )
        try:
            urllib.request.urlopen(request, timeout=10)
            status = 200
        except urllib.error.HTTPError as error:
            status = error.code
        assert status == 403
    finally:
        process.terminate()
        process.wait(timeout=10)

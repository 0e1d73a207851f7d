"""Bundle assembly, redaction, digests, schema validation and the upload retries."""

import base64
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading

import jsonschema
import pytest
from conftest import HARNESS_ROOT
from diligence_harness import schema
from diligence_harness.bundle import (
    assemble,
    make_artifact,
    redact_argv,
    serialise,
)
from diligence_harness.upload import upload_bundle, verdict_lines

TOKEN = "upl-0123456789abcdef"
API_KEY = "sk-live-abcdefghijklmnop"


def _bundle(artifacts=None, findings=None) -> dict:
    return assemble(
        steps={},
        findings=findings or [],
        artifacts=artifacts or [],
        argv=["/somewhere/diligence-harness", "run", "--token", TOKEN, f"--api-key={API_KEY}"],
        seeds={"workload": 1},
        case="CASE-7",
        nonce="n-42",
        started_utc="2026-01-01T00:00:00.000Z",
    )


def test_command_line_secrets_are_redacted():
    argv = [
        "x",
        "--token",
        TOKEN,
        f"--api-key={API_KEY}",
        "--upload",
        "https://u:p@h/x?token=abc&a=1",
    ]
    assert redact_argv(argv) == [
        "diligence-harness",
        "--token",
        "[REDACTED]",
        "--api-key=[REDACTED]",
        "--upload",
        "https://[REDACTED]@h/x?token=[REDACTED]&a=1",
    ]


def test_secrets_never_reach_the_bytes_and_digests_recheck():
    echoed = make_artifact(
        "server-echo.txt", f"Authorization: Bearer {API_KEY}\n", "text/plain", [API_KEY]
    )
    binary = make_artifact(
        "blob.bin", b"\x00\x01" + TOKEN.encode(), "application/octet-stream", [TOKEN]
    )
    document = _bundle([echoed, binary])
    data = serialise(document, [TOKEN, API_KEY])
    assert TOKEN.encode() not in data and API_KEY.encode() not in data
    parsed = json.loads(data)
    for artifact in parsed["artifacts"]:
        raw = (
            artifact["content"].encode()
            if artifact["encoding"] == "utf-8"
            else base64.b64decode(artifact["content"])
        )
        assert (
            hashlib.sha256(raw).hexdigest() == artifact["sha256"] and len(raw) == artifact["size"]
        )
    assert [m["name"] for m in parsed["manifest"]["artifacts"]] == ["server-echo.txt", "blob.bin"]
    assert parsed["nonce"] == "n-42" and parsed["case"] == "CASE-7"


def test_short_secrets_are_replaced_only_as_whole_values():
    document = _bundle()
    document["steps"]["loadtest"] = {"status": "ok", "note": "abc", "flag": "--max-tokens"}
    parsed = json.loads(serialise(document, ["abc", "tok"]))
    assert parsed["steps"]["loadtest"]["note"] == "[REDACTED]"
    assert parsed["steps"]["loadtest"]["flag"] == "--max-tokens"  # not "--max-[REDACTED]ens"


def test_both_validators_accept_a_bundle_and_reject_a_broken_one():
    document = json.loads(serialise(_bundle(), []))
    published = schema.load_schema()
    jsonschema.Draft202012Validator.check_schema(published)
    jsonschema.Draft202012Validator(published).validate(document)
    assert schema.validate(document) == []
    broken = dict(document, format_version="other/9", host_id="nope")
    del broken["manifest"]
    errors = schema.validate(broken)
    assert any("manifest" in e for e in errors)
    assert any("format_version" in e for e in errors)
    assert any("host_id" in e for e in errors)
    assert list(jsonschema.Draft202012Validator(published).iter_errors(broken))


def _schema_keywords(node, found: set) -> set:
    """Every keyword used anywhere in a schema (names under properties/$defs are not)."""
    if isinstance(node, list):
        for item in node:
            _schema_keywords(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for child in value.values():
                    _schema_keywords(child, found)
            elif key not in ("enum", "const", "required", "examples", "default"):
                _schema_keywords(value, found)
    return found


def test_minimal_validator_covers_every_keyword_the_schema_uses():
    assert _schema_keywords(schema.load_schema(), set()) <= schema.SUPPORTED_KEYWORDS


class _Scripted(http.server.BaseHTTPRequestHandler):
    script: list = []
    seen: list = []
    polls: list = []  # (status, body) answered to each GET of a status URL, in order

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).seen.append((dict(self.headers), body))
        status, headers, *answer = type(self).script.pop(0)
        self._answer(status, headers, answer[0] if answer else b"{}")

    def do_GET(self):
        type(self).seen.append((dict(self.headers), self.path))
        status, body = type(self).polls.pop(0)
        self._answer(status, {}, json.dumps(body).encode())

    def _answer(self, status, headers, body: bytes):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def upload_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Scripted.seen, _Scripted.polls = [], []
    yield server, f"http://127.0.0.1:{server.server_address[1]}/api/evidence/"
    server.shutdown()


def test_upload_retries_5xx_and_429_then_succeeds(upload_server):
    _server, url = upload_server
    _Scripted.script = [(503, {}), (429, {"Retry-After": "0"}), (201, {})]
    sleeps = []
    receipt = upload_bundle(
        url, b'{"a":1}', TOKEN, attempts=5, base_delay_s=0.01, sleep=sleeps.append
    )
    assert receipt["outcome"] == "uploaded" and receipt["http_status"] == 201
    assert [a["status"] for a in receipt["attempts"]] == [503, 429, 201]
    assert len(sleeps) == 2 and sleeps[1] > 0  # exponential: the second wait is the longer
    headers, body = _Scripted.seen[-1]
    assert body == b'{"a":1}'
    assert headers["Authorization"] == f"Token {TOKEN}"
    assert headers["Content-Type"] == "application/json"
    assert receipt["bundle_sha256"] == hashlib.sha256(body).hexdigest()


def test_upload_does_not_retry_4xx(upload_server):
    _server, url = upload_server
    _Scripted.script = [(401, {}), (201, {})]
    receipt = upload_bundle(url, b"{}", TOKEN, attempts=5, base_delay_s=0.01, sleep=lambda s: None)
    assert receipt["outcome"] == "rejected" and len(receipt["attempts"]) == 1


def test_upload_retries_connection_errors_then_gives_up():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: connections are refused
    sleeps = []
    receipt = upload_bundle(
        f"http://127.0.0.1:{port}/",
        b"{}",
        TOKEN,
        attempts=3,
        base_delay_s=0.01,
        sleep=sleeps.append,
    )
    assert receipt["outcome"] == "failed" and len(receipt["attempts"]) == 3 and len(sleeps) == 2
    assert all(a["status"] is None for a in receipt["attempts"])


ACCEPTED = (202, {"Location": "/api/v1/evidence/uploads/7/"}, b'{"id": 7, "state": "received"}')


def test_a_202_is_polled_until_the_server_has_verified_the_bundle(upload_server):
    _server, url = upload_server
    _Scripted.script = [ACCEPTED]
    _Scripted.polls = [
        (200, {"state": "received"}),
        (503, {}),  # the server restarting between polls: ask again
        (200, {"state": "verified", "bundle": 12, "verdict": "findings", "detail": ""}),
    ]
    sleeps = []
    receipt = upload_bundle(url, b"{}", TOKEN, base_delay_s=0.01, sleep=sleeps.append)
    assert receipt["outcome"] == "uploaded" and receipt["http_status"] == 202
    status_url = url.split("/api/")[0] + "/api/v1/evidence/uploads/7/"
    assert receipt["upload"] == {
        "state": "verified",
        "status_url": status_url,
        "bundle": 12,
        "verdict": "findings",
    }
    polls = [seen for seen in _Scripted.seen if seen[1] == "/api/v1/evidence/uploads/7/"]
    assert len(polls) == 3 and all(h["Authorization"] == f"Token {TOKEN}" for h, _ in polls)
    assert sleeps == sorted(sleeps) and len(sleeps) == 2  # backing off between polls


def test_a_bundle_the_server_refuses_after_202_is_rejected_with_its_reason(upload_server):
    _server, url = upload_server
    _Scripted.script = [ACCEPTED]
    refused = {"state": "refused", "detail": "The bundle's nonce was not issued", "field": "nonce"}
    _Scripted.polls = [(200, refused)]
    receipt = upload_bundle(url, b"{}", TOKEN, sleep=lambda s: None)
    assert receipt["outcome"] == "rejected" and len(receipt["attempts"]) == 1
    assert receipt["upload"]["detail"] == refused["detail"]
    assert receipt["upload"]["field"] == "nonce"


def test_a_server_that_failed_to_read_the_bundle_is_sent_it_again(upload_server):
    _server, url = upload_server
    _Scripted.script = [ACCEPTED, ACCEPTED]
    _Scripted.polls = [(200, {"state": "failed"}), (200, {"state": "verified", "bundle": 3})]
    receipt = upload_bundle(url, b"{}", TOKEN, base_delay_s=0.01, sleep=lambda s: None)
    assert receipt["outcome"] == "uploaded"
    assert [a["status"] for a in receipt["attempts"]] == [202, 202]


def test_no_verdict_within_the_wait_is_pending_with_the_status_url(upload_server):
    _server, url = upload_server
    _Scripted.script = [ACCEPTED]
    _Scripted.polls = [(200, {"state": "received"})] * 3
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    receipt = upload_bundle(url, b"{}", TOKEN, wait_s=0.5, sleep=sleep, clock=lambda: now[0])
    assert receipt["outcome"] == "pending"
    assert receipt["upload"]["state"] == "received"
    assert receipt["upload"]["status_url"].endswith("/api/v1/evidence/uploads/7/")
    assert now[0] == pytest.approx(0.5)  # waited exactly as long as asked, no longer


def test_a_token_that_expires_while_waiting_leaves_the_upload_pending_with_the_reason(
    upload_server,
):
    _server, url = upload_server
    _Scripted.script = [ACCEPTED]
    expired = {"detail": "This harness token expired at 2026-12-01 10:00 UTC; ask for a new one."}
    _Scripted.polls = [(200, {"state": "received"}), (403, expired)]
    receipt = upload_bundle(url, b"{}", TOKEN, sleep=lambda s: None)
    assert receipt["outcome"] == "pending" and len(receipt["attempts"]) == 1  # not sent again
    assert receipt["upload"]["state"] == "unknown"
    assert receipt["upload"]["poll_error"] == "HTTP 403: " + expired["detail"]
    assert receipt["upload"]["status_url"].endswith("/api/v1/evidence/uploads/7/")


VERIFIED = {
    "state": "verified",
    "bundle": 12,
    "verdict": "failed",
    "evidence_url": "http://app.example/evidence/12/",
}


def _upload_command(url: str, bundle_path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=HARNESS_ROOT)
    command = [sys.executable, "-m", "diligence_harness", "upload", str(bundle_path)]
    command += ["--upload", url, "--token", TOKEN, *extra]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


def test_after_a_202_the_upload_command_prints_the_verdict_and_the_evidence_page(
    upload_server, tmp_path
):
    _server, url = upload_server
    bundle_path = tmp_path / "bundle.json"
    bundle_path.write_bytes(b'{"a": 1}')
    _Scripted.script = [ACCEPTED]
    _Scripted.polls = [(200, {"state": "received"}), (200, VERIFIED)]
    done = _upload_command(url, bundle_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-2:] == [
        "[diligence-harness] verdict: failed",
        "[diligence-harness] evidence page: http://app.example/evidence/12/",
    ]
    assert json.loads(done.stdout)["upload"]["evidence_url"] == VERIFIED["evidence_url"]


def test_when_the_wait_runs_out_the_upload_command_prints_the_status_url(upload_server, tmp_path):
    _server, url = upload_server
    bundle_path = tmp_path / "bundle.json"
    bundle_path.write_bytes(b'{"a": 1}')
    _Scripted.script = [ACCEPTED]
    _Scripted.polls = [(200, {"state": "received"})] * 20
    done = _upload_command(url, bundle_path, "--upload-wait-s", "0.3")
    assert done.returncode == 4
    status_url = url.split("/api/")[0] + "/api/v1/evidence/uploads/7/"
    assert done.stderr.splitlines()[-1] == (
        f"[diligence-harness] no verdict within 0.3 s; the upload's status: {status_url}"
    )


@pytest.mark.parametrize(
    "receipt,lines",
    [
        (
            {"outcome": "uploaded", "upload": VERIFIED},
            ["verdict: failed", "evidence page: http://app.example/evidence/12/"],
        ),
        (
            # A server that answers 201 at once: the body is the bundle.
            {"outcome": "uploaded", "upload": {"state": "verified", "verdict": "verified"}},
            ["verdict: verified"],
        ),
        (
            {"outcome": "pending", "upload": {"state": "received", "status_url": "http://s/u/7/"}},
            ["no verdict within 600 s; the upload's status: http://s/u/7/"],
        ),
        (
            {
                "outcome": "pending",
                "upload": {
                    "state": "unknown",
                    "status_url": "http://s/u/7/",
                    "poll_error": "HTTP 403",
                },
            },
            [
                "the server would not say how it stands (HTTP 403); the upload's status: http://s/u/7/"
            ],
        ),
        (
            {"outcome": "pending", "http_status": 202, "attempts": [{}]},
            ["no verdict within 600 s; the case's evidence page will show the upload"],
        ),
        (
            {"outcome": "rejected", "http_status": 400, "response_body": '{"detail": "Bad nonce"}'},
            ["upload refused (HTTP 400): Bad nonce"],
        ),
        (
            {"outcome": "rejected", "http_status": 202, "upload": {"detail": "Not the schema"}},
            ["upload refused (HTTP 202): Not the schema"],
        ),
        (
            {"outcome": "failed", "attempts": [{}, {}, {}]},
            ["upload failed after 3 attempts; the bundle is kept"],
        ),
    ],
)
def test_verdict_lines(receipt, lines):
    assert verdict_lines(receipt, 600.0) == lines


def test_a_201_answer_keeps_the_bundles_verdict_and_page(upload_server):
    _server, url = upload_server
    answer = {"id": 5, "verdict": "verified", "evidence_url": "http://app.example/evidence/5/"}
    _Scripted.script = [(201, {}, json.dumps(answer).encode())]
    receipt = upload_bundle(url, b"{}", TOKEN, sleep=lambda s: None)
    assert receipt["upload"] == {
        "state": "verified",
        "bundle": 5,
        "verdict": "verified",
        "evidence_url": "http://app.example/evidence/5/",
    }

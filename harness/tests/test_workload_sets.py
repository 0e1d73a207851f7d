"""The case's own workload sets in the harness: read in a stream, checked line by line,
fetched with the harness token, used by the load test and the correctness step, and
recorded in the bundle by digest, never by text."""

import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading

import pytest
from conftest import HARNESS_ROOT
from diligence_harness import schema
from diligence_harness.mockinject import Injections, sample_answers
from diligence_harness.mockserver import MockConfig, MockServerThread
from diligence_harness.workload_sets import (
    SetFileError,
    fetch_set,
    read_prompt_set,
    read_sample_set,
    sets_url,
)
from setfiles import jsonl, prompt_lines, sample_lines

SMALL = [
    *("--model", "m", "--ladder", "1", "--rounds", "1", "--max-tokens", "6"),
    *("--min-requests-per-level", "0", "--requests-per-stream", "2"),
    *("--min-requests-per-cell", "2", "--warmup-requests", "1"),
]


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "diligence_harness", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=HARNESS_ROOT),
        timeout=120,
    )


@pytest.fixture
def prompt_file(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_bytes(jsonl(prompt_lines(per_tier=200)))
    return path


@pytest.fixture
def sample_file(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_bytes(jsonl(sample_lines(50)))
    return path


def test_a_prompt_set_is_read_by_tier_with_the_digest_of_its_bytes(prompt_file):
    read = read_prompt_set(str(prompt_file))
    assert read.sha256 == hashlib.sha256(prompt_file.read_bytes()).hexdigest()
    assert read.count == 600
    assert {tier: len(p) for tier, p in read.tiers.items()} == {
        "short": 200,
        "medium": 200,
        "long": 200,
    }
    assert read.tiers["long"][3].startswith("Customer ticket long 3:")
    assert read.describe() == {
        "source": "file",
        "name": "prompts.jsonl",
        "sha256": read.sha256,
        "count": 600,
        "tiers": {"short": 200, "medium": 200, "long": 200},
    }


@pytest.mark.parametrize(
    "raw, found",
    [
        (b'{"id": "a", "prompt": "x"}\n{"id": "b", "prompt":\n', "line 2: not valid JSON"),
        (b'{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\n', "line 2: duplicate id"),
        (b'{"id": "a", "prompt": "x", "tier": "huge"}\n', "line 1: unknown tier 'huge'"),
        (b'{"id": "a", "prompt": "\xff"}\n', "line 1: not UTF-8 text"),
        (b'{"id": "a"}\n', "line 1: 'prompt' must be non-empty text"),
        (b"\n", "the set holds no prompt"),
    ],
)
def test_a_bad_prompt_set_is_refused_before_anything_is_sent(tmp_path, raw, found):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(raw)
    with pytest.raises(SetFileError, match=found):
        read_prompt_set(str(path))


def test_a_sample_set_becomes_correctness_inputs_with_their_digests(sample_file):
    read = read_sample_set(str(sample_file))
    assert read.count == 50
    first = read.items[0]
    assert first["messages"] == [
        {"role": "user", "content": "Question 0: reply with the expected value only."}
    ]
    assert first["comparison"] == {"kind": "exact"} and len(first["input_sha256"]) == 64
    bad = sample_file.parent / "bad.jsonl"
    bad.write_bytes(
        b'{"id": "a", "input": "x", "expected": "y", "comparison": {"kind": "fuzzy"}}\n'
    )
    with pytest.raises(SetFileError, match="line 1: 'comparison'"):
        read_sample_set(str(bad))


def test_the_load_test_and_the_correctness_run_use_the_files_and_record_their_digests(
    prompt_file, sample_file, tmp_path
):
    out = tmp_path / "bundle.json"
    config = MockConfig(
        ttft_ms=2, itl_ms=1, injections=Injections(answers=sample_answers(str(sample_file)))
    )
    with MockServerThread(config) as mock:
        done = harness(
            "run", "--endpoint", mock.url + "/v1", "--prompt-set", str(prompt_file),
            "--sample-set", str(sample_file), "--skip", "calibrate,bench,netprobe,authprobe",
            "--no-alloc-probe", "--out", str(out), *SMALL,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    bundle = json.loads(out.read_bytes())
    assert schema.validate(bundle) == []
    used = bundle["workload_sets"]
    assert used["prompt_set"]["sha256"] == hashlib.sha256(prompt_file.read_bytes()).hexdigest()
    assert used["sample_set"]["sha256"] == hashlib.sha256(sample_file.read_bytes()).hexdigest()
    cells = bundle["steps"]["loadtest"]["result"]["cells"]
    assert [c["prompt_set"] for c in cells] == ["short", "medium", "long"]
    summary = bundle["steps"]["correctness"]["result"]["summary"]
    assert (summary["passed"], summary["total"], summary["core_total"]) == (50, 50, 45)
    assert "Customer ticket" not in out.read_text()  # no prompt text in the bundle


def test_answers_that_differ_fail_by_the_sets_own_comparisons(sample_file, tmp_path):
    out = tmp_path / "c.json"
    with MockServerThread(MockConfig(ttft_ms=1, itl_ms=1)) as mock:  # answers nothing right
        done = harness(
            "correctness", "--endpoint", mock.url + "/v1", "--model", "m",
            "--sample-set", str(sample_file), "--out", str(out),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_bytes())["steps"]["correctness"]["result"]
    assert result["summary"]["passed"] == 0
    assert {i["comparison"]["kind"] for i in result["items"]} == {
        "exact",
        "identical",
        "numeric",
        "json",
    }


class _SetServer(http.server.BaseHTTPRequestHandler):
    body = b""
    stated = ""
    seen: list = []

    def do_GET(self):
        type(self).seen.append((self.path, self.headers.get("Authorization")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Disposition", 'attachment; filename="tickets-v2.jsonl"')
        self.send_header("X-Content-SHA256", type(self).stated)
        self.send_header("Content-Length", str(len(type(self).body)))
        self.end_headers()
        self.wfile.write(type(self).body)

    def log_message(self, *args):
        pass


@pytest.fixture
def set_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SetServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_case_set_is_fetched_with_the_token_and_checked_by_its_digest(set_server, tmp_path):
    raw = jsonl(prompt_lines(per_tier=2))
    _SetServer.body, _SetServer.stated, _SetServer.seen = raw, hashlib.sha256(raw).hexdigest(), []
    base = set_server + "/api/v1/harness/sets/"
    path, digest, name = fetch_set(base, "dlh_secret", "prompts", None, str(tmp_path))
    with open(path, "rb") as handle:
        assert handle.read() == raw and digest == _SetServer.stated
    assert name == "tickets-v2.jsonl"
    assert _SetServer.seen == [("/api/v1/harness/sets/?kind=prompts", "Token dlh_secret")]
    _SetServer.stated = "0" * 64  # the bytes are not the set the server named
    with pytest.raises(SetFileError, match="hashes to"):
        fetch_set(base, "dlh_secret", "prompts", None, str(tmp_path))
    assert os.listdir(tmp_path) == [os.path.basename(path)]  # the bad copy is removed


def test_the_sets_url_sits_beside_the_upload_url():
    class Args:
        sets_url = None
        upload = "https://diligence.example/api/v1/evidence/"

    assert sets_url(Args) == "https://diligence.example/api/v1/harness/sets/"


def test_fetching_the_case_set_needs_a_token(tmp_path):
    done = harness(
        "run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--prompt-set", "case",
        "--out", str(tmp_path / "b.json"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "needs --token and --upload" in done.stderr
    assert not (tmp_path / "b.json").exists()

"""Evidence fixtures: one real CPU bundle per session, made by the harness itself."""

import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from apps.evidence import tasks

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "harness"
FIXTURES = HARNESS / "tests" / "fixtures" / "nvidia-smi"
if str(HARNESS) not in sys.path:
    sys.path.insert(0, str(HARNESS))  # the harness is the test oracle, never the server's code


def harness_env() -> dict:
    return {**os.environ, "PYTHONPATH": str(HARNESS)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def harness_mock(*, max_seconds: int):
    """The harness's own loopback OpenAI-compatible mock, in a separate process; it stops
    by itself after ``max_seconds`` should the tests die without stopping it."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "diligence_harness", "mock-server", "--port", str(port)]
        + ["--ttft-ms", "15", "--itl-ms", "1", "--max-seconds", str(max_seconds)],
        env=harness_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        process.stdout.readline()  # {"event": "listening", ...}
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def mock_endpoint():
    """The mock for the whole test session: it lives as long as the session (a long run
    reaches its last user hours after its first)."""
    with harness_mock(max_seconds=21600) as endpoint:
        yield endpoint


def run_harness(endpoint: str, out: Path, *extra: str, xml: str = "rtx-4090-1x-v12.xml"):
    """A small CPU run: two ladder levels, two rounds, one prompt set, quick benchmarks."""
    command = [sys.executable, "-m", "diligence_harness", "run", "--case", "1"]
    command += ["--endpoint", endpoint, "--model", "mock", "--ladder", "1,2", "--rounds", "2"]
    command += ["--prompt-sets", "short", "--max-tokens", "16", "--requests-per-stream", "2"]
    command += ["--min-requests-per-cell", "4", "--warmup-requests", "1", "--quick"]
    command += ["--min-requests-per-level", "0"]  # small on purpose: levels stay unmeasured
    command += ["--bench-rounds", "2", "--sustained-s", "0.2", "--skip", "calibrate"]
    command += ["--net-count", "3", "--no-alloc-probe", "--nvidia-smi-xml", str(FIXTURES / xml)]
    command += ["--out", str(out), *extra]
    return subprocess.run(command, env=harness_env(), capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="session")
def cpu_bundle(mock_endpoint, tmp_path_factory) -> dict:
    """The document of one real bundle (RTX 4090 inventory from a real capture)."""
    out = tmp_path_factory.mktemp("bundle") / "bundle.json"
    result = run_harness(mock_endpoint, out, "--nonce", "placeholder")
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(out.read_bytes())


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def worker(monkeypatch, django_capture_on_commit_callbacks):
    """Celery as in production: ``delay`` queues the message; ``run()`` is the worker."""
    conf = tasks.verify_upload_task.app.conf
    eager, conf.task_always_eager = conf.task_always_eager, False
    queued = []
    monkeypatch.setattr(tasks.verify_upload_task, "delay", lambda pk: queued.append(pk))

    class Worker:
        def run(self):
            done = [tasks.verify_upload_task.apply(args=(pk,)).get() for pk in queued]
            queued.clear()
            return done

    Worker.queued = queued
    yield Worker()
    conf.task_always_eager = eager

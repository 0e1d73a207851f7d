"""benchmarks/load.py, the load benchmark (not a test itself): its committed results render,
and a run of a few people for two seconds serves them all without a server error."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import demo_snapshot

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "load.py"
RESULTS = ROOT / "benchmarks" / "results" / "load.json"


def _run(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_committed_results_render_with_their_command_lines(tmp_path):
    shutil.copy(RESULTS, tmp_path / "load.json")
    done = _run("--render-only", "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "load.md").read_text(encoding="utf-8")
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert set(results) == {"postgres", "sqlite"}
    for run in results.values():
        assert f"## {run['label']}" in text
        assert run["command"] in text
        assert run["users"] == 200 and run["duration_s"] == 60
        assert run["rows"]["all"]["requests"] > 0


@pytest.mark.whole_case  # serves the demo from a server of its own
def test_a_short_run_serves_every_request_without_a_server_error(tmp_path):
    # The demo as this test run seeded it once (tests/demo_snapshot.py), not seeded again.
    database, media = demo_snapshot.seeded_files()
    done = _run(
        "--config", "sqlite", "--users", "5", "--duration", "2", "--think", "0.2",
        "--output-dir", str(tmp_path), "--from-database", str(database),
        "--from-media", str(media),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads((tmp_path / "load.json").read_text(encoding="utf-8"))["sqlite"]
    everything = run["rows"]["all"]
    assert everything["requests"] >= 5
    assert everything["server_errors"] == 0 and everything["no_answer"] == 0
    assert run["refused_while_preparing"] == []
    assert "**Server errors: 0** (target 0: met)" in (tmp_path / "load.md").read_text()

"""benchmarks/harness_accuracy.py: the committed results render, and a short run records
the conditions it ran under (the repository's benchmark script, not part of the package)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "benchmarks", "harness_accuracy.py")
RESULTS = os.path.join(REPO, "benchmarks", "results", "harness_accuracy.json")

pytestmark = pytest.mark.skipif(not os.path.exists(SCRIPT), reason="not in a checkout")


def _run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=timeout
    )


def test_committed_results_render_with_their_conditions(tmp_path):
    shutil.copy(RESULTS, tmp_path / "harness_accuracy.json")
    done = _run("--render-only", "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "harness_accuracy.md").read_text(encoding="utf-8")
    result = json.loads((tmp_path / "harness_accuracy.json").read_text(encoding="utf-8"))
    assert result["levels"] == [1, 8, 32, 128, 256]
    for mode in result["modes"]:
        assert f"## Client mode: {mode['name']}" in text
        assert len(mode["conditions_per_repeat"]) == result["repeats"]
        for condition in mode["conditions_per_repeat"]:
            assert {"client", "mock"} <= condition["scheduling"].keys()
            assert len(condition["load_average"]) == 3
    assert "Scheduling in force (read back from the OS)" in text
    for line in result["verdict_lines"]:
        assert line in text


@pytest.mark.whole_case
def test_a_short_run_records_levels_scheduling_and_load(tmp_path):
    done = _run("--quick", "--requests-per-stream", "1", "--output-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "harness_accuracy.json").read_text(encoding="utf-8"))
    (mode,) = result["modes"]
    assert [row["concurrency"] for row in mode["rows"]] == [1, 8, 32, 128, 256]
    assert all(row["errors"] == 0 and row["requests"] >= 4 for row in mode["rows"])
    (condition,) = mode["conditions_per_repeat"]
    assert condition["scheduling"]["mock"]["pid"] != condition["scheduling"]["client"]["pid"]
    assert result["scheduling"]["requested"]["realtime_fifo_priority"] is None
    assert "Verdict" in (tmp_path / "harness_accuracy.md").read_text(encoding="utf-8")

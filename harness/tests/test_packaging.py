"""Standalone: installs offline into an empty venv with nothing else, never pulls in Django,
and runs as a single-file zipapp on a bare Python."""

import json
import os
import subprocess
import sys

import pytest
from conftest import HARNESS_ROOT
from diligence_harness import __version__
from diligence_harness.mockserver import MockConfig, MockServerThread

pytestmark = pytest.mark.whole_case


def _bare_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PIP_NO_INDEX"] = "1"
    return env


def test_pip_install_into_an_empty_venv_works_offline(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", HARNESS_ROOT],
        capture_output=True, text=True, env=_bare_env(), timeout=120,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    version = subprocess.run(
        [str(venv / "bin" / "diligence-harness"), "--version"], capture_output=True, text=True
    )
    assert version.stdout.strip() == f"diligence-harness {__version__}"
    no_django = subprocess.run([str(python), "-c", "import django"], capture_output=True, text=True)
    assert no_django.returncode != 0 and "No module named 'django'" in no_django.stderr
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True
    )
    names = {p["name"] for p in json.loads(listed.stdout)}
    assert names - {"pip", "setuptools"} == {"diligence-harness"}
    # The schema ships inside the installed package.
    code = "from diligence_harness import schema; print(schema.load_schema()['title'])"
    loaded = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, env=_bare_env()
    )
    assert "diligence-evidence/1" in loaded.stdout


def test_zipapp_runs_on_a_bare_python(tmp_path):
    pyz = tmp_path / "diligence-harness.pyz"
    subprocess.run(
        [sys.executable, os.path.join(HARNESS_ROOT, "build_zipapp.py"), "--output", str(pyz)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    bare = [sys.executable, "-I", "-S", str(pyz)]  # isolated, no site-packages at all
    shown = subprocess.run([*bare, "--help"], capture_output=True, text=True, env=_bare_env())
    assert shown.returncode == 0 and "mock-server" in shown.stdout
    out = tmp_path / "mini.json"
    with MockServerThread(MockConfig(ttft_ms=5, itl_ms=1)) as mock:
        run = subprocess.run(
            [*bare, "run", "--endpoint", mock.url, "--model", "m", "--ladder", "1", "--rounds", "1",
             "--prompt-sets", "short", "--max-tokens", "4", "--min-requests-per-cell", "2",
             "--min-requests-per-level", "0",
             "--requests-per-stream", "1", "--warmup-requests", "0", "--skip", "bench,netprobe",
             "--calibrate-ladder", "1", "--calibrate-requests-per-stream", "1", "--out", str(out)],
            capture_output=True, text=True, env=_bare_env(), timeout=120,
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    bundle = json.loads(out.read_bytes())
    assert bundle["harness"]["packaging"] == "zipapp"
    assert bundle["steps"]["loadtest"]["status"] == "ok"
    # calibrate re-launched the zipapp itself as the mock server process
    assert bundle["steps"]["calibrate"]["status"] == "ok", bundle["steps"]["calibrate"]["reason"]
    valid = subprocess.run([*bare, "validate", str(out)], capture_output=True, text=True)
    assert valid.returncode == 0, valid.stdout

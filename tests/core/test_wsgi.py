"""The WSGI entry point loads what it serves before the first request and sets it aside
from the garbage collector."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, sys
import config.wsgi
print(gc.get_freeze_count())
print("apps.casework.views" in sys.modules)
"""


def test_the_application_is_loaded_and_frozen_before_its_first_request():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    frozen, views_loaded = result.stdout.split()
    # The whole of Django and the project: far more than an empty interpreter holds.
    assert int(frozen) > 100_000
    assert views_loaded == "True"

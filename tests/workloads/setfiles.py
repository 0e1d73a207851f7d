"""The harness tests' workload sets (harness/tests/setfiles.py), for the app's tests too."""

import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "harness" / "tests" / "setfiles.py"
_spec = importlib.util.spec_from_file_location("harness_setfiles", _PATH)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

prompt_lines = _module.prompt_lines
sample_lines = _module.sample_lines
jsonl = _module.jsonl

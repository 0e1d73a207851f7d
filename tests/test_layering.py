"""The layers of docs/layers.md, read from the imports themselves (``scripts/import_edges.py``).

Domain apps sit on ``core``; what is about the whole case (``apps.casework``) sits
above them. A domain app never imports that layer, ``core`` imports no other app,
and no import of another app hides inside a function (where it would only dodge a
cycle that the layers are there to prevent).
"""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYER = "casework"

# Imports of another app written inside a function on purpose, each with its reason.
# (path under the repository, imported module): why it waits until it is called.
LAZY_ON_PURPOSE: dict[tuple[str, str], str] = {}

# docs/layers.md asks for at most 80 edges between apps; this bound only ever comes down.
MAX_EDGES = 80


def _edges_module():
    spec = importlib.util.spec_from_file_location("import_edges", ROOT / "scripts/import_edges.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_edges", module)
    spec.loader.exec_module(module)
    return module


edges = _edges_module()
IMPORTS = list(edges.app_imports())


def _where(found) -> str:
    return f"{found.path.relative_to(ROOT)}:{found.line} imports {found.module}"


def test_no_domain_app_imports_the_whole_case_layer():
    offending = [
        _where(found)
        for found in IMPORTS
        if found.target_app == LAYER and found.source_app != LAYER
    ]
    assert not offending, "A domain app imports the whole-case layer:\n" + "\n".join(offending)


def test_core_imports_no_other_app():
    offending = [
        _where(found)
        for found in IMPORTS
        if found.source_app == "core" and found.target_app != "core"
    ]
    assert not offending, "core imports another app:\n" + "\n".join(offending)


def test_no_import_of_another_app_inside_a_function():
    offending = [
        _where(found)
        for found in IMPORTS
        if found.in_function
        and found.source_app != found.target_app
        and (str(found.path.relative_to(ROOT)), found.module) not in LAZY_ON_PURPOSE
    ]
    assert not offending, (
        "Import of another app inside a function (move it to the top of the module; "
        "a cycle it dodges is a layer crossed the wrong way):\n" + "\n".join(offending)
    )


def test_the_apps_are_joined_by_few_edges():
    count = len(edges.app_edges(IMPORTS))
    assert count <= MAX_EDGES, (
        f"{count} edges between apps, above {MAX_EDGES}: run scripts/import_edges.py to see them"
    )

"""Print the app-to-app import edges of the server, read with ``ast``.

An edge is a distinct ordered pair of top-level packages under ``apps/``
(``apps.cases`` -> ``apps.core``), counted once however many modules import
along it. The whole-case layer, ``apps/casework``, counts as one package like
any other. Imports inside functions of another app are listed after the
edges: they are the ones a reader cannot see at the top of the module.

    python scripts/import_edges.py
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "apps"


@dataclass(frozen=True)
class AppImport:
    """One import of another app's module, where it is written."""

    path: Path
    line: int
    source_app: str
    target_app: str
    module: str
    in_function: bool


def app_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "apps":
        return parts[1]
    return None


def _imported_modules(node: ast.Import | ast.ImportFrom, path: Path) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        # A relative import stays inside its own package.
        package = path.relative_to(ROOT).with_suffix("").parts[: -node.level]
        base = ".".join(package)
        return [f"{base}.{node.module}" if node.module else base]
    module = node.module or ""
    if module == "apps":
        return [f"apps.{alias.name}" for alias in node.names]
    return [module]


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: Path, source_app: str) -> None:
        self.path = path
        self.source_app = source_app
        self.depth = 0
        self.found: list[AppImport] = []

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        for module in _imported_modules(node, self.path):
            target = app_of(module)
            if target is None:
                continue
            self.found.append(
                AppImport(
                    path=self.path,
                    line=node.lineno,
                    source_app=self.source_app,
                    target_app=target,
                    module=module,
                    in_function=self.depth > 0,
                )
            )

    visit_Import = _import
    visit_ImportFrom = _import


def app_imports(apps_dir: Path = APPS) -> Iterator[AppImport]:
    """Every import of a module under ``apps/`` written in a module of ``apps/``."""
    for path in sorted(apps_dir.rglob("*.py")):
        relative = path.relative_to(apps_dir)
        if len(relative.parts) < 2 or "migrations" in relative.parts:
            continue
        visitor = _Visitor(path, relative.parts[0])
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        yield from visitor.found


def app_edges(imports: list[AppImport]) -> Counter[tuple[str, str]]:
    """Import statements per ordered pair of different apps."""
    return Counter(
        (found.source_app, found.target_app)
        for found in imports
        if found.source_app != found.target_app
    )


def main() -> int:
    imports = list(app_imports())
    edges = app_edges(imports)
    for (source, target), count in sorted(edges.items()):
        print(f"{source} -> {target}  {count}")
    print(f"edges: {len(edges)}")
    late = [
        found for found in imports if found.in_function and found.source_app != found.target_app
    ]
    print(f"function-level imports of other apps: {len(late)}")
    for found in late:
        print(f"  {found.path.relative_to(ROOT)}:{found.line}  {found.module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

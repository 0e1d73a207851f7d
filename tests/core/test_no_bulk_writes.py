"""Tracked models are never written by queryset update() or bulk writes.

Those calls skip django-simple-history, so an edit made that way would leave
no audit trail. This scans the application code (not tests) for them.
"""

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[2] / "apps"
BULK_METHODS = {"bulk_create", "bulk_update"}
QUERYSET_HINTS = {"objects", "filter", "exclude", "all", "select_for_update", "history"}


def _receiver_names(node: ast.AST) -> set[str]:
    names = set()
    while isinstance(node, ast.Call | ast.Attribute):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
            node = node.value
        else:
            node = node.func
    return names


# A write of fields kept out of the history on purpose (a request's progress, the
# bookkeeping of notices sent) says so on the line above it, with its reason:
# ``# untracked: <why>``.
UNTRACKED = "# untracked:"


def _declared_untracked(text: list[str], line: int) -> bool:
    above = text[line - 2] if line >= 2 else ""
    marker, _, reason = above.strip().partition(UNTRACKED)
    return not marker and bool(reason.strip())


def find_bulk_writes(source: str) -> list[int]:
    lines = []
    text = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method = node.func.attr
        if (
            method in BULK_METHODS
            or method == "update"
            and _receiver_names(node.func.value) & QUERYSET_HINTS
        ) and not (method == "update" and _declared_untracked(text, node.lineno)):
            lines.append(node.lineno)
    return lines


def test_the_scanner_catches_what_it_must():
    assert find_bulk_writes("Offer.objects.filter(x=1).update(y=2)") == [1]
    assert find_bulk_writes("Offer.objects.bulk_create(rows)") == [1]
    assert find_bulk_writes("qs.bulk_update(rows, ['a'])") == [1]
    assert find_bulk_writes("Offer.objects.all().update(y=2)") == [1]
    assert find_bulk_writes("fields.update(more)") == []
    # Declared untracked, with a reason, on the line above: allowed; without one, not.
    assert find_bulk_writes("# untracked: progress\nR.objects.filter(x=1).update(p=2)") == []
    assert find_bulk_writes("# untracked:\nR.objects.filter(x=1).update(p=2)") == [2]
    assert find_bulk_writes("x = 1  # untracked: no\nR.objects.filter(x=1).update(p=2)") == [2]
    assert find_bulk_writes("# untracked: rows\nR.objects.bulk_create(rows)") == [2]


@pytest.mark.parametrize(
    "path",
    sorted(p for p in APPS.rglob("*.py") if "migrations" not in p.parts),
    ids=lambda p: str(p.relative_to(APPS)),
)
def test_no_bulk_writes_in_application_code(path):
    assert find_bulk_writes(path.read_text()) == [], f"bulk write in {path.name}"

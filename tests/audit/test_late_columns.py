"""A column added to a history table must not break the digests already chained.

``history_columns.json`` holds each history table's columns as chained rows
were first written. A column added since must be named in its model's
``late_history_columns`` and be nullable: rows written before it read back
NULL there and digest as they did when they were linked.
"""

import json
from pathlib import Path

import pytest

from apps.audit.chain import late_columns, row_digest, row_fields, tracked_history_models

# Not marked postgres: the models' declarations and the digest of plain rows, no database.
SNAPSHOT = json.loads((Path(__file__).parent / "history_columns.json").read_text())


@pytest.mark.parametrize("model", tracked_history_models(), ids=lambda m: m._meta.label_lower)
def test_new_history_columns_are_declared_late_and_nullable(model):
    label = model._meta.label_lower
    assert label in SNAPSHOT, f"{label} is a new history table: add its columns to the snapshot"
    late = late_columns(model)
    added = set(row_fields(model)) - set(SNAPSHOT[label])
    assert added <= late, f"{label}: {sorted(added - late)} must be in late_history_columns"
    for name in late:
        field = next(f for f in model._meta.concrete_fields if f.attname == name)
        assert field.null, f"{label}.{name} is a late history column and must be nullable"
        assert name not in SNAPSHOT[label], f"{label}.{name} was there from the start"


def test_a_null_late_column_digests_as_if_it_were_absent():
    before = {"id": 1, "title": "Exit plan", "history_date": "2026-01-01T00:00:00+00:00"}
    after = {**before, "expires_on": None}
    assert row_digest(after, late=frozenset({"expires_on"})) == row_digest(before)
    assert row_digest(after) != row_digest(before)
    filled = {**before, "expires_on": "2026-04-01"}
    assert row_digest(filled, late=frozenset({"expires_on"})) != row_digest(before)

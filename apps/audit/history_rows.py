"""Read history rows written by django-simple-history, with field diffs.

Diffs are computed in Python from consecutive rows of the same object, so a
timeline costs one query per record type however many rows it has.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apps.assessments.questions import QUESTIONS_BY_KEY
from apps.core.formats import humanised
from apps.scorecards.scoring import criterion_label

SKIPPED_FIELDS = {
    "history_id",
    "history_date",
    "history_change_reason",
    "history_type",
    "history_user",
    "history_user_id",
    "updated_at",
    "version",
    "id",
}


@dataclass
class Change:
    field: str
    old: Any
    new: Any


@dataclass
class TimelineEntry:
    when: datetime
    record_type: str
    record: str
    action: str
    user: str
    reason: str
    changes: list[Change]


ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}


def timeline(history_querysets: list) -> list[TimelineEntry]:
    """Every change in the given history querysets, newest first, with diffs."""
    entries: list[TimelineEntry] = []
    for queryset in history_querysets:
        model = queryset.model
        fields = [f for f in model._meta.concrete_fields if f.attname not in SKIPPED_FIELDS]
        previous: dict[Any, Any] = {}
        rows = queryset.select_related("history_user").order_by("id", "history_date", "history_id")
        for row in rows:
            before = previous.get(row.id)
            changes = []
            if before is not None:
                for field in fields:
                    old, new = getattr(before, field.attname), getattr(row, field.attname)
                    if old != new:
                        changes.append(Change(str(field.verbose_name), old, new))
            previous[row.id] = row
            entries.append(
                TimelineEntry(
                    when=row.history_date,
                    record_type=str(model.instance_type._meta.verbose_name),
                    record=_label(row),
                    action=ACTIONS.get(row.history_type, row.history_type),
                    user=row.history_user.get_username() if row.history_user else "system",
                    reason=row.history_change_reason or "",
                    changes=changes,
                )
            )
    entries.sort(key=lambda e: e.when, reverse=True)
    return entries


def _label(row) -> str:
    return record_label(row) or f"#{row.id}"


# A stored answer's ``number`` is the answer, not a name: the question comes first.
LABEL_FIELDS = ("name", "title", "criterion_key", "question_key", "number", "key")


def record_label(row) -> str | None:
    """How a record (or its history row) is named to a reader: its name, title or
    number, or the label of the question or criterion it answers, never a stored key."""
    for name in LABEL_FIELDS:
        value = row.get(name) if isinstance(row, dict) else getattr(row, name, None)
        if value in (None, ""):
            continue
        if name == "question_key":
            question = QUESTIONS_BY_KEY.get(value)
            return str(question.label) if question else humanised(value)
        if name == "criterion_key":
            return criterion_label(value)
        if name == "key":
            return humanised(value)
        return str(value)
    return None

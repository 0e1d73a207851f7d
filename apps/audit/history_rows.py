"""How history rows read to a person: the bookkeeping fields a diff leaves out,
and the name a record goes by.

The audit timeline (``apps.audit.timeline``) pages and diffs the rows; this
module holds only what it shares with the history summary and the models.
"""

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

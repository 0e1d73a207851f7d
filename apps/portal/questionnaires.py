"""The rules of the organisation's questionnaires: reading a typed answer, and scoring.

Pure functions over a question's fields (a ``Question``, saved or not) and the
answers as kept, so the rules are table-tested without a database.

An answer is kept as canonical text: ``yes``/``no``; the chosen option's label; a
decimal without grouping (``1200.5``); an ISO date (``2026-12-31``); for a file, the
stored document (the score only asks whether one is there).
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from apps.core import formats
from apps.portal.models import DateDirection, Direction, QuestionKind

NUMBER_MAX_DIGITS = 14  # before the point; the column keeps 18 digits, 4 after it
YES, NO = "yes", "no"


def _plain_number(text: str) -> Decimal:
    cleaned = text.replace(",", "").replace(" ", "").replace("\u00a0", "")
    try:
        number = Decimal(cleaned)
    except InvalidOperation:
        raise ValidationError(_("Type a number, e.g. 1200 or 99.5.")) from None
    if not number.is_finite():
        raise ValidationError(_("Type a number, e.g. 1200 or 99.5."))
    if abs(number) >= Decimal(10) ** NUMBER_MAX_DIGITS:
        raise ValidationError(_("This number is too large."))
    return number


def option_labels(question: Any) -> list[str]:
    return [str(option.get("label", "")) for option in question.options or []]


def answer_read(question: Any, raw: str) -> str:
    """The answer ``raw`` (as typed) kept as canonical text; ``""`` for no answer.

    Raises ``ValidationError`` with a message the vendor can act on. A file's answer is
    read by the upload's own checks, not here.
    """
    text = (raw or "").strip()
    if not text:
        return ""
    kind = question.kind
    if kind == QuestionKind.YES_NO:
        if text.lower() not in (YES, NO):
            raise ValidationError(_("Answer yes or no."))
        return text.lower()
    if kind == QuestionKind.CHOICE:
        if text not in option_labels(question):
            raise ValidationError(_("Choose one of the listed answers."))
        return text
    if kind == QuestionKind.NUMBER:
        number = _plain_number(text)
        if question.min_value is not None and number < question.min_value:
            raise ValidationError(
                _("The smallest answer taken is %(min)s.")
                % {"min": formats.number(question.min_value)}
            )
        if question.max_value is not None and number > question.max_value:
            raise ValidationError(
                _("The largest answer taken is %(max)s.")
                % {"max": formats.number(question.max_value)}
            )
        if number.as_tuple().exponent < -4:  # type: ignore[operator]
            raise ValidationError(_("Give at most four decimal places."))
        return format(number.normalize(), "f") if number else "0"
    if kind == QuestionKind.DATE:
        try:
            return date.fromisoformat(text).isoformat()
        except ValueError:
            raise ValidationError(_("Type a date as year-month-day, e.g. 2026-12-31.")) from None
    if kind == QuestionKind.FILE:
        raise ValidationError(_("Send a file for this question."))
    raise ValidationError(_("This question cannot be answered."))


def is_scored(question: Any) -> bool:
    """Whether the question says what it expects (and weighs anything)."""
    if not question.weight:
        return False
    kind = question.kind
    if kind == QuestionKind.YES_NO:
        return question.expected_yes is not None
    if kind == QuestionKind.CHOICE:
        return any(Decimal(str(o.get("score") or 0)) > 0 for o in question.options or [])
    if kind == QuestionKind.NUMBER:
        return question.threshold is not None and bool(question.threshold_direction)
    if kind == QuestionKind.DATE:
        return question.date_limit is not None and bool(question.date_direction)
    return kind == QuestionKind.FILE


def share_met(question: Any, value: str) -> Decimal:
    """How much of what ``question`` expects the answer ``value`` meets, from 0 to 1.

    Only a choice earns part: its option's score over the best option's score.
    """
    kind = question.kind
    if not value:
        return Decimal(0)
    if kind == QuestionKind.YES_NO:
        return Decimal(value == (YES if question.expected_yes else NO))
    if kind == QuestionKind.CHOICE:
        scores = {str(o.get("label")): Decimal(str(o.get("score") or 0)) for o in question.options}
        best = max(scores.values())
        return scores.get(value, Decimal(0)) / best
    if kind == QuestionKind.NUMBER:
        number = Decimal(value)
        if question.threshold_direction == Direction.AT_LEAST:
            return Decimal(number >= question.threshold)
        return Decimal(number <= question.threshold)
    if kind == QuestionKind.DATE:
        day = date.fromisoformat(value)
        if question.date_direction == DateDirection.NOT_BEFORE:
            return Decimal(day >= question.date_limit)
        return Decimal(day <= question.date_limit)
    return Decimal(1)  # a file: it is there


@dataclass(frozen=True)
class QuestionnaireScore:
    """A questionnaire's score: the weighted share of what was expected that was met.

    ``percent`` is None when nothing weighed (no scored question answered or required).
    ``missed`` holds the keys of the questions whose answer missed what was expected,
    and of the required ones left unanswered, in the questionnaire's order.
    """

    earned: Decimal
    possible: Decimal
    missed: tuple[str, ...] = field(default_factory=tuple)

    @property
    def percent(self) -> Decimal | None:
        if not self.possible:
            return None
        return (self.earned * 100 / self.possible).quantize(Decimal("0.1"))

    def shown(self) -> str:
        """The score as a reader sees it: ``87.5 %`` (``87.5%`` in Chinese), or a dash."""
        return formats.percent(self.percent, ratio=False)


def questionnaire_score(questions: Iterable[Any], answers: Mapping[str, str]) -> QuestionnaireScore:
    """Score ``answers`` (question key → canonical text, ``""`` or absent: unanswered;
    a file's answer is any non-blank text) against ``questions``.

    A scored question counts its weight once answered, or when required; it earns its
    weight times the share met. An optional question left blank counts for nothing.
    A required question left blank is missed, scored or not.
    """
    earned, possible = Decimal(0), Decimal(0)
    missed: list[str] = []
    for question in questions:
        value = answers.get(question.key) or ""
        if not value:
            if question.required:
                missed.append(question.key)
                if is_scored(question):
                    possible += question.weight
            continue
        if not is_scored(question):
            continue
        share = share_met(question, value)
        possible += question.weight
        earned += question.weight * share
        if share < 1:
            missed.append(question.key)
    return QuestionnaireScore(earned=earned, possible=possible, missed=tuple(missed))


def answer_shown(question: Any, value: str) -> str:
    """An answer as a reader sees it: yes/no in their language, a number with its unit."""
    if not value:
        return ""
    if question.kind == QuestionKind.YES_NO:
        return _("Yes") if value == YES else _("No")
    if question.kind == QuestionKind.NUMBER:
        shown = formats.number(Decimal(value))
        return f"{shown} {question.unit}".strip()
    return value


def expectation_shown(question: Any) -> str:
    """What the question expects, in words; ``""`` when it is not scored."""
    if not is_scored(question):
        return ""
    kind = question.kind
    if kind == QuestionKind.YES_NO:
        return _("Yes") if question.expected_yes else _("No")
    if kind == QuestionKind.CHOICE:
        return ", ".join(
            f"{o.get('label')} ({formats.number(o.get('score') or 0)})" for o in question.options
        )
    if kind == QuestionKind.NUMBER:
        return f"{Direction(question.threshold_direction).label} " + answer_shown(
            question, format(question.threshold.normalize(), "f")
        )
    if kind == QuestionKind.DATE:
        return f"{DateDirection(question.date_direction).label} {question.date_limit.isoformat()}"
    return _("A file")

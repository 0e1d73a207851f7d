"""Writes of the questionnaire library, and the vendor's answers to a sent questionnaire.

A version is a draft until published; a published version is never written again
(its questions neither), so every write of a question checks its version is a draft,
under the version's lock. A change after publishing starts the next draft, a copy of
the last published questions that keeps their keys.

The vendor's answers of one save are read and checked first, then written together:
one refused answer (a bad number, a file refused) refuses the save, and nothing of it
is kept, files included.
"""

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from apps.core.services import StateConflict, tracked_create, tracked_delete, tracked_update
from apps.portal.models import (
    DateDirection,
    Direction,
    DocumentKind,
    Question,
    QuestionKind,
    Questionnaire,
    QuestionnaireAnswer,
    QuestionnaireVersion,
    SentQuestionnaire,
    UseKind,
    VendorDocument,
    VendorInvitation,
)
from apps.portal.questionnaires import answer_read
from apps.portal.services.invitations import use_record
from apps.portal.services.proposals import _invitation_lock, _who, document_upload

AUTHOR_PERMISSION = "portal.add_questionnaireversion"
OPTIONS_MAX = 20
QUESTIONS_MAX = 100

# The fields of a question an author sets, as its form hands them over.
QUESTION_FIELDS = (
    "key",
    "text",
    "help_text",
    "kind",
    "required",
    "options",
    "unit",
    "min_value",
    "max_value",
    "weight",
    "expected_yes",
    "threshold",
    "threshold_direction",
    "date_limit",
    "date_direction",
)


def _author_check(actor) -> None:
    if not actor.has_perm(AUTHOR_PERMISSION):
        raise PermissionDenied(_("You may not author questionnaires."))


def questionnaire_create(*, actor, title: str, purpose: str = "") -> QuestionnaireVersion:
    """A new questionnaire and its first draft; the draft."""
    _author_check(actor)
    title, purpose = (title or "").strip(), (purpose or "").strip()
    if not title:
        raise ValidationError({"title": _("Give the questionnaire a title.")})
    with transaction.atomic():
        questionnaire = tracked_create(
            Questionnaire,
            actor=actor,
            reason="Questionnaire started",
            title=title,
            purpose=purpose,
            owner=actor,
        )
        return tracked_create(
            QuestionnaireVersion,
            actor=actor,
            reason="First draft",
            questionnaire=questionnaire,
            number=1,
        )


def _draft_lock(version: QuestionnaireVersion) -> QuestionnaireVersion:
    current = QuestionnaireVersion.objects.select_for_update().get(pk=version.pk)
    if current.is_published:
        raise StateConflict(
            _("Version %(number)d is published and can no longer be changed.")
            % {"number": current.number}
        )
    return current


def draft_start(*, actor, questionnaire: Questionnaire) -> QuestionnaireVersion:
    """The next draft of ``questionnaire``: a copy of its last published version's
    questions, keys kept; the draft already open if there is one."""
    _author_check(actor)
    with transaction.atomic():
        Questionnaire.objects.select_for_update().get(pk=questionnaire.pk)
        versions = QuestionnaireVersion.objects.filter(questionnaire=questionnaire)
        draft = versions.filter(published_at__isnull=True).first()
        if draft is not None:
            return draft
        latest = versions.order_by("-number").first()
        number = (versions.aggregate(n=Max("number"))["n"] or 0) + 1
        draft = tracked_create(
            QuestionnaireVersion,
            actor=actor,
            reason=f"Draft of version {number} started",
            questionnaire=questionnaire,
            number=number,
        )
        if latest is not None:
            for question in latest.questions.order_by("position", "pk"):
                tracked_create(
                    Question,
                    actor=actor,
                    reason=f"Carried from version {latest.number}",
                    questionnaire_version=draft,
                    position=question.position,
                    **{name: getattr(question, name) for name in QUESTION_FIELDS},
                )
    return draft


def _decimal(value: Any) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _options_clean(options: Any, errors: dict[str, list[str]]) -> list[dict[str, Any]]:
    cleaned: list[dict[str, Any]] = []
    if not isinstance(options, list):
        errors["options"] = [_("List the choices.")]
        return cleaned
    labels = set()
    for option in options:
        label = str(option.get("label", "")).strip() if isinstance(option, dict) else ""
        score = _decimal(option.get("score", 0) if isinstance(option, dict) else None)
        if not label or len(label) > 100 or score is None or not 0 <= score <= 100:
            errors["options"] = [
                _("Each choice needs a label of at most 100 characters and a score from 0 to 100.")
            ]
            return []
        if label in labels:
            errors["options"] = [_("Two choices have the same label.")]
            return []
        labels.add(label)
        cleaned.append(
            {"label": label, "score": int(score) if score == int(score) else float(score)}
        )
    if not 2 <= len(cleaned) <= OPTIONS_MAX:
        errors["options"] = [
            _("A choice question has between 2 and %(max)d choices.") % {"max": OPTIONS_MAX}
        ]
    return cleaned


# The fields each kind of question uses beside the ones all share.
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    QuestionKind.YES_NO: ("expected_yes",),
    QuestionKind.CHOICE: ("options",),
    QuestionKind.NUMBER: ("unit", "min_value", "max_value", "threshold", "threshold_direction"),
    QuestionKind.DATE: ("date_limit", "date_direction"),
}


def question_clean(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The question's fields, each checked and the ones its kind does not use blanked."""
    errors: dict[str, list[str]] = {}
    data: dict[str, Any] = {name: fields.get(name) for name in QUESTION_FIELDS}
    kind = data["kind"]
    if kind not in QuestionKind.values:
        errors["kind"] = [_("Choose the kind of answer.")]
    data["text"] = (data["text"] or "").strip()
    if not data["text"]:
        errors["text"] = [_("Write the question.")]
    data["key"] = slugify(str(data["key"] or data["text"]))[:60].strip("-")
    if not data["key"]:
        errors["key"] = [_("Give the question a key of letters, digits and dashes.")]
    data["help_text"] = (data["help_text"] or "").strip()
    data["unit"] = (data["unit"] or "").strip()
    data["threshold_direction"] = data["threshold_direction"] or ""
    data["date_direction"] = data["date_direction"] or ""
    data["options"] = data["options"] or []
    data["required"] = bool(data["required"])
    data["weight"] = int(data["weight"] or 0)
    blank: dict[str, Any] = {
        "options": [],
        "unit": "",
        "min_value": None,
        "max_value": None,
        "expected_yes": None,
        "threshold": None,
        "threshold_direction": "",
        "date_limit": None,
        "date_direction": "",
    }
    kept = KIND_FIELDS.get(str(kind), ())
    for name, empty in blank.items():
        if name not in kept:
            data[name] = empty
    if kind == QuestionKind.CHOICE:
        data["options"] = _options_clean(data["options"] or [], errors)
    if kind == QuestionKind.NUMBER:
        low, high = data["min_value"], data["max_value"]
        if low is not None and high is not None and low > high:
            errors["max_value"] = [_("The largest number is below the smallest.")]
        if (data["threshold"] is None) != (not data["threshold_direction"]):
            errors["threshold"] = [_("Give both the threshold and its direction, or neither.")]
        if data["threshold_direction"] and data["threshold_direction"] not in Direction.values:
            errors["threshold_direction"] = [_("Choose at least or at most.")]
    if kind == QuestionKind.DATE:
        if (data["date_limit"] is None) != (not data["date_direction"]):
            errors["date_limit"] = [_("Give both the date and its direction, or neither.")]
        if data["date_direction"] and data["date_direction"] not in DateDirection.values:
            errors["date_direction"] = [_("Choose not before or not after.")]
    if errors:
        raise ValidationError(errors)
    return data


def question_save(
    *,
    actor,
    version: QuestionnaireVersion,
    fields: Mapping[str, Any],
    question: Question | None = None,
    expected_version: int | None = None,
) -> Question:
    """Add a question to a draft (at the end), or change one of its questions."""
    _author_check(actor)
    data = question_clean(fields)
    with transaction.atomic():
        draft = _draft_lock(version)
        others = Question.objects.filter(questionnaire_version=draft)
        if question is not None:
            others = others.exclude(pk=question.pk)
        if others.filter(key=data["key"]).exists():
            raise ValidationError({"key": _("Another question of this version has this key.")})
        if question is None:
            if others.count() >= QUESTIONS_MAX:
                raise ValidationError(
                    _("A questionnaire has at most %(max)d questions.") % {"max": QUESTIONS_MAX}
                )
            position = (others.aggregate(n=Max("position"))["n"] or 0) + 1
            return tracked_create(
                Question,
                actor=actor,
                reason=f"Question added to the draft of version {draft.number}",
                questionnaire_version=draft,
                position=position,
                **data,
            )
        if question.questionnaire_version_id != draft.pk:
            raise ValidationError(_("This question is not of this draft."))
        return tracked_update(
            question,
            actor=actor,
            reason=f"Question changed in the draft of version {draft.number}",
            fields=data,
            expected_version=expected_version,
        )


def question_remove(*, actor, question: Question) -> None:
    _author_check(actor)
    with transaction.atomic():
        draft = _draft_lock(question.questionnaire_version)
        tracked_delete(
            question,
            actor=actor,
            reason=f"Question removed from the draft of version {draft.number}",
        )


def version_publish(*, actor, version: QuestionnaireVersion, note: str) -> QuestionnaireVersion:
    """Publish a draft: from now on it is sent as it stands, and never edited."""
    _author_check(actor)
    note = (note or "").strip()
    if not note:
        raise ValidationError({"note": _("Say what this version is for or what changed.")})
    with transaction.atomic():
        draft = _draft_lock(version)
        if not draft.questions.exists():
            raise ValidationError(_("A version needs at least one question to be published."))
        return tracked_update(
            draft,
            actor=actor,
            reason=f"Version {draft.number} published: {note}"[:500],
            fields={"note": note[:500], "published_at": timezone.now(), "published_by": actor},
        )


# --- Sending, and the vendor's answers ----------------------------------------------------


def _answers_read(
    questions: list[Question], typed: Mapping[str, str], files: Mapping[str, Any]
) -> dict[str, str]:
    errors: dict[str, list[str]] = {}
    read: dict[str, str] = {}
    for question in questions:
        if question.kind == QuestionKind.FILE:
            continue
        try:
            read[question.key] = answer_read(question, typed.get(question.key, ""))
        except ValidationError as error:
            errors[question.key] = error.messages
    unknown = set(files) - {q.key for q in questions if q.kind == QuestionKind.FILE}
    for key in unknown:
        errors[key] = [_("This question takes no file.")]
    if errors:
        raise ValidationError(errors)
    return read


def answers_save(
    *,
    invitation: VendorInvitation,
    sent: SentQuestionnaire,
    typed: Mapping[str, str],
    files: Mapping[str, Any] | None = None,
    submit: bool = False,
) -> SentQuestionnaire:
    """Keep the vendor's answers to ``sent``; with ``submit``, hand them in.

    A blank answer clears the question's answer (a file stays until another replaces
    it). Submitting needs every required question answered. Nothing is kept of a
    refused save; once submitted, the answers can no longer be changed.
    """
    files = files or {}
    questions = list(sent.questionnaire_version.questions.order_by("position", "pk"))
    read = _answers_read(questions, typed, files)
    stored: list[str] = []
    try:
        with transaction.atomic():
            current = _invitation_lock(invitation)
            locked = SentQuestionnaire.objects.select_for_update().get(
                pk=sent.pk, invitation=current
            )
            if locked.submitted_at is not None:
                raise StateConflict(_("These answers were submitted and can no longer be changed."))
            existing = {a.question_id: a for a in locked.answers.select_for_update()}
            errors: dict[str, list[str]] = {}
            documents: dict[str, VendorDocument] = {}
            for question in questions:
                upload = files.get(question.key)
                if question.kind != QuestionKind.FILE or upload is None:
                    continue
                try:
                    document = document_upload(
                        invitation=current,
                        kind=DocumentKind.OTHER,
                        description=f"Answer to: {question.text}"[:300],
                        upload=upload,
                    )
                except ValidationError as error:
                    errors[question.key] = error.messages
                    continue
                stored.append(document.storage_name)
                documents[question.key] = document
            if errors:
                raise ValidationError(errors)
            reason = f"Answered by {_who(current)}"
            for question in questions:
                answer = existing.get(question.pk)
                if question.kind == QuestionKind.FILE:
                    if question.key not in documents:
                        continue
                    fields: dict[str, Any] = {"value": "", "document": documents[question.key]}
                else:
                    fields = {"value": read[question.key]}
                    if answer is None and not fields["value"]:
                        continue
                if answer is None:
                    existing[question.pk] = tracked_create(
                        QuestionnaireAnswer,
                        actor=None,
                        reason=reason,
                        sent=locked,
                        question=question,
                        **fields,
                    )
                elif any(getattr(answer, name) != value for name, value in fields.items()):
                    existing[question.pk] = tracked_update(
                        answer, actor=None, reason=reason, fields=fields
                    )
            if submit:
                blank = [
                    q.key
                    for q in questions
                    if q.required
                    and not (
                        existing.get(q.pk) and (existing[q.pk].value or existing[q.pk].document_id)
                    )
                ]
                if blank:
                    raise ValidationError(
                        {key: [_("This question must be answered to submit.")] for key in blank}
                    )
                locked = tracked_update(
                    locked,
                    actor=None,
                    reason=f"Submitted by {_who(current)}",
                    fields={"submitted_at": timezone.now()},
                )
            use_record(
                invitation=current,
                kind=UseKind.QUESTIONNAIRE,
                detail=f"{sent.questionnaire_version}: {'submitted' if submit else 'saved'}",
            )
    except BaseException:
        for name in stored:
            default_storage.delete(name)
        raise
    return locked

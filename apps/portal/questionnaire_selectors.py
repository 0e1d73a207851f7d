"""Reads of the questionnaire library and of what vendors answered, scored.

A vendor's earlier answers are those of the last questionnaire of the same library
entry it submitted through an earlier invitation (of any offer of the same vendor): a
renewal's questionnaire offers them again, question by question, where the question
kept its key and its kind (and, for a choice, the answer is still one of its choices).
"""

from dataclasses import dataclass, field

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from apps.portal.models import (
    Question,
    QuestionKind,
    Questionnaire,
    QuestionnaireAnswer,
    QuestionnaireVersion,
    SentQuestionnaire,
    VendorDocument,
    VendorInvitation,
)
from apps.portal.questionnaires import (
    QuestionnaireScore,
    answer_shown,
    expectation_shown,
    option_labels,
    questionnaire_score,
)


def questionnaire_list() -> QuerySet[Questionnaire]:
    return Questionnaire.objects.select_related("owner").prefetch_related(
        Prefetch("versions", queryset=QuestionnaireVersion.objects.order_by("-number"))
    )


def questionnaire_get(pk: int) -> Questionnaire:
    return get_object_or_404(questionnaire_list(), pk=pk)


def version_get(pk: int) -> QuestionnaireVersion:
    return get_object_or_404(
        QuestionnaireVersion.objects.select_related("questionnaire", "published_by"), pk=pk
    )


def draft_of(questionnaire: Questionnaire) -> QuestionnaireVersion | None:
    return questionnaire.versions.filter(published_at__isnull=True).first()


def question_of_draft(version: QuestionnaireVersion, pk: int) -> Question:
    return get_object_or_404(Question, pk=pk, questionnaire_version=version)


def published_versions() -> QuerySet[QuestionnaireVersion]:
    """What may be sent: every published version, newest of each questionnaire first."""
    return (
        QuestionnaireVersion.objects.filter(published_at__isnull=False)
        .select_related("questionnaire")
        .order_by("questionnaire__title", "-number")
    )


def questions_of(version: QuestionnaireVersion) -> list[Question]:
    """The version's questions in order, each with ``expectation`` (what it expects, in
    words) for the pages."""
    questions = list(version.questions.order_by("position", "pk"))
    for question in questions:
        question.expectation = expectation_shown(question)  # type: ignore[attr-defined]
    return questions


@dataclass(frozen=True)
class LibraryRow:
    questionnaire: Questionnaire
    latest: QuestionnaireVersion | None
    draft: QuestionnaireVersion | None


def library_rows() -> list[LibraryRow]:
    rows = []
    for questionnaire in questionnaire_list():
        versions = list(questionnaire.versions.all())
        published = [v for v in versions if v.is_published]
        drafts = [v for v in versions if not v.is_published]
        rows.append(
            LibraryRow(
                questionnaire, published[0] if published else None, drafts[0] if drafts else None
            )
        )
    return rows


def sent_of_invitation(invitation: VendorInvitation, pk: int) -> SentQuestionnaire:
    return get_object_or_404(
        SentQuestionnaire.objects.select_related("questionnaire_version__questionnaire"),
        pk=pk,
        invitation=invitation,
    )


def sent_list(invitation: VendorInvitation) -> list[SentQuestionnaire]:
    return list(
        SentQuestionnaire.objects.filter(invitation=invitation)
        .select_related("questionnaire_version__questionnaire")
        .order_by("pk")
    )


@dataclass(frozen=True)
class Kept:
    """One answer as kept: its canonical text (a file's answer: its document)."""

    value: str
    document: VendorDocument | None = None

    @property
    def text(self) -> str:
        """The text scoring reads: a file counts as answered by its name."""
        return self.value or (self.document.name if self.document else "")


def _kept(sent: SentQuestionnaire) -> dict[str, Kept]:
    answers = QuestionnaireAnswer.objects.filter(sent=sent).select_related("question", "document")
    return {a.question.key: Kept(a.value, a.document) for a in answers}


def kept_values(sent: SentQuestionnaire) -> dict[str, str]:
    """The typed answers kept so far, by question key (files are not typed back)."""
    return {key: kept.value for key, kept in _kept(sent).items() if kept.value}


def previous_of(sent: SentQuestionnaire) -> SentQuestionnaire | None:
    """The same vendor's last submitted answers to this questionnaire (any version),
    through an invitation sent before this one."""
    invitation = sent.invitation
    return (
        SentQuestionnaire.objects.filter(
            invitation__offer__vendor_id=invitation.offer.vendor_id,
            questionnaire_version__questionnaire_id=sent.questionnaire_version.questionnaire_id,
            submitted_at__isnull=False,
            invitation__created_at__lt=invitation.created_at,
        )
        .exclude(pk=sent.pk)
        .select_related("questionnaire_version", "invitation")
        .order_by("-submitted_at", "-pk")
        .first()
    )


def _carried(question: Question, before: Question | None, kept: Kept | None) -> bool:
    """Whether an earlier answer still answers ``question``: same key, same kind, and a
    choice still offered. A file is not carried: it is sent again."""
    if before is None or kept is None or not kept.value:
        return False
    if question.kind != before.kind or question.kind == QuestionKind.FILE:
        return False
    return question.kind != QuestionKind.CHOICE or kept.value in option_labels(question)


def previous_answers(sent: SentQuestionnaire) -> dict[str, str]:
    """The earlier answers that still answer this version's questions, by key."""
    previous = previous_of(sent)
    if previous is None:
        return {}
    kept = _kept(previous)
    before = {q.key: q for q in questions_of(previous.questionnaire_version)}
    return {
        q.key: kept[q.key].value
        for q in questions_of(sent.questionnaire_version)
        if _carried(q, before.get(q.key), kept.get(q.key))
    }


@dataclass(frozen=True)
class AnsweredRow:
    """One question with the vendor's answer, what it expects, and how it compares."""

    question: Question
    answer: str
    document: VendorDocument | None
    expected: str
    missed: bool
    previous: str | None  # the answer before, where there was one to compare
    changed: bool


@dataclass(frozen=True)
class AnsweredQuestionnaire:
    sent: SentQuestionnaire
    rows: list[AnsweredRow]
    score: QuestionnaireScore
    previous: SentQuestionnaire | None = None
    missed: list[Question] = field(default_factory=list)

    @property
    def score_shown(self) -> str:
        return self.score.shown()


def _changed(question: Question, earlier: Kept, mine: Kept) -> bool:
    if question.kind == QuestionKind.FILE:
        digest = mine.document.sha256 if mine.document else ""
        return digest != (earlier.document.sha256 if earlier.document else "")
    return earlier.value != mine.value


def answered(sent: SentQuestionnaire) -> AnsweredQuestionnaire:
    """``sent`` scored, each question beside the vendor's answer and its previous one."""
    questions = questions_of(sent.questionnaire_version)
    kept = _kept(sent)
    score = questionnaire_score(questions, {key: k.text for key, k in kept.items()})
    previous = previous_of(sent)
    before = _kept(previous) if previous is not None else {}
    rows = []
    for question in questions:
        mine = kept.get(question.key) or Kept("")
        earlier = before.get(question.key)
        previous_text = None
        if earlier is not None:
            previous_text = answer_shown(question, earlier.value) or (
                earlier.document.name if earlier.document else ""
            )
        shown = answer_shown(question, mine.value)
        rows.append(
            AnsweredRow(
                question=question,
                answer=shown,
                document=mine.document,
                expected=expectation_shown(question),
                missed=question.key in score.missed,
                previous=previous_text,
                changed=earlier is not None and _changed(question, earlier, mine),
            )
        )
    return AnsweredQuestionnaire(
        sent=sent,
        rows=rows,
        score=score,
        previous=previous,
        missed=[q for q in questions if q.key in score.missed],
    )


def answered_of_offer(offer) -> list[AnsweredQuestionnaire]:
    """Every questionnaire sent through the offer's invitations, scored, oldest first."""
    sent = (
        SentQuestionnaire.objects.filter(invitation__offer=offer)
        .select_related("questionnaire_version__questionnaire", "invitation__offer")
        .order_by("pk")
    )
    return [answered(s) for s in sent]

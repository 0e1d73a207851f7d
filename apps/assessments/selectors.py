"""Reads of data-export assessments, with everything derived from their answers."""

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from apps.assessments.audit_facts import AuditGap, audit_gaps
from apps.assessments.models import (
    AssessmentAnswer,
    DataExportAssessment,
    ExportedDataset,
    ModelWeightFile,
)
from apps.assessments.questions import QUESTIONS, Question
from apps.assessments.rules import (
    AssessmentState,
    Constraint,
    MechanismCheck,
    PrcAid,
    assessment_state,
    derived_constraints,
    exit_readiness_answered_in,
    export_contradiction,
    governing_assessment,
    mechanism_check,
    prc_aid,
    regime_conclusions,
    regime_problems,
    regimes_considered,
    sign_off_blockers,
    stated_status,
)
from apps.assessments.transfers import RegimeConclusion
from apps.core.reads import shared_read


def _with_answers(queryset: QuerySet) -> QuerySet:
    """With its answers, its data inventory and its model-weight files."""
    return queryset.select_related("case", "offer__vendor", "signed_off_by").prefetch_related(
        Prefetch("answers", queryset=AssessmentAnswer.objects.order_by("pk")),
        Prefetch("datasets", queryset=ExportedDataset.objects.order_by("pk")),
        Prefetch("weight_files", queryset=ModelWeightFile.objects.order_by("pk")),
    )


def log_retention_min_days() -> int:
    """The organisation's minimum retention of the vendor's logs
    (docs/rules/data-export.md#audit-facts)."""
    return settings.LOG_RETENTION_MIN_DAYS


def assessment_audit_gaps(assessment: DataExportAssessment) -> list[AuditGap]:
    """The gaps of the facts auditors ask for; each is a finding of the register."""
    return audit_gaps(
        assessment, answers=assessment.answer_map(), min_days=log_retention_min_days()
    )


def assessment_list_for(actor) -> QuerySet[DataExportAssessment]:
    if not actor.has_perm("assessments.view_dataexportassessment"):
        return DataExportAssessment.objects.none()
    return _with_answers(DataExportAssessment.objects.all()).order_by("case_id", "offer_id", "pk")


def assessment_get_for(actor, pk: int) -> DataExportAssessment:
    return get_object_or_404(assessment_list_for(actor), pk=pk)


@shared_read
def case_assessments(case) -> list[DataExportAssessment]:
    """The case's assessment (first) and its per-offer ones, answers prefetched."""
    rows = _with_answers(DataExportAssessment.objects.filter(case=case))
    return sorted(rows, key=lambda a: (a.offer_id is not None, a.offer_id or 0))


def assessments_of_cases(case_ids) -> dict[int, list[DataExportAssessment]]:
    """``case_assessments`` of many cases at once, by case, in a fixed number of queries."""
    found: dict[int, list[DataExportAssessment]] = {pk: [] for pk in case_ids}
    for row in _with_answers(DataExportAssessment.objects.filter(case_id__in=list(found))):
        found[row.case_id].append(row)
    for rows in found.values():
        rows.sort(key=lambda a: (a.offer_id is not None, a.offer_id or 0))
    return found


def effective_assessment(case, offer=None) -> DataExportAssessment | None:
    """The assessment that governs an offer (its own, else the case's if it covers the
    vendor's jurisdiction); without an offer, the case's own assessment."""
    assessments = case_assessments(case)
    case_level = next((a for a in assessments if a.offer_id is None), None)
    if offer is None:
        return case_level
    own = next((a for a in assessments if a.offer_id == offer.pk), None)
    return governing_assessment(
        case_assessment=case_level,
        offer_assessment=own,
        vendor_jurisdiction=offer.vendor.jurisdiction,
    )


@dataclass
class AnsweredQuestion:
    question: Question
    answer: AssessmentAnswer | None

    @property
    def display(self) -> str:
        if self.answer is None:
            return ""
        labels = dict(self.question.choices)
        parts = []
        if self.answer.value:
            parts.append(str(labels.get(self.answer.value, self.answer.value)))
        if self.answer.number is not None:
            parts.append(str(self.answer.number))
        return " · ".join(parts)


@dataclass
class AssessmentSummary:
    assessment: DataExportAssessment
    rows: list[AnsweredQuestion]
    constraints: list[Constraint]
    aid: PrcAid
    # The aid as a checked step: contradictory answers, and the named mechanism's status.
    contradiction: str
    mechanism: MechanismCheck
    state: AssessmentState
    blockers: list[str]
    exit_readiness_answered: bool
    unanswered: int
    # The facts auditors ask for: their gaps, and the organisation's log-retention minimum.
    audit_gaps: list[AuditGap]
    log_retention_min_days: int
    # Every regime considered side by side (PRC, EU GDPR, UK GDPR), each with its
    # conclusion, and what an applicable one still needs before approval.
    regimes: list[RegimeConclusion]
    regimes_considered: str
    regime_problems: list[str]

    @property
    def status(self) -> str:
        if self.state.expired:
            return "expired"
        return "signed_off" if self.state.signed_off else "draft"


def assessment_summary(assessment: DataExportAssessment, *, today: date | None = None):
    """Derived constraints, decision aid, state and blockers; no queries beyond the prefetch."""
    today = today or timezone.localdate()
    answers = assessment.answer_map()
    aid = prc_aid(answers, on=today)
    rows = [AnsweredQuestion(q, answers.get(q.key)) for q in QUESTIONS]
    regimes = regime_conclusions(answers, aid=aid)
    return AssessmentSummary(
        assessment=assessment,
        rows=rows,
        constraints=derived_constraints(answers),
        aid=aid,
        contradiction=export_contradiction(answers),
        mechanism=mechanism_check(aid, stated_status(assessment), today=today),
        state=assessment_state(assessment, today),
        blockers=sign_off_blockers(answers, conclusion=assessment.conclusion, aid=aid),
        exit_readiness_answered=exit_readiness_answered_in(answers),
        unanswered=sum(1 for row in rows if not row.display),
        audit_gaps=assessment_audit_gaps(assessment),
        log_retention_min_days=log_retention_min_days(),
        regimes=regimes,
        regimes_considered=regimes_considered(regimes),
        regime_problems=regime_problems(regimes),
    )


def assessment_history_querysets(assessment: DataExportAssessment) -> list:
    return [
        DataExportAssessment.history.filter(id=assessment.pk),
        AssessmentAnswer.history.filter(assessment_id=assessment.pk),
        ExportedDataset.history.filter(assessment_id=assessment.pk),
        ModelWeightFile.history.filter(assessment_id=assessment.pk),
    ]


def dataset_list_for(actor) -> QuerySet[ExportedDataset]:
    if not actor.has_perm("assessments.view_exporteddataset"):
        return ExportedDataset.objects.none()
    return ExportedDataset.objects.select_related("assessment").order_by("assessment_id", "pk")


def weight_file_list_for(actor) -> QuerySet[ModelWeightFile]:
    if not actor.has_perm("assessments.view_modelweightfile"):
        return ModelWeightFile.objects.none()
    return ModelWeightFile.objects.select_related("assessment").order_by("assessment_id", "pk")

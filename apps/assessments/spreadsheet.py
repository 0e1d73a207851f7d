"""The data-export questionnaire of an assessment as a workbook, and that workbook read back.

The columns are listed here; writing, printing and checking are
``apps.core.spreadsheets``. Rows are keyed by the question's key (first column),
so headers may be in English or Chinese. An import takes the answer (a choice of
the question's own, by value or by its label in either language), the number
(for the questions that take one) and the note, and saves them through
``assessment_save`` like the page's form; attachments stay as they are.
"""

from django.utils.translation import gettext_lazy as _

from apps.assessments import services
from apps.assessments.models import DataExportAssessment
from apps.assessments.questions import QUESTIONS, QUESTIONS_BY_KEY
from apps.core.spreadsheets import (
    CHOICE,
    INTEGER,
    TEXT,
    Column,
    SheetSpec,
    Stamp,
    import_reason,
    record_workbook,
    workbook_filename,
    workbook_read,
)

SPEC = SheetSpec(
    kind="data-export-questionnaire",
    title=_("Questionnaire"),
    columns=(
        Column("key", _("Question key"), width=24),
        Column("block", _("Part"), width=18),
        Column("question", _("Question"), width=48),
        Column(
            "value",
            _("Answer"),
            width=20,
            kind=CHOICE,
            editable=True,
            choices=lambda key: QUESTIONS_BY_KEY[key].choices,
            applies=lambda key: QUESTIONS_BY_KEY[key].takes_value,
        ),
        Column(
            "number",
            _("Number"),
            width=12,
            kind=INTEGER,
            editable=True,
            minimum=0,
            applies=lambda key: QUESTIONS_BY_KEY[key].takes_number,
        ),
        Column("note", _("Note"), width=40, kind=TEXT, editable=True),
    ),
)


def _stamp(assessment: DataExportAssessment) -> Stamp:
    return Stamp(
        kind=SPEC.kind,
        record=f"data-export assessment {assessment.pk}, case {assessment.case_id}",
        version=assessment.version,
    )


def _label(question, value: str) -> str:
    return str(dict(question.choices).get(value, value)) if value else ""


def questionnaire_workbook(assessment: DataExportAssessment) -> tuple[bytes, str]:
    """Every question with its answer, number and note, and the file name."""
    answers = assessment.answer_map()
    rows = []
    for question in QUESTIONS:
        answer = answers.get(question.key)
        rows.append(
            [
                question.key,
                str(question.block),
                str(question.label),
                _label(question, answer.value) if answer and question.takes_value else "",
                answer.number if answer and question.takes_number else None,
                answer.note if answer else "",
            ]
        )
    title = f"{assessment.case.name} — {assessment.jurisdiction}".rstrip(" —")
    content = record_workbook(SPEC, rows, title=title, stamp=_stamp(assessment))
    return content, workbook_filename("questionnaire-assessment", assessment.pk)


def questionnaire_import(
    *, actor, assessment: DataExportAssessment, upload
) -> tuple[DataExportAssessment, bool]:
    """Read the filled-in questionnaire, checked whole, and save every answer together.

    Returns the assessment and whether the edit voided its sign-off.
    """
    current = DataExportAssessment.objects.get(pk=assessment.pk)
    imported = workbook_read(
        upload, SPEC, expected=_stamp(current), keys=[q.key for q in QUESTIONS]
    )
    answers = {}
    for key, values in imported.rows.items():
        question = QUESTIONS_BY_KEY[key]
        answer = {"note": values["note"]}
        if question.takes_value:
            answer["value"] = values["value"] or ""
        if question.takes_number:
            answer["number"] = values["number"]
        answers[key] = answer
    return services.assessment_save(
        actor=actor,
        assessment=current,
        reason=import_reason(imported.filename),
        answers=answers,
        expected_version=current.version,
    )

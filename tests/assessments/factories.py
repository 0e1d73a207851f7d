"""Assessments built through the services, as in production."""

from typing import Any

from apps.assessments.questions import EXIT_READINESS_KEYS, QUESTIONS, Kind
from apps.assessments.rules import HARDWARE_HARD_KEYS
from apps.assessments.services import assessment_create, assessment_sign_off


def complete_answers(**overrides) -> dict:
    """Every question answered: nothing personal leaves, exit in 30 days, each exit item
    and hardware document with its evidence note."""
    answers: dict[str, dict[str, Any]] = {}
    for q in QUESTIONS:
        if q.kind == Kind.COUNT:
            answers[q.key] = {"number": 0}
        elif q.kind == Kind.CHOICE:
            answers[q.key] = {"value": q.options[0][0]}
        else:
            answers[q.key] = {"value": "yes"}
    answers["exit_bounded_time"]["number"] = 30
    for key in EXIT_READINESS_KEYS:  # each exit item confirmed with its evidence
        answers[key]["note"] = "Shown in the vendor's exit runbook, tested on staging"
    for key in HARDWARE_HARD_KEYS:  # the hardware's licence and origin documents on file
        answers[key]["note"] = "Licence and purchase documents filed with the contract"
    answers["personal_information"] = {"value": "no"}
    answers["important_data"] = {"value": "no"}
    for key, value in overrides.items():
        answers[key] = value if isinstance(value, dict) else {"value": value}
    return answers


def make_assessment(actor, case, *, offer=None, complete=True, signed=False, **fields):
    fields.setdefault(
        "conclusion", "Cleared for de-identified inference traffic." if complete else ""
    )
    assessment = assessment_create(
        actor=actor,
        case=case,
        offer=offer,
        answers=complete_answers() if complete else {},
        **fields,
    )
    if signed:
        assessment = assessment_sign_off(actor=actor, assessment=assessment)
    return assessment

"""Assessments built through the services, as in production."""

from typing import Any

from apps.assessments.questions import EXIT_READINESS_KEYS, QUESTIONS, Kind
from apps.assessments.rules import HARDWARE_HARD_KEYS
from apps.assessments.services import (
    assessment_create,
    assessment_sign_off,
    audit_facts_save,
    dataset_add,
    weight_file_add,
)

# The facts auditors ask for, with no gap: one internal dataset, one weight file with its
# SHA-256, encryption at rest and in transit, logs kept longer than the minimum.
DATASET = {
    "name": "Support tickets, de-identified",
    "size_gb": "12.50",
    "data_format": "Parquet",
    "sensitivity": "internal",
    "sync_window": "Nightly, 01:00–03:00 UTC",
}
WEIGHT_FILE = {
    "file_name": "model-00001-of-00001.safetensors",
    "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "size_bytes": 4_920_000_000,
}
AUDIT_FACTS = {
    "encryption_at_rest": "yes",
    "encryption_at_rest_mechanism": "AES-256 volume encryption, keys in our own KMS",
    "encryption_in_transit": "yes",
    "encryption_in_transit_mechanism": "TLS 1.3 on every link",
    "log_retention_days": 365,
}


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
    # No data subjects in the EU or the EEA: the PRC rules alone, as before the EU and UK ones.
    answers["gdpr_subjects_in_eea"] = {"value": "no"}
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
        fill_audit_facts(actor, assessment)
        assessment = assessment_sign_off(actor=actor, assessment=assessment)
    return assessment


def fill_audit_facts(actor, assessment) -> None:
    """The facts auditors ask for, recorded with no gap (no finding of their own)."""
    dataset_add(actor=actor, assessment=assessment, fields=dict(DATASET))
    weight_file_add(actor=actor, assessment=assessment, fields=dict(WEIGHT_FILE))
    audit_facts_save(
        actor=actor,
        assessment=assessment,
        fields=dict(AUDIT_FACTS),
        reason="Read from the contract",
    )

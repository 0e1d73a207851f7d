"""The facts auditors ask of a data export, and their gaps (docs/rules/data-export.md#audit-facts).

Recorded on the data-export assessment beside its questionnaire: the datasets that
leave for the rented compute (size, format, sensitivity, when they sync), the
model-weight files deployed with their SHA-256, whether the data is encrypted at rest
and in transit (and how), and how long the vendor keeps its logs against the
organisation's minimum. Each gap is a finding of the case's register; this module
names them and says why, on plain data:

- ``datasets``: objects with ``pk``, ``name`` and ``sensitivity``;
- ``weight_files``: any sized collection;
- ``answers``: the questionnaire's answers, as ``apps.assessments.rules`` reads them.
"""

import re
from collections.abc import Mapping, Sized
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.assessments.questions import NO, QUESTIONS_BY_KEY, YES

# --- What is recorded ----------------------------------------------------------------

PUBLIC, INTERNAL = "public", "internal"
PERSONAL, SENSITIVE_PERSONAL, IMPORTANT_DATA = "personal", "sensitive_personal", "important_data"
SENSITIVITY_CHOICES = (
    (PUBLIC, gettext_lazy("Public")),
    (INTERNAL, gettext_lazy("Internal")),
    (PERSONAL, gettext_lazy("Personal information")),
    (SENSITIVE_PERSONAL, gettext_lazy("Sensitive personal information")),
    (IMPORTANT_DATA, gettext_lazy("Important data")),
)
# A dataset of this sensitivity contradicts a "no" to this question of the questionnaire.
CONTRADICTED_BY = {
    PERSONAL: "personal_information",
    SENSITIVE_PERSONAL: "personal_information",
    IMPORTANT_DATA: "important_data",
}

NOT_STATED = "not_stated"
ENCRYPTION_CHOICES = (
    (YES, gettext_lazy("Yes")),
    (NO, gettext_lazy("No")),
    (NOT_STATED, gettext_lazy("Not stated")),
)
# Each side: the choice's field, and the field that says how (kept only with a "yes").
ENCRYPTION_SIDES = {
    "encryption_at_rest": "encryption_at_rest_mechanism",
    "encryption_in_transit": "encryption_in_transit_mechanism",
}
FACT_FIELDS = (*(f for pair in ENCRYPTION_SIDES.items() for f in pair), "log_retention_days")

SHA256 = re.compile(r"[0-9a-f]{64}")


def normal_sha256(value: str) -> str:
    """A SHA-256 as stored: lower-case, without surrounding spaces."""
    return (value or "").strip().lower()


def sha256_error(value: str) -> str:
    """Why ``value`` is not a SHA-256 in hex, or ""."""
    if SHA256.fullmatch(normal_sha256(value)):
        return ""
    return str(_("A SHA-256 is 64 hexadecimal characters (0–9, a–f)."))


def fact_changes(
    current: Mapping[str, Any], given: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The encryption and log-retention fields to write, and why any cannot be.

    Only the fields given change. "Yes" needs the mechanism in words; "no" and "not
    stated" keep none. Nothing recorded (NULL) reads as "not stated"."""
    merged = {name: current.get(name) for name in FACT_FIELDS}
    merged.update({name: given[name] for name in FACT_FIELDS if name in given})
    errors: dict[str, str] = {}
    allowed = [choice for choice, _label in ENCRYPTION_CHOICES]
    for choice, how in ENCRYPTION_SIDES.items():
        value = merged[choice] or None
        words = str(merged[how] or "").strip() or None
        if value is not None and value not in allowed:
            errors[choice] = str(
                _("'%(value)s' is not an answer here; use one of: %(allowed)s.")
                % {"value": value, "allowed": ", ".join(allowed)}
            )
        elif value == YES and words is None:
            errors[how] = str(
                _("Say how it is encrypted: e.g. the protocol or cipher, and who holds the keys.")
            )
        merged[choice], merged[how] = value, words if value == YES else None
    days = merged["log_retention_days"]
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 0):
        errors["log_retention_days"] = str(_("Enter a whole number of days, zero or more."))
    changes = {name: merged[name] for name in FACT_FIELDS if merged[name] != current.get(name)}
    return changes, errors


# --- Their gaps: each a finding of the register ----------------------------------------


class Gap(StrEnum):
    """The register code of each gap (docs/rules/findings.md#findings-of-the-areas)."""

    INVENTORY_MISSING = "assessments.data_inventory_missing"
    INVENTORY_CONTRADICTS_ANSWERS = "assessments.inventory_contradicts_answers"
    WEIGHT_HASHES_MISSING = "assessments.weight_hashes_missing"
    IN_TRANSIT_NOT_ENCRYPTED = "assessments.encryption_in_transit"
    AT_REST_NOT_ENCRYPTED = "assessments.encryption_at_rest"
    ENCRYPTION_NOT_STATED = "assessments.encryption_not_stated"
    LOG_RETENTION_SHORT = "assessments.log_retention_short"


AUDIT_FINDINGS: tuple[str, ...] = tuple(gap.value for gap in Gap)


@dataclass(frozen=True)
class AuditGap:
    gap: Gap
    key: str  # which one: a dataset, a side of encryption, a field
    message: str
    facts: str  # the values it rests on: an acceptance lapses when they change


def _label(choices, value) -> str:
    return str(dict(choices).get(value, value))


def _answer(answers: Mapping[str, Any], key: str) -> str:
    answer = answers.get(key)
    return (answer.value or "") if answer is not None else ""


def inventory_gaps(datasets, answers: Mapping[str, Any]) -> list[AuditGap]:
    """No dataset listed; or one whose sensitivity the questionnaire's answers deny."""
    if not datasets:
        return [
            AuditGap(
                Gap.INVENTORY_MISSING,
                "datasets",
                str(
                    _(
                        "No dataset is listed as leaving for the rented compute: list each "
                        "with its size, format, sensitivity and when it syncs."
                    )
                ),
                "datasets=0",
            )
        ]
    gaps = []
    for dataset in datasets:
        question = CONTRADICTED_BY.get(dataset.sensitivity)
        if question is None or _answer(answers, question) != NO:
            continue
        gaps.append(
            AuditGap(
                Gap.INVENTORY_CONTRADICTS_ANSWERS,
                f"dataset-{dataset.pk}",
                str(
                    _(
                        "The dataset “%(name)s” is marked %(sensitivity)s, yet the assessment "
                        "answers “%(question)s” with 'No'. Correct the dataset's sensitivity "
                        "or the answer."
                    )
                )
                % {
                    "name": dataset.name,
                    "sensitivity": _label(SENSITIVITY_CHOICES, dataset.sensitivity),
                    "question": QUESTIONS_BY_KEY[question].label,
                },
                f"dataset={dataset.name}; sensitivity={dataset.sensitivity}; {question}={NO}",
            )
        )
    return gaps


def weight_gaps(weight_files: Sized) -> list[AuditGap]:
    if len(weight_files):
        return []
    return [
        AuditGap(
            Gap.WEIGHT_HASHES_MISSING,
            "weight_files",
            str(
                _(
                    "No model-weight file is listed with its SHA-256: list each weight file "
                    "deployed, so what runs can be checked against what was approved."
                )
            ),
            "weight_files=0",
        )
    ]


def encryption_gaps(*, at_rest: str | None, in_transit: str | None) -> list[AuditGap]:
    """In transit "no" blocks; at rest "no", or either side not stated, awaits legal."""
    gaps = []
    if in_transit == NO:
        gaps.append(
            AuditGap(
                Gap.IN_TRANSIT_NOT_ENCRYPTED,
                "encryption_in_transit",
                str(_("The data is not encrypted in transit to and from the rented compute.")),
                f"encryption_in_transit={NO}",
            )
        )
    if at_rest == NO:
        gaps.append(
            AuditGap(
                Gap.AT_REST_NOT_ENCRYPTED,
                "encryption_at_rest",
                str(_("The data is not encrypted at rest on the vendor's storage.")),
                f"encryption_at_rest={NO}",
            )
        )
    unstated = {
        "encryption_at_rest": (at_rest, _("Whether the data is encrypted at rest is not stated.")),
        "encryption_in_transit": (
            in_transit,
            _("Whether the data is encrypted in transit is not stated."),
        ),
    }
    for key, (value, message) in unstated.items():
        if value in (None, "", NOT_STATED):
            gaps.append(
                AuditGap(Gap.ENCRYPTION_NOT_STATED, key, str(message), f"{key}={NOT_STATED}")
            )
    return gaps


def log_retention_gaps(days: int | None, minimum: int) -> list[AuditGap]:
    """Logs kept fewer days than the organisation's minimum, or for a time not stated."""
    facts = f"log_retention_days={days}; minimum_days={minimum}"
    words = {
        "days": number_format(days, force_grouping=True) if days is not None else "",
        "minimum": number_format(minimum, force_grouping=True),
    }
    if days is None:
        message = (
            _(
                "How long the vendor keeps its logs is not stated; the organisation's minimum is "
                "%(minimum)s days."
            )
            % words
        )
    elif days < minimum:
        message = (
            _(
                "The vendor keeps its logs for %(days)s days, fewer than the organisation's "
                "minimum of %(minimum)s days."
            )
            % words
        )
    else:
        return []
    return [AuditGap(Gap.LOG_RETENTION_SHORT, "log_retention_days", str(message), facts)]


def audit_gaps(assessment, *, answers: Mapping[str, Any], min_days: int) -> list[AuditGap]:
    """Every gap of an assessment's audit facts; ``datasets`` and ``weight_files`` are read
    from its (prefetched) related rows."""
    return [
        *inventory_gaps(list(assessment.datasets.all()), answers),
        *weight_gaps(list(assessment.weight_files.all())),
        *encryption_gaps(
            at_rest=assessment.encryption_at_rest, in_transit=assessment.encryption_in_transit
        ),
        *log_retention_gaps(assessment.log_retention_days, min_days),
    ]

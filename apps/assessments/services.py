"""Writes to data-export assessments: create, save answers, sign off; and the facts
auditors ask for (the data inventory, the model-weight files, encryption and log
retention), which are recorded without voiding the sign-off.

Answers arrive as ``{question_key: {"value": str, "number": int | None, "note": str}}``
(only the keys given are changed) and attachments as ``{question_key: file}``,
or ``False`` to detach. Every write is validated before anything is saved.
"""

import hashlib
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.assessments.audit_facts import fact_changes, normal_sha256
from apps.assessments.models import (
    AssessmentAnswer,
    DataExportAssessment,
    ExportedDataset,
    ModelWeightFile,
    validate_attachment_size,
)
from apps.assessments.questions import QUESTIONS, QUESTIONS_BY_KEY
from apps.assessments.rules import (
    answers_errors,
    default_review_by,
    edit_voids_sign_off,
    mechanism_status_errors,
    prc_aid,
    review_by_errors,
    sign_off_blockers,
    stated_fields,
)
from apps.core.services import (
    ConcurrentEditError,
    StateConflict,
    tracked_create,
    tracked_delete,
    tracked_update,
)
from apps.core.uploads import EVIDENCE_DOCUMENTS, file_kind

Answers = dict[str, dict[str, Any]]


def _who(user) -> str:
    return user.get_full_name() or user.get_username()


def _require(actor, permission: str, message: str) -> None:
    if not actor.has_perm(permission):
        raise PermissionDenied(message)


def _validate(answers: Answers, attachments: dict[str, Any]) -> None:
    errors = answers_errors(answers)
    for key, upload in attachments.items():
        if key not in QUESTIONS_BY_KEY:
            errors[key] = _("There is no question '%(key)s' in this questionnaire.") % {"key": key}
        elif upload:
            try:
                validate_attachment_size(upload)
                file_kind(upload, EVIDENCE_DOCUMENTS)
            except ValidationError as error:
                errors[f"{key}__attachment"] = " ".join(error.messages)
    if errors:
        raise ValidationError({key: [message] for key, message in errors.items()})


def _attachment_fields(upload) -> dict[str, Any]:
    """The attachment with the SHA-256 of its bytes, which downloads check; False detaches."""
    if upload is False:
        return {"attachment": "", "attachment_sha256": ""}
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)
    return {"attachment": upload, "attachment_sha256": digest.hexdigest()}


def _answer_fields(given: dict[str, Any]) -> dict[str, Any]:
    fields = {}
    if "value" in given:
        fields["value"] = given["value"] or ""
    if "number" in given:
        fields["number"] = None if given["number"] in (None, "") else given["number"]
    if "note" in given:
        fields["note"] = (given["note"] or "").strip()
    return fields


def assessment_create(
    *,
    actor,
    case,
    offer=None,
    jurisdiction: str = "",
    conclusion: str = "",
    answers: Answers | None = None,
    attachments: dict[str, Any] | None = None,
) -> DataExportAssessment:
    """Start an assessment with a row for every question, answered or not."""
    _require(actor, "assessments.add_dataexportassessment", _("You may not start assessments."))
    answers, attachments = answers or {}, attachments or {}
    _validate(answers, attachments)
    if offer is not None and not jurisdiction:
        jurisdiction = offer.vendor.jurisdiction
    with transaction.atomic():
        exists = DataExportAssessment.objects.filter(case=case, offer=offer).exists()
        if exists:
            target = "offer" if offer is not None else "case"
            raise ValidationError({target: _("This already has a data-export assessment.")})
        assessment = tracked_create(
            DataExportAssessment,
            actor=actor,
            reason="Data-export assessment started",
            case=case,
            offer=offer,
            jurisdiction=jurisdiction.strip(),
            conclusion=conclusion.strip(),
        )
        for question in QUESTIONS:
            fields = _answer_fields(answers.get(question.key, {}))
            if attachments.get(question.key):
                fields.update(_attachment_fields(attachments[question.key]))
            tracked_create(
                AssessmentAnswer,
                actor=actor,
                reason="Data-export assessment started",
                assessment=assessment,
                question_key=question.key,
                **fields,
            )
    return assessment


def assessment_save(
    *,
    actor,
    assessment: DataExportAssessment,
    reason: str,
    answers: Answers | None = None,
    attachments: dict[str, Any] | None = None,
    conclusion: str | None = None,
    jurisdiction: str | None = None,
    expected_version: int | None = None,
) -> tuple[DataExportAssessment, bool]:
    """Save answers together; returns the assessment and whether a sign-off was voided."""
    _require(actor, "assessments.change_dataexportassessment", _("You may not edit assessments."))
    answers, attachments = answers or {}, attachments or {}
    _validate(answers, attachments)
    if not (reason or "").strip():
        raise ValidationError({"change_reason": _("Say why this assessment is being changed.")})
    with transaction.atomic():
        current = DataExportAssessment.objects.select_for_update().get(pk=assessment.pk)
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        rows = {row.question_key: row for row in current.answers.all()}
        answer_changes = _answer_changes(rows, answers, attachments)
        fields: dict[str, Any] = {}
        if conclusion is not None and conclusion.strip() != current.conclusion:
            fields["conclusion"] = conclusion.strip()
        if jurisdiction is not None and jurisdiction.strip() != current.jurisdiction:
            fields["jurisdiction"] = jurisdiction.strip()
        changed = bool(fields or answer_changes)
        if not changed:
            return current, False
        voided = edit_voids_sign_off(signed_off=current.signed_off_at is not None, changed=True)
        history_reason = reason.strip()
        if voided:
            note = _(
                "Sign-off by %(who)s on %(when)s voided by %(editor)s's edit on %(today)s: %(why)s"
            )
            fields.update(
                signed_off_by=None,
                signed_off_at=None,
                review_by=None,
                voided_sign_off=note
                % {
                    "who": _who(current.signed_off_by),
                    "when": timezone.localdate(current.signed_off_at).isoformat(),
                    "editor": _who(actor),
                    "today": timezone.localdate().isoformat(),
                    "why": reason.strip(),
                },
            )
            history_reason = f"{history_reason} — {_('sign-off voided by this edit')}"
        updated = tracked_update(current, actor=actor, reason=history_reason, fields=fields)
        for key, row_fields in answer_changes:
            row = rows.get(key) or tracked_create(
                AssessmentAnswer, actor=actor, reason=history_reason, assessment=updated,
                question_key=key,
            )  # fmt: skip
            tracked_update(row, actor=actor, reason=history_reason, fields=row_fields)
    return updated, voided


def _answer_changes(rows, answers: Answers, attachments: dict[str, Any]) -> list[tuple]:
    changes = []
    for key in QUESTIONS_BY_KEY:
        fields = _answer_fields(answers.get(key, {}))
        row = rows.get(key)
        fields = {
            name: value
            for name, value in fields.items()
            if row is None or getattr(row, name) != value
        }
        upload = attachments.get(key)
        if upload:
            fields.update(_attachment_fields(upload))
        elif upload is False and row is not None and row.attachment:
            fields.update(_attachment_fields(False))
        if fields:
            changes.append((key, fields))
    return changes


def assessment_sign_off(
    *,
    actor,
    assessment: DataExportAssessment,
    review_by=None,
    expected_version: int | None = None,
    mechanism_status: str | None = None,
    mechanism_expected_on=None,
    mechanism_reference: str | None = None,
) -> DataExportAssessment:
    """A legal reviewer signs off; the assessment then holds until its review-by date.

    Where the PRC decision aid names a mechanism, the sign-off states its status:
    not needed, in progress (with an expected date) or done (with a reference).
    """
    _require(
        actor,
        "assessments.sign_off_dataexportassessment",
        _("Only a legal reviewer may sign off a data-export assessment."),
    )
    today = timezone.localdate()
    review_by = review_by or default_review_by(today)
    errors = review_by_errors(review_by, signed_on=today)
    if errors:
        raise ValidationError({"review_by": errors})
    answers = assessment.answer_map()
    aid = prc_aid(answers, on=today)
    stated = {
        "status": mechanism_status or None,
        "expected_on": mechanism_expected_on,
        "reference": mechanism_reference,
    }
    refusals: dict[str, list[str]] = {}
    blockers = sign_off_blockers(answers, conclusion=assessment.conclusion, aid=aid)
    if blockers:
        refusals["sign_off"] = blockers
    for field, message in mechanism_status_errors(aid.mechanism, today=today, **stated).items():
        refusals[field] = [message]
    if refusals:
        raise ValidationError(refusals)
    reason = f"Signed off by {_who(actor)}; review by {review_by.isoformat()}"
    fields = stated_fields(aid.mechanism, **stated)
    if fields["mechanism_status"]:
        reason += f"; {aid.mechanism}: {fields['mechanism_status']}"
    return tracked_update(
        assessment,
        actor=actor,
        reason=reason,
        fields={
            "signed_off_by": actor,
            "signed_off_at": timezone.now(),
            "review_by": review_by,
            "voided_sign_off": "",
            **fields,
        },
        expected_version=expected_version,
    )


# --- The facts auditors ask for (docs/rules/data-export.md#audit-facts) ----------------
#
# Each is a fact about the data and the vendor that the register judges on its own
# (a finding for each gap), so recording one does not void the legal sign-off; an
# approval relies on them, and a change after it makes the approval stale.


class _Listed:
    """What the data inventory and the list of model-weight files have in common."""

    def __init__(self, model, fields: tuple[str, ...], name_field: str, code: str) -> None:
        self.model, self.fields, self.name_field, self.code = model, fields, name_field, code

    def permission(self, action: str) -> str:
        return f"assessments.{action}_{self.model._meta.model_name}"

    def values(self, given: dict[str, Any]) -> dict[str, Any]:
        values = {name: given[name] for name in self.fields if name in given}
        for name, value in values.items():
            if isinstance(value, str):
                values[name] = value.strip()
        if "sha256" in values:
            values["sha256"] = normal_sha256(values["sha256"])
        return values

    def check_unique(self, assessment_id: int, name: str, *, exclude: int | None = None) -> None:
        """One row per name on an assessment; checked under the assessment's lock."""
        same = self.model.objects.filter(assessment_id=assessment_id, **{self.name_field: name})
        if exclude is not None:
            same = same.exclude(pk=exclude)
        if same.exists():
            raise ValidationError(
                {self.name_field: _("“%(name)s” is listed on this assessment already.")
                 % {"name": name}}
            )  # fmt: skip


DATASETS = _Listed(
    ExportedDataset,
    ("name", "size_gb", "data_format", "sensitivity", "sync_window"),
    "name",
    "dataset",
)
WEIGHT_FILES = _Listed(ModelWeightFile, ("file_name", "sha256", "size_bytes"), "file_name", "file")


def _lock(assessment_id: int) -> None:
    # Two writes to one assessment's lists at once: the second waits, then sees the first.
    DataExportAssessment.objects.select_for_update().get(pk=assessment_id)


def _listed_add(kind: _Listed, *, actor, assessment, fields: dict[str, Any], reason: str):
    _require(actor, kind.permission("add"), _("You may not add to this assessment's lists."))
    values = kind.values(fields)
    with transaction.atomic():
        _lock(assessment.pk)
        kind.check_unique(assessment.pk, values.get(kind.name_field, ""))
        return tracked_create(
            kind.model, actor=actor, reason=reason, assessment=assessment, **values
        )


def _listed_update(kind: _Listed, *, actor, row, fields, reason: str, expected_version):
    _require(actor, kind.permission("change"), _("You may not change this assessment's lists."))
    values = kind.values(fields)
    with transaction.atomic():
        _lock(row.assessment_id)
        if kind.name_field in values:
            kind.check_unique(row.assessment_id, values[kind.name_field], exclude=row.pk)
        return tracked_update(
            row, actor=actor, reason=reason, fields=values, expected_version=expected_version
        )


def _listed_remove(kind: _Listed, *, actor, row, reason: str, expected_version) -> None:
    _require(
        actor, kind.permission("delete"), _("You may not remove from this assessment's lists.")
    )
    if not (reason or "").strip():
        raise ValidationError({"change_reason": _("Say why this is removed.")})
    with transaction.atomic():
        _lock(row.assessment_id)
        current = kind.model.objects.filter(pk=row.pk).first()
        if current is None:
            raise StateConflict({kind.code: [_("Someone else removed it already.")]})
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        tracked_delete(current, actor=actor, reason=reason)


def dataset_add(*, actor, assessment, fields: dict[str, Any], reason: str = "Dataset listed"):
    """List a dataset that leaves for the rented compute: name, size in GB, format,
    sensitivity and sync window."""
    return _listed_add(DATASETS, actor=actor, assessment=assessment, fields=fields, reason=reason)


def dataset_update(*, actor, dataset, fields: dict[str, Any], reason: str, expected_version=None):
    return _listed_update(
        DATASETS,
        actor=actor,
        row=dataset,
        fields=fields,
        reason=reason,
        expected_version=expected_version,
    )


def dataset_remove(*, actor, dataset, reason: str, expected_version=None) -> None:
    _listed_remove(
        DATASETS, actor=actor, row=dataset, reason=reason, expected_version=expected_version
    )


def weight_file_add(
    *, actor, assessment, fields: dict[str, Any], reason: str = "Model-weight file listed"
):
    """List a model-weight file deployed: its file name, SHA-256 and size in bytes."""
    return _listed_add(
        WEIGHT_FILES, actor=actor, assessment=assessment, fields=fields, reason=reason
    )


def weight_file_update(
    *, actor, weight_file, fields: dict[str, Any], reason: str, expected_version=None
):
    return _listed_update(
        WEIGHT_FILES,
        actor=actor,
        row=weight_file,
        fields=fields,
        reason=reason,
        expected_version=expected_version,
    )


def weight_file_remove(*, actor, weight_file, reason: str, expected_version=None) -> None:
    _listed_remove(
        WEIGHT_FILES, actor=actor, row=weight_file, reason=reason, expected_version=expected_version
    )


def audit_facts_save(
    *,
    actor,
    assessment: DataExportAssessment,
    fields: dict[str, Any],
    reason: str,
    expected_version: int | None = None,
) -> DataExportAssessment:
    """Record encryption at rest and in transit (yes, with how / no / not stated) and the
    days the vendor keeps its logs; only the fields given change."""
    _require(actor, "assessments.change_dataexportassessment", _("You may not edit assessments."))
    if not (reason or "").strip():
        raise ValidationError({"change_reason": _("Say why these facts are being changed.")})
    with transaction.atomic():
        current = DataExportAssessment.objects.select_for_update().get(pk=assessment.pk)
        if expected_version is not None and current.version != expected_version:
            raise ConcurrentEditError(current, expected_version)
        changes, errors = fact_changes(vars(current), fields)
        if errors:
            raise ValidationError({name: [message] for name, message in errors.items()})
        if not changes:
            return current
        return tracked_update(current, actor=actor, reason=reason, fields=changes)

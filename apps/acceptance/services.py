"""Writes: acceptance plans, engineers' results and attachments, sign-off, and the case's
move to "accepted".

The move approved → accepted lives in ``case_accept`` alone; a sign-off voided by
a later change moves an accepted case back to approved (``acceptance_signoff_void``).
"""

import hashlib
import uuid
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.template.defaultfilters import filesizeformat
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.acceptance import rules
from apps.acceptance.models import (
    DEFAULT_ERROR_RATE_TOLERANCE_POINTS,
    DEFAULT_LATENCY_TOLERANCE_PCT,
    DEFAULT_THROUGHPUT_TOLERANCE_PCT,
    TRAINING_FIELDS,
    AcceptanceAttachment,
    AcceptancePlan,
    AcceptanceResult,
    AcceptanceSignOff,
    Layer,
)
from apps.acceptance.selectors import acceptance_state, offer_approval, signoff_scopes
from apps.approvals.binding import capture, changes_for
from apps.cases.lifecycle import case_lock, case_transition
from apps.cases.models import ProcurementCase
from apps.core.services import tracked_create, tracked_update
from apps.core.uploads import LOGS_AND_SCREENSHOTS, file_kind

Status = ProcurementCase.Status
PLAN_FIELDS = (
    "soak_minutes",
    "expected_versions",
    "correctness_pass_pct",
    # The stored correctness_tolerance is no longer edited: each answer is compared by its
    # own item's comparison (docs/rules/acceptance.md#correctness).
    "ladder",
    "required_safe_concurrency",
    "fault_minimum",
    "baseline_throughput_tolerance_pct",
    "baseline_latency_tolerance_pct",
    "baseline_error_rate_tolerance_points",
    *TRAINING_FIELDS,
    "notes",
)
BASELINE_TOLERANCE_DEFAULTS = {
    "baseline_throughput_tolerance_pct": DEFAULT_THROUGHPUT_TOLERANCE_PCT,
    "baseline_latency_tolerance_pct": DEFAULT_LATENCY_TOLERANCE_PCT,
    "baseline_error_rate_tolerance_points": DEFAULT_ERROR_RATE_TOLERANCE_POINTS,
}
RESULT_FIELDS = (
    "layer",
    "fault_kind",
    "activity",
    "outcome",
    "notes",
    "resumed_from_checkpoint",
    "duplicated_data",
    "performed_at",
)


def attachment_max_bytes() -> int:
    return settings.ACCEPTANCE_ATTACHMENT_MAX_BYTES


def _require(actor, permission: str, message: str) -> None:
    if not actor.has_perm(permission):
        raise PermissionDenied(message)


def _check_ladder(fields: dict) -> None:
    if "ladder" in fields:
        try:
            fields["ladder"] = ",".join(map(str, rules.parse_ladder(str(fields["ladder"]))))
        except ValueError as error:
            raise ValidationError({"ladder": _("Not a ladder: %(e)s.") % {"e": error}}) from None


def _check_versions(fields: dict) -> None:
    """docs/rules/acceptance.md#versions-the-plan-expects: each item a name and a version."""
    if "expected_versions" in fields:
        text = str(fields["expected_versions"] or "")
        try:
            rules.parse_versions(text)
        except ValueError as error:
            raise ValidationError(
                {"expected_versions": _("Not a list of versions: %(e)s.") % {"e": error}}
            ) from None
        fields["expected_versions"] = text.strip()


def acceptance_plan_create(*, actor, offer, **fields) -> AcceptancePlan:
    """A plan for an approved offer, or one prepared while the case awaits its decision."""
    _require(actor, "acceptance.add_acceptanceplan", _("Only a tech lead plans an acceptance."))
    unknown = set(fields) - set(PLAN_FIELDS)
    if unknown:
        raise ValidationError(_("Unknown fields: %(f)s") % {"f": ", ".join(sorted(unknown))})
    case = offer.case
    if offer_approval(offer) is None and case.status != Status.PENDING_APPROVAL:
        raise ValidationError(
            {
                "offer": _(
                    "This offer is not approved: plan the acceptance of an approved offer, "
                    "or prepare one while the case is pending approval."
                )
            }
        )
    if AcceptancePlan.objects.filter(offer=offer).exists():
        raise ValidationError({"offer": _("This offer already has an acceptance plan.")})
    _check_ladder(fields)
    _check_versions(fields)
    # A new plan states its baseline tolerances; plans older than them read the defaults.
    for name, default in BASELINE_TOLERANCE_DEFAULTS.items():
        if fields.get(name) is None:
            fields[name] = default
    plan = tracked_create(
        AcceptancePlan,
        actor=actor,
        reason="Acceptance planned",
        case=case,
        offer=offer,
        created_by=actor,
        **fields,
    )
    _settle_after_commit(offer.pk)
    return plan


def acceptance_plan_update(
    *, actor, plan: AcceptancePlan, fields: dict, reason: str, expected_version=None
) -> AcceptancePlan:
    _require(actor, "acceptance.change_acceptanceplan", _("Only a tech lead edits the plan."))
    unknown = set(fields) - set(PLAN_FIELDS)
    if unknown:
        raise ValidationError(_("Unknown fields: %(f)s") % {"f": ", ".join(sorted(unknown))})
    _check_ladder(fields)
    _check_versions(fields)
    with transaction.atomic():
        plan = tracked_update(
            plan, actor=actor, reason=reason, fields=fields, expected_version=expected_version
        )
        _void_after_change(plan, actor=actor, what=_("the plan was edited"))
    return plan


def _clean_result(fields: dict) -> dict:
    unknown = set(fields) - set(RESULT_FIELDS)
    if unknown:
        raise ValidationError(_("Unknown fields: %(f)s") % {"f": ", ".join(sorted(unknown))})
    errors = {}
    if fields.get("fault_kind") and fields.get("layer") != Layer.STABILITY:
        errors["fault_kind"] = _("Only a stability and recovery result injects a fault.")
    performed = fields.get("performed_at")
    if performed is not None and performed > timezone.now() + timedelta(minutes=5):
        errors["performed_at"] = _("A result cannot be performed in the future.")
    if errors:
        raise ValidationError(errors)
    return fields


def acceptance_result_record(*, actor, plan: AcceptancePlan, **fields) -> AcceptanceResult:
    _require(actor, "acceptance.add_acceptanceresult", _("Only a tech lead records results."))
    fields = _clean_result({"performed_at": timezone.now(), **fields})
    with transaction.atomic():
        result = tracked_create(
            AcceptanceResult,
            actor=actor,
            reason=f"Result recorded: {fields.get('activity', '')}"[:200],
            plan=plan,
            recorded_by=actor,
            **fields,
        )
        _void_after_change(plan, actor=actor, what=_("a result was recorded"))
    return result


def acceptance_result_update(
    *, actor, result: AcceptanceResult, fields: dict, reason: str, expected_version=None
) -> AcceptanceResult:
    _require(actor, "acceptance.change_acceptanceresult", _("Only a tech lead edits results."))
    merged = {name: getattr(result, name) for name in RESULT_FIELDS} | fields
    _clean_result(merged)
    with transaction.atomic():
        result = tracked_update(
            result, actor=actor, reason=reason, fields=fields, expected_version=expected_version
        )
        _void_after_change(result.plan, actor=actor, what=_("a result was changed"))
    return result


def acceptance_attachment_add(*, actor, result: AcceptanceResult, upload) -> AcceptanceAttachment:
    """Store a log or screenshot under a new name with its SHA-256; a refusal stores nothing."""
    _require(actor, "acceptance.add_acceptanceattachment", _("Only a tech lead attaches evidence."))
    limit = attachment_max_bytes()
    # The size is checked before a byte is read: an upload over the limit is never loaded.
    if upload.size is None or upload.size > limit:
        raise ValidationError(
            {"file": _("The file is larger than %(limit)s.") % {"limit": filesizeformat(limit)}}
        )
    if upload.size == 0:
        raise ValidationError({"file": _("The file is empty.")})
    try:
        name, extension, kind = file_kind(upload, LOGS_AND_SCREENSHOTS)
    except ValidationError as error:
        raise ValidationError({"file": error.messages}) from None
    raw = upload.read(limit + 1)
    if len(raw) > limit:
        raise ValidationError(
            {"file": _("The file is larger than %(limit)s.") % {"limit": filesizeformat(limit)}}
        )
    sha = hashlib.sha256(raw).hexdigest()
    # A fresh name per upload: an existing attachment is never overwritten.
    wanted = f"acceptance/{result.plan_id}/{uuid.uuid4().hex}{extension}"
    saved = None
    try:
        with transaction.atomic():
            saved = default_storage.save(wanted, ContentFile(raw))
            attachment = tracked_create(
                AcceptanceAttachment,
                actor=actor,
                reason=f"Attached {name} to result #{result.pk}",
                plan_id=result.plan_id,
                result=result,
                name=name,
                content_type=kind.content_type,
                size_bytes=len(raw),
                sha256=sha,
                storage_name=saved,
                uploaded_by=actor,
            )
            _void_after_change(result.plan, actor=actor, what=_("an attachment was added"))
    except BaseException:
        if saved:
            default_storage.delete(saved)
        raise
    return attachment


def acceptance_signoff(*, actor, plan: AcceptancePlan, comment: str) -> AcceptanceSignOff:
    """A second tech lead signs off a passed acceptance; the case becomes accepted."""
    _require(
        actor, "acceptance.signoff_acceptanceplan", _("Only a tech lead signs off an acceptance.")
    )
    if not (comment or "").strip():
        raise ValidationError({"comment": _("A sign-off needs a comment.")})
    with transaction.atomic():
        case_lock(plan.case)  # the case first, as every lifecycle move locks it
        plan = (
            AcceptancePlan.objects.select_for_update()
            .select_related("case", "offer")
            .get(pk=plan.pk)
        )
        state = acceptance_state(plan)
        if actor.pk in state.recorders:
            raise PermissionDenied(
                _("You recorded results of this acceptance; another tech lead signs it off.")
            )
        errors = []
        if state.approval is None:
            errors.append(_("The offer has no approval in force."))
        elif (
            state.approval.stale_at is not None or changes_for([state.approval])[state.approval.pk]
        ):
            errors.append(_("The offer's approval is stale: it needs a fresh decision first."))
        if state.overall != rules.PASSED:
            errors += [
                f"{title}: {reason}"
                for title, layer in state.layer_rows
                for reason in layer.reasons
            ] or [_("Not every layer has passed.")]
        if plan.case.status not in (Status.APPROVED, Status.ACCEPTED):
            errors.append(
                _("The case is '%(status)s'; only an approved case can be accepted.")
                % {"status": plan.case.get_status_display()}
            )
        if errors:
            raise ValidationError({"plan": errors})
        for earlier in AcceptanceSignOff.objects.filter(plan=plan, voided_at__isnull=True):
            tracked_update(
                earlier,
                actor=actor,
                reason="Superseded by a new sign-off",
                fields={"voided_at": timezone.now(), "void_reason": "superseded"},
            )
        signoff = tracked_create(
            AcceptanceSignOff,
            actor=actor,
            reason=f"Signed off: {comment.strip()}"[:500],
            plan=plan,
            signed_by=actor,
            signed_at=timezone.now(),
            comment=comment.strip(),
            layers=[
                {"layer": layer.layer, "status": layer.status, "reasons": layer.reasons}
                for layer in state.layers
            ],
            bound_state={
                "records": capture(signoff_scopes(plan)),
                "evidence": state.measurements.evidence,
            },
        )
        case_accept(actor=actor, plan=plan, signoff=signoff)
    return signoff


def case_accept(*, actor, plan: AcceptancePlan, signoff: AcceptanceSignOff) -> ProcurementCase:
    """Approved → accepted: every layer passed and a current sign-off (issue #9 item 4)."""
    with transaction.atomic():
        case = case_lock(plan.case)
        if case.status == Status.ACCEPTED:
            return case
        return case_transition(
            actor=actor,
            case=case,
            target=Status.ACCEPTED,
            expect={Status.APPROVED},
            message=_("Only an approved case can be accepted."),
            reason=(
                f"Accepted: {plan.offer} passed all four layers, signed off by {signoff.signed_by}"
            ),
        )


def acceptance_signoff_void(*, actor, signoff: AcceptanceSignOff, reason: str):
    """A sign-off no longer matches what it saw; an accepted case goes back to approved."""
    with transaction.atomic():
        # The case first, as every lifecycle move locks it; then the sign-off,
        # re-read so that two voids at once record it once.
        case = case_lock(signoff.plan.case)
        signoff = AcceptanceSignOff.objects.select_for_update().get(pk=signoff.pk)
        if signoff.voided_at is not None:
            return signoff
        signoff = tracked_update(
            signoff,
            actor=actor,
            reason=f"Void: {reason}"[:500],
            fields={"voided_at": timezone.now(), "void_reason": reason[:1000]},
        )
        if case.status == Status.ACCEPTED:
            case_transition(
                actor=actor,
                case=case,
                target=Status.APPROVED,
                expect={Status.ACCEPTED},
                reason=f"Acceptance sign-off #{signoff.pk} void: {reason}"[:500],
            )
    return signoff


def _settle_after_commit(offer_id: int) -> None:
    """What the plan holds may settle an approval subject to acceptance of its offer
    (the task module imports this one, so it is read here, when first needed)."""
    from apps.acceptance.tasks import settle_after_commit

    settle_after_commit(offer_id)


def _void_after_change(plan: AcceptancePlan, *, actor, what: str) -> None:
    _settle_after_commit(plan.offer_id)
    for signoff in AcceptanceSignOff.objects.filter(plan=plan, voided_at__isnull=True):
        acceptance_signoff_void(actor=actor, signoff=signoff, reason=what)


def stale_signoffs_void(*, actor=None) -> list[AcceptanceSignOff]:
    """Void every current sign-off whose evidence or records changed elsewhere (new bundles…)."""
    current = list(AcceptanceSignOff.objects.filter(voided_at__isnull=True).select_related("plan"))
    changes = changes_for(current)
    voided = []
    for signoff in current:
        found = changes.get(signoff.pk) or []
        if found:
            summary = "; ".join(str(c) for c in found)
            voided.append(acceptance_signoff_void(actor=actor, signoff=signoff, reason=summary))
    return voided

"""Writes to procurement cases; status moves go through ``apps.cases.lifecycle``."""

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from apps.cases.lifecycle import case_lock, case_transition
from apps.cases.models import ProcurementCase
from apps.core.services import tracked_create, tracked_update

EDITABLE_FIELDS = (
    "name",
    "workload",
    "requirements",
    "slo_p95_ttft_ms",
    "slo_error_rate_pct",
    "slo_peak_memory_pct",
    "exit_window_days",
    "availability_need_pct",
)


def case_create(*, actor, **fields: Any) -> ProcurementCase:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValidationError({name: _("This field cannot be set here.") for name in unknown})
    return tracked_create(ProcurementCase, actor=actor, reason="Case opened", owner=actor, **fields)


def case_update(
    *, actor, case: ProcurementCase, fields: dict[str, Any], reason: str, expected_version=None
) -> ProcurementCase:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValidationError({name: _("This field cannot be changed here.") for name in unknown})
    return tracked_update(
        case, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )


def case_offer_minimum_waive(*, actor, case: ProcurementCase, reason: str) -> ProcurementCase:
    """Record why this case may be decided with fewer than three offers
    (docs/rules/offers.md#offer-minimum)."""
    if not actor.has_perm("cases.waive_offer_minimum"):
        raise PermissionDenied(_("Only a procurement reviewer may waive the three-offer minimum."))
    if not reason.strip():
        raise ValidationError({"offer_minimum_waiver": _("A waiver needs a reason.")})
    return tracked_update(
        case,
        actor=actor,
        reason=f"Three-offer minimum waived: {reason.strip()}",
        fields={"offer_minimum_waiver": reason.strip()},
    )


def case_evaluation_start(*, actor, case: ProcurementCase) -> ProcurementCase:
    """Draft → evaluating, once the first offer is on the case."""
    with transaction.atomic():
        case = case_lock(case)
        if case.status != ProcurementCase.Status.DRAFT:
            return case
        return case_transition(
            actor=actor,
            case=case,
            target=ProcurementCase.Status.EVALUATING,
            reason="Evaluation started: first offer added",
        )

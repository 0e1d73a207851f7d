"""Writes to a case's compute demand and its requirement spec."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from apps.core.services import ConcurrentEditError, tracked_create, tracked_update
from apps.sizing.calculator import SizingInputError
from apps.sizing.inputs import size_from
from apps.sizing.models import ComputeDemand, RequirementSpec
from apps.sizing.requirement import SPEC_FIELDS, requirement_problems

DEMAND_FIELDS = (
    "mode",
    "model_preset",
    "model_name",
    "parameters",
    "layers",
    "hidden_size",
    "attention_heads",
    "kv_heads",
    "head_dim",
    "weight_dtype",
    "card_memory_gib",
    "reserve_pct",
    "kv_dtype",
    "context_tokens",
    "target_concurrency",
    "tensor_parallel",
    "micro_batch_sequences",
    "sequence_tokens",
    "optimizer",
    "gradient_checkpointing",
    "data_parallel_replicas",
    "checkpoints_kept",
    "hours_needed",
)


def compute_demand_save(
    *, actor, case, fields: dict[str, Any], reason: str = "", expected_version=None
) -> ComputeDemand:
    """Save sizing inputs as the case's demand, after checking they compute."""
    fields = {k: v for k, v in fields.items() if k in DEMAND_FIELDS}
    try:
        size_from(fields)
    except SizingInputError as error:
        raise ValidationError({error.field: error.message}) from None
    existing = ComputeDemand.objects.filter(case=case).first()
    if existing is None:
        return tracked_create(
            ComputeDemand,
            actor=actor,
            reason="Compute demand saved from the calculator",
            case=case,
            **fields,
        )
    return tracked_update(
        existing,
        actor=actor,
        reason=reason or "Compute demand recalculated",
        fields=fields,
        expected_version=expected_version,
    )


def requirement_spec_save(
    *, actor, case, fields: dict[str, Any], reason: str = "", expected_version=None
) -> RequirementSpec:
    """Create or change the case's requirement spec; a spec that contradicts itself is refused."""
    unknown = set(fields) - set(SPEC_FIELDS)
    if unknown:
        raise ValidationError(
            {name: _("This field cannot be set here.") for name in sorted(unknown)}
        )
    existing = RequirementSpec.objects.filter(case=case).first()
    merged = {name: getattr(existing, name) for name in SPEC_FIELDS} if existing else {}
    problems = requirement_problems({**merged, **fields})
    if problems:
        raise ValidationError(problems)
    if existing is not None:
        return tracked_update(
            existing,
            actor=actor,
            reason=reason,
            fields=fields,
            expected_version=expected_version,
        )
    try:
        with transaction.atomic():
            return tracked_create(
                RequirementSpec,
                actor=actor,
                reason=reason.strip() or "Requirement spec written",
                case=case,
                **fields,
            )
    except IntegrityError:
        # Someone saved the case's first spec a moment earlier: theirs stands.
        current = RequirementSpec.objects.get(case=case)
        raise ConcurrentEditError(current, expected_version or 0) from None

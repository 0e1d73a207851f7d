"""Reads of a case's compute demand and requirement spec, and how each offer measures up."""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from apps.core.reads import shared_read
from apps.sizing.calculator import SizingInputError
from apps.sizing.fit import DemandFit, OfferHardware, demand_fit
from apps.sizing.inputs import demand_fields, size_from
from apps.sizing.models import ComputeDemand, RequirementSpec
from apps.sizing.requirement import (
    REQUIREMENT_FIELDS,
    SPEC_FIELDS,
    Derivation,
    RequirementCheck,
    check_offer,
    derive_requirement,
    offer_declared,
    shown_value,
)


@shared_read
def demand_of(case) -> ComputeDemand | None:
    """The case's saved compute demand, or None (1 query)."""
    return ComputeDemand.objects.filter(case_id=case.pk).first()


def demand_result(demand: ComputeDemand | None):
    """(result, error message) for a saved demand."""
    if demand is None:
        return None, ""
    try:
        return size_from(demand_fields(demand)), ""
    except SizingInputError as error:
        return None, str(error)


def offer_hardware(*, offer, spec, demand: ComputeDemand) -> OfferHardware:
    """The offer's declared hardware; card memory falls back to the demand's when unstated."""
    memory = getattr(spec, "memory_per_card_gib", None) if spec is not None else None
    return OfferHardware(
        card_count=offer.accelerator_count,
        card_memory_gib=Decimal(memory) if memory else demand.card_memory_gib,
        cards_per_node=getattr(spec, "cards_per_node", None),
        inter_node_network=getattr(spec, "inter_node_network", "") or "",
        local_nvme_tb=getattr(spec, "local_nvme_tb", None),
    )


def capacity_for_offer(*, demand: ComputeDemand | None, result, offer, spec) -> DemandFit | None:
    """Does this offer's hardware cover the saved demand, inference or training?"""
    if demand is None or result is None:
        return None
    return demand_fit(
        sizing=result,
        hardware=offer_hardware(offer=offer, spec=spec, demand=demand),
        replicas=demand.data_parallel_replicas,
        checkpoints_kept=demand.checkpoints_kept,
    )


@shared_read
def requirement_of(case) -> RequirementSpec | None:
    """The case's saved requirement spec, or None (1 query)."""
    return RequirementSpec.objects.filter(case_id=case.pk).first()


def requirements_of_cases(case_ids) -> dict[int, RequirementSpec]:
    """The saved requirement spec of each of many cases that has one, by case (1 query)."""
    return {spec.case_id: spec for spec in RequirementSpec.objects.filter(case_id__in=case_ids)}


def requirement_values(requirement: RequirementSpec) -> dict[str, Any]:
    """Every item of the saved spec, and its tolerance."""
    return {name: getattr(requirement, name) for name in SPEC_FIELDS}


def requirement_derivation(demand: ComputeDemand | None, result=None) -> Derivation | None:
    """What the saved compute demand says of the requirement; None without a demand."""
    if demand is None:
        return None
    if result is None:
        result, _error = demand_result(demand)
    return derive_requirement(
        sizing=result,
        card_memory_gib=demand.card_memory_gib,
        replicas=demand.data_parallel_replicas,
        checkpoints_kept=demand.checkpoints_kept,
        hours_needed=demand.hours_needed,
    )


@dataclass(frozen=True)
class RequirementItem:
    """One item of the requirement as a page shows it: its value and where it came from."""

    field: str
    label: str
    value: Any
    from_sizing: bool  # the saved value is the one the sizing gives
    sizing_value: Any  # what the sizing gives now (None: it does not decide this item)
    reason: str  # why the sizing gives that value

    @property
    def shown(self) -> str:
        return shown_value(self.field, self.value)

    @property
    def sizing_shown(self) -> str:
        return shown_value(self.field, self.sizing_value)


def requirement_items(
    requirement: RequirementSpec | None, derivation: Derivation | None
) -> list[RequirementItem]:
    """Every item with its provenance; without a saved spec, the sizing's values."""
    derived = derivation.values if derivation else {}
    reasons = derivation.reasons if derivation else {}
    items = []
    for name in REQUIREMENT_FIELDS:
        field = RequirementSpec._meta.get_field(name)
        value = getattr(requirement, name) if requirement else derived.get(name)
        sizing_value = derived.get(name)
        items.append(
            RequirementItem(
                field=name,
                label=str(field.verbose_name),  # type: ignore[union-attr]
                value=value,
                from_sizing=name in derived and _same(value, sizing_value),
                sizing_value=sizing_value,
                reason=reasons.get(name, ""),
            )
        )
    return items


def _same(saved: Any, derived: Any) -> bool:
    if isinstance(derived, Decimal) and saved is not None:
        return Decimal(saved) == derived
    return saved == derived


def requirement_check_for(requirement: RequirementSpec | None, offer) -> RequirementCheck | None:
    """One offer's declared spec against the saved requirement; None without one."""
    if requirement is None:
        return None
    spec = getattr(offer, "declared_spec", None)
    return check_offer(requirement_values(requirement), offer_declared(offer, spec))


def requirement_checks(case, offers) -> list[tuple[Any, RequirementCheck | None]]:
    """Each offer of the case with its check against the case's requirement spec."""
    requirement = requirement_of(case)
    return [(offer, requirement_check_for(requirement, offer)) for offer in offers]

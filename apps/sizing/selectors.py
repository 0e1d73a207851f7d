"""Reads of a case's compute demand and how each offer measures up to it."""

from decimal import Decimal

from apps.sizing.calculator import SizingInputError, offer_capacity
from apps.sizing.inputs import demand_fields, size_from
from apps.sizing.models import ComputeDemand


def demand_result(demand: ComputeDemand | None):
    """(result, error message) for a saved demand."""
    if demand is None:
        return None, ""
    try:
        return size_from(demand_fields(demand)), ""
    except SizingInputError as error:
        return None, str(error)


def capacity_for_offer(*, demand: ComputeDemand | None, result, offer, spec):
    """Does this offer's hardware cover the saved inference demand?"""
    if demand is None or result is None or demand.mode != ComputeDemand.Mode.INFERENCE:
        return None
    memory = getattr(spec, "memory_per_card_gib", None) if spec is not None else None
    assert demand.tensor_parallel is not None  # the inference sizing (result) required it
    return offer_capacity(
        sizing=result,
        tensor_parallel=demand.tensor_parallel,
        card_count=offer.accelerator_count,
        card_memory_gib=Decimal(memory) if memory else demand.card_memory_gib,
    )

"""Reads of a case's compute demand and how each offer measures up to it."""

from decimal import Decimal

from apps.cases.reads import shared_read
from apps.sizing.calculator import SizingInputError
from apps.sizing.fit import DemandFit, OfferHardware, demand_fit
from apps.sizing.inputs import demand_fields, size_from
from apps.sizing.models import ComputeDemand


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

"""The packet's own sections, drawn from several areas: the demand, the comparison of
offers and the declared specs.

An app adds a section by exposing ``packet_section(case) -> PacketSection | None``
in a module listed in ``apps.casework.packet.chapters``. A section may name the history
querysets of its records (they join the change history and the manifest) and its evidence files as
``(name, storage path, expected SHA-256)`` (re-hashed from storage for the
manifest). Every section must gather its data in a fixed number of queries.

The order the chapters are printed in is set once, in ``chapters``: the executive
summary first, the change history and the manifest last.
"""

from django.utils.translation import gettext as _

from apps.core.contributions import PacketSection
from apps.evidence.selectors import case_verifications
from apps.scorecards.charts import stacked_bars
from apps.scorecards.selectors import case_comparison
from apps.scorecards.unit_cost import unit_cost
from apps.sizing.models import ComputeDemand
from apps.sizing.selectors import (
    capacity_for_offer,
    demand_result,
    requirement_check_for,
    requirement_derivation,
    requirement_items,
    requirement_of,
)


def demand_section(case, offers) -> PacketSection:
    demand = ComputeDemand.objects.filter(case=case).first()
    result, error = demand_result(demand)
    capacities = [
        (
            offer,
            capacity_for_offer(
                demand=demand,
                result=result,
                offer=offer,
                spec=getattr(offer, "declared_spec", None),
            ),
        )
        for offer in offers
    ]
    return PacketSection(
        title=_("Compute demand and sizing"),
        template="packets/sections/demand.html",
        context={"demand": demand, "result": result, "error": error, "capacities": capacities},
    )


def comparison_section(case) -> PacketSection:
    comparison = case_comparison(case)
    verifications = case_verifications(case)
    unit_costs = [
        unit_cost(
            row.price,
            verifications[row.offer.pk].headline if row.offer.pk in verifications else None,
        )
        for row in comparison.rows
    ]
    matrix = []
    for criterion in comparison.criteria:
        cells = []
        for row in comparison.rows:
            mean = row.score.criterion_means.get(criterion.key)
            cells.append(None if mean is None else (mean, criterion.weight * mean / 5))
        matrix.append((criterion, cells))
    return PacketSection(
        title=_("Comparison of offers and scorecards"),
        template="packets/sections/comparison.html",
        context={
            "comparison": comparison,
            "chart": stacked_bars(comparison.rows, comparison.criteria),
            "matrix": matrix,
            # Each offer's cost per unit of work, in the order of ``comparison.rows``.
            "unit_costs": list(zip(comparison.rows, unit_costs, strict=True)),
        },
    )


def declared_specs_section(offers, case=None) -> PacketSection:
    """Each offer's declared spec, and (given the case) each checked against its requirement."""
    requirement = requirement_of(case) if case is not None else None
    derivation = None
    if requirement is not None:
        derivation = requirement_derivation(ComputeDemand.objects.filter(case=case).first())
    return PacketSection(
        title=_("Declared specs"),
        template="packets/sections/specs.html",
        context={
            "offers": offers,
            "requirement": requirement,
            "items": requirement_items(requirement, derivation) if requirement else [],
            "offer_checks": [
                (offer, requirement_check_for(requirement, offer)) for offer in offers
            ],
        },
    )

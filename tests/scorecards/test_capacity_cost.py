"""The cost of the capacity a plan needs: whole nodes × hours × price, worked by hand."""

from decimal import Decimal

import pytest

from apps.scorecards.pricing import PricingInputError, capacity_cost


@pytest.mark.parametrize(
    "nodes,cpn,price,hours,gpus,per_hour,total",
    [
        # 3 nodes × 8 = 24 GPUs × 500 h × 3.1372 = 37,646.40
        (3, 8, Decimal("3.1372"), Decimal(500), 24, Decimal("75.2928"), Decimal("37646.4000")),
        (1, 8, Decimal("2"), Decimal("0.1"), 8, Decimal(16), Decimal("1.6")),
        (0, 8, Decimal("2"), Decimal(10), 0, Decimal(0), Decimal(0)),
        (11, 6, Decimal("2"), None, 66, Decimal(132), None),  # hours not stated: per hour only
    ],
)
def test_capacity_cost(nodes, cpn, price, hours, gpus, per_hour, total):
    cost = capacity_cost(
        nodes=nodes, cards_per_node=cpn, cost_per_gpu_hour=price, hours=hours, currency="USD"
    )
    assert (cost.gpus, cost.per_hour, cost.total) == (gpus, per_hour, total)
    noun = "node" if nodes == 1 else "nodes"
    assert cost.explanation[0].startswith(f"Capacity needed: {nodes:,} whole {noun} ×")
    assert len(cost.explanation) == (2 if hours is None else 3)


def test_the_explanation_shows_the_sum():
    cost = capacity_cost(
        nodes=3, cards_per_node=8, cost_per_gpu_hour=Decimal("3.1372"), hours=Decimal(500)
    )
    assert cost.explanation[-1] == "For the plan: 24 GPUs × 500 h × 3.1372 = 37,646.40"


@pytest.mark.parametrize(
    "change,field",
    [
        ({"nodes": -1}, "nodes"),
        ({"nodes": True}, "nodes"),
        ({"cards_per_node": 0}, "cards_per_node"),
        ({"cost_per_gpu_hour": 2.5}, "cost_per_gpu_hour"),
        ({"cost_per_gpu_hour": Decimal(-1)}, "cost_per_gpu_hour"),
        ({"hours": Decimal(0)}, "hours"),
    ],
)
def test_bad_inputs_are_refused_by_name(change, field):
    arguments = {
        "nodes": 1,
        "cards_per_node": 8,
        "cost_per_gpu_hour": Decimal(2),
        "hours": Decimal(1),
    } | change
    with pytest.raises(PricingInputError) as refused:
        capacity_cost(**arguments)
    assert refused.value.field == field

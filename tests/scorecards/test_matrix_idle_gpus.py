"""An offer rented in whole nodes that the need does not fill says, on the offer matrix,
how many of the GPUs paid for sit idle."""

from decimal import Decimal

import pytest
from django.urls import reverse

from apps.sizing.services import compute_demand_save
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor
from tests.packets.factories import DEMAND

pytestmark = pytest.mark.django_db


def _cost_cell(html: str, offer) -> str:
    row = html.split(f'<tr data-offer="{offer.pk}">', 1)[1].split("</tr>", 1)[0]
    return row.split('data-column="cost"', 1)[1].split("</td>", 1)[0]


def test_the_idle_gpus_of_whole_nodes_are_stated(priya, browser_as):
    case = make_case(priya)
    # The demand needs 64 GPUs (eight instances of eight cards).
    compute_demand_save(actor=priya, case=case, fields={**DEMAND, "hours_needed": Decimal(10)})
    sixes = make_offer(
        priya,
        case,
        vendor=make_vendor(priya, name="Six-card nodes"),
        accelerator_count=66,
        spec={**FULL_SPEC, "cards_per_node": 6},
    )
    eights = make_offer(
        priya, case, vendor=make_vendor(priya, name="Eight-card nodes"), spec=FULL_SPEC
    )
    html = browser_as("priya").get(reverse("scorecards:matrix", args=[case.pk])).content.decode()

    cell = _cost_cell(html, sixes)
    assert "66 GPUs in whole nodes × 10 h" in cell
    assert "2 GPUs paid for and idle: the need is 64 GPUs, rented in whole nodes of 6." in cell
    assert "idle" not in _cost_cell(html, eights)

"""Everything the offer page shows.

Other apps add sections through ``OFFER_PANEL_PROVIDERS``: each module listed
there exposes ``offer_panel(offer, *, actor) -> CasePanel``.
"""

from apps.contracts import panels as contracts_panels
from apps.evidence import panels as evidence_panels
from apps.evidence.selectors import latest_verification
from apps.offers.selectors import spec_status_for
from apps.portal import panels as portal_panels
from apps.scorecards.selectors import needed_capacity_cost, offer_price
from apps.scorecards.unit_cost import unit_cost
from apps.sizing.selectors import (
    capacity_for_offer,
    demand_of,
    demand_result,
    requirement_check_for,
    requirement_of,
)

OFFER_PANEL_PROVIDERS = (contracts_panels, evidence_panels, portal_panels)


def offer_panels(offer, *, actor) -> list:
    panels = []
    for module in OFFER_PANEL_PROVIDERS:
        panel = module.offer_panel(offer, actor=actor)
        if panel is not None:
            panels.append(panel)
    return sorted(panels, key=lambda panel: panel.order)


def offer_overview(offer, *, actor) -> dict:
    spec = offer.declared_spec
    demand = demand_of(offer.case)
    result, _error = demand_result(demand)
    price, price_problem = offer_price(offer)
    verification = latest_verification(offer)
    unit, unit_problem = unit_cost(price, verification.headline if verification else None)
    fit = capacity_for_offer(demand=demand, result=result, offer=offer, spec=spec)
    needed, needed_problem = needed_capacity_cost(
        fit=fit,
        price=price,
        hours=demand.hours_needed if demand else None,
        currency=offer.currency,
    )
    return {
        "offer": offer,
        "case": offer.case,
        "spec": spec,
        "spec_status": spec_status_for(offer),
        "demand": demand,
        "capacity": fit,
        "requirement_check": requirement_check_for(requirement_of(offer.case), offer),
        "needed_cost": needed,
        "needed_cost_problem": needed_problem,
        "price": price,
        "price_problem": price_problem,
        "unit_cost": unit,
        "unit_cost_problem": unit_problem,
        "scorecards": offer.scorecards.select_related("reviewer", "criteria_set"),
        "panels": offer_panels(offer, actor=actor),
    }

"""Everything the case page shows, gathered in a fixed number of queries."""

from apps.cases.selectors import offer_minimum_status
from apps.offers.selectors import offers_of_case
from apps.scorecards.selectors import case_comparison
from apps.sizing.models import ComputeDemand
from apps.sizing.selectors import capacity_for_offer, demand_result


def case_overview(case, *, actor) -> dict:
    offers = offers_of_case(case)
    demand = ComputeDemand.objects.filter(case=case).first()
    result, demand_error = demand_result(demand)
    comparison = case_comparison(case)
    scores = {row.offer.pk: row for row in comparison.rows}
    for offer in offers:
        offer.capacity = capacity_for_offer(
            demand=demand, result=result, offer=offer, spec=getattr(offer, "declared_spec", None)
        )
        offer.comparison = scores.get(offer.pk)
    minimum = offer_minimum_status(offer_count=len(offers), waiver=case.offer_minimum_waiver)
    return {
        "case": case,
        "offers": offers,
        "demand": demand,
        "demand_result": result,
        "demand_error": demand_error,
        "comparison": comparison,
        "offer_minimum": minimum,
        "missing": _missing(offers=offers, demand=demand, minimum=minimum, comparison=comparison),
    }


def _missing(*, offers, demand, minimum, comparison) -> list[str]:
    """What the case still lacks, in the words a reviewer would use."""
    missing = []
    if demand is None:
        missing.append("No compute demand yet: size the workload in the calculator and save it.")
    if not minimum["holds"]:
        missing.append(
            f"{minimum['count']} of {minimum['required']} offers: add offers or record a waiver."
        )
    for offer in offers:
        if not offer.spec_status.confirmed:
            missing.append(
                f"{offer.vendor}: declared spec unconfirmed — missing "
                + ", ".join(offer.spec_status.missing)
            )
    unscored = [str(row.offer.vendor) for row in comparison.rows if row.score.unscored]
    if unscored:
        missing.append("Not scored yet: " + ", ".join(unscored))
    return missing

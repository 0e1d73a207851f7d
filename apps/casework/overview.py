"""Everything the case page shows, gathered in a fixed number of queries.

Records that live in other apps (clause checklists, assessments, access
matrices, evidence, packets…) contribute a panel each: every module listed in
``apps.casework.panels`` exposes ``case_panel(case, *, actor) -> CasePanel``.

A panel depends only on tracked records (written with a history row), the
viewer's permissions, the language and today's date (and says until when it
holds, ``valid_until``, when the time of day matters): the case page stores
what each area lacks until the next tracked write touching the case
(``apps.casework.standing``).
"""

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.cases.selectors import offer_minimum_status
from apps.core.contributions import CasePanel, MissingLine
from apps.offers.rules import SPEC_REQUIRED
from apps.offers.selectors import offers_of_case
from apps.scorecards.selectors import case_comparison, not_comparable_reasons
from apps.sizing.selectors import capacity_for_offer, demand_of, demand_result


def case_summary(case) -> dict:
    """The case's own part of the page: offers, demand, comparison, and what it lacks.

    Call it inside ``shared_reads()`` together with the panels, so that the
    offers and the comparison are read once for all of them.
    """
    offers = offers_of_case(case)
    demand = demand_of(case)
    result, demand_error = demand_result(demand)
    comparison = case_comparison(case)
    scores = {row.offer.pk: row for row in comparison.rows}
    for offer in offers:
        offer.capacity = capacity_for_offer(
            demand=demand, result=result, offer=offer, spec=getattr(offer, "declared_spec", None)
        )
        offer.comparison = scores.get(offer.pk)
    left_out = not_comparable_reasons(comparison)
    minimum = offer_minimum_status(
        offer_count=len(offers) - len(left_out),
        waiver=case.offer_minimum_waiver,
        not_counted=tuple(left_out.values()),
    )
    return {
        "case": case,
        "offers": offers,
        "demand": demand,
        "demand_result": result,
        "demand_error": demand_error,
        "comparison": comparison,
        "offer_minimum": minimum,
    }


def summary_panels(summary: dict) -> list[CasePanel]:
    """The case's own two areas: the compute demand (sizing) and the offers."""
    case, offers = summary["case"], summary["offers"]
    sizing_missing = []
    if summary["demand"] is None:
        sizing_missing.append(
            _("No compute demand yet: size the workload in the calculator and save it.")
        )
    sizing = CasePanel(
        title=_("Sizing"),
        template="cases/_sizing_panel.html",
        context=summary,
        missing=sizing_missing,
        order=5,
        area="sizing",
        fix_url=reverse("sizing:calculator") + f"?case={case.pk}",
        fix_permission="sizing.add_computedemand",
        started=summary["demand"] is not None,
    )
    offers_panel = CasePanel(
        title=_("Offers"),
        template="cases/_offers_panel.html",
        context=summary,
        missing=_offers_missing(
            case=case,
            offers=offers,
            minimum=summary["offer_minimum"],
            comparison=summary["comparison"],
        ),
        order=10,
        area="offers",
        fix_url=reverse("offers:create", args=[case.pk]),
        fix_permission="offers.add_offer",
        started=bool(offers),
    )
    return [sizing, offers_panel]


def demand_shortfall_text(vendor, fit) -> str:
    """The one sentence the case page, the gate and the packet give a shortfall."""
    return _("%(vendor)s cannot meet the compute demand: %(shortfalls)s") % {
        "vendor": vendor,
        "shortfalls": " ".join(fit.shortfalls),
    }


def spec_fix_url(offer) -> str:
    """Where an unconfirmed spec is mended: the declared spec's form, or the offer's own
    form where only the offer's fields (price, cards…) are missing."""
    spec_labels = {str(label) for _field, label in SPEC_REQUIRED}
    if any(item in spec_labels for item in offer.spec_status.missing):
        return reverse("offers:spec", args=[offer.pk])
    return reverse("offers:edit", args=[offer.pk])


def _offers_missing(*, case, offers, minimum, comparison) -> list[str]:
    """What the offers still lack, in the words a reviewer would use."""
    missing: list[str] = []
    if not minimum["holds"]:
        message = _("%(count)s of %(required)s offers compared: add offers or record a waiver.") % {
            "count": minimum["count"],
            "required": minimum["required"],
        }
        if minimum["not_counted"]:
            message += " " + _("Not counted: %(items)s.") % {
                "items": "; ".join(minimum["not_counted"])
            }
        missing.append(MissingLine(message, reverse("offers:create", args=[case.pk])))
    for offer in offers:
        if not offer.spec_status.confirmed:
            missing.append(
                MissingLine(
                    _("%(vendor)s: declared spec unconfirmed — missing %(items)s")
                    % {"vendor": offer.vendor, "items": ", ".join(offer.spec_status.missing)},
                    spec_fix_url(offer),
                    offer.pk,
                )
            )
        if offer.capacity is not None and not offer.capacity.meets_target:
            missing.append(
                MissingLine(
                    demand_shortfall_text(offer.vendor, offer.capacity),
                    reverse("offers:detail", args=[offer.pk]),
                    offer.pk,
                )
            )
    unscored = [row.offer for row in comparison.rows if row.score.unscored]
    if unscored:
        missing.append(
            MissingLine(
                _("Not scored yet: %(vendors)s")
                % {"vendors": ", ".join(str(offer.vendor) for offer in unscored)},
                # One offer: its scorecard; several: the comparison, which links each.
                reverse("scorecards:scorecard", args=[unscored[0].pk])
                if len(unscored) == 1
                else reverse("scorecards:comparison", args=[unscored[0].case_id]),
                # About one offer only when one is unscored.
                unscored[0].pk if len(unscored) == 1 else None,
            )
        )
    return missing

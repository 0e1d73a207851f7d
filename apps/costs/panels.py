"""The cost guardrails on the case page: budget, committed spend, latest month, alerts."""

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.core.contributions import CasePanel
from apps.costs.selectors import cost_view

# Shows tracked records only (budget, imports, periods, alerts, the offers and their
# approval), every one written through ``tracked_create``/``tracked_update``; nothing
# in it turns with the clock.


def case_panel(case, *, actor) -> CasePanel:
    """One panel in 5 queries however many months were imported."""
    view = cost_view(case)
    return CasePanel(
        title=_("Cost guardrails"),
        template="costs/case_panel.html",
        context={"case": case, "view": view, "latest": view.rows[-1] if view.rows else None},
        missing=cost_missing(view),
        order=85,
        fix_url=reverse("costs:case", args=[case.pk]),
        fix_permission="costs.change_budget",
        started=view.budget is not None,
    )


def cost_missing(view) -> list[str]:
    if view.budget is None:
        return [_("No budget yet: procurement sets the total and monthly budget and thresholds.")]
    missing = []
    if view.offer is None:
        missing.append(_("Costs: no offer chosen, so the bill cannot be checked against a price."))
    elif view.committed and view.committed.missing:
        missing.append(
            _("Costs: the chosen offer lacks %(terms)s to compute the committed spend.")
            % {"terms": ", ".join(view.committed.missing)}
        )
    if view.committed_over_budget:
        missing.append(_("Costs: the committed spend alone is over the total budget."))
    if view.currency_mismatch:
        missing.append(_("Costs: the budget and the chosen offer use different currencies."))
    missing += [_("Costs: %(problem)s") % {"problem": p} for p in view.guardrail_problems]
    if view.days and view.days[-1].crossed:
        latest = view.days[-1]
        missing.append(
            _("Costs %(day)s: %(pct)s %% of the daily budget reached.")
            % {"day": f"{latest.day:%Y-%m-%d}", "pct": max(latest.crossed)}
        )
    if not view.periods:
        missing.append(_("Costs: no usage or bill imported yet."))
    elif view.rows:
        period, row = view.rows[-1]
        for cause in row.causes:
            missing.append(
                _("Costs %(period)s: %(detail)s")
                % {"period": f"{period.period:%Y-%m}", "detail": cause.detail}
            )
        if row.month_crossed:
            missing.append(
                _("Costs %(period)s: %(pct)s %% of the monthly budget reached.")
                % {"period": f"{period.period:%Y-%m}", "pct": max(row.month_crossed)}
            )
        if row.cumulative_crossed:
            missing.append(
                _("Costs: %(pct)s %% of the total budget reached.")
                % {"pct": max(row.cumulative_crossed)}
            )
    return missing

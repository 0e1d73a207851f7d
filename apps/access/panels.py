"""The access matrix and network plan on the case page: state and what is missing."""

from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.access.selectors import access_matrix_of, matrix_view, network_plan_of, plan_view
from apps.core.contributions import CasePanel, MissingLine

SHOWN_VIOLATIONS = 5

# Shows tracked records only, by the viewer's permissions and today's date.


def case_panel(case, *, actor) -> CasePanel:
    """One panel, two clearly separated parts; 9 queries however large the matrix."""
    matrix = access_matrix_of(case)
    plan = network_plan_of(case)
    matrix_part = matrix_view(matrix, timezone.localdate()) if matrix else None
    plan_part = plan_view(plan) if plan else None
    return CasePanel(
        title=_("Network and access-control plan"),
        template="access/case_panel.html",
        context={"case": case, "matrix": matrix_part, "plan": plan_part},
        missing=[
            *(
                MissingLine(line, reverse("access:matrix", args=[case.pk]))
                for line in matrix_missing(matrix_part)
            ),
            *(
                MissingLine(line, reverse("access:plan", args=[case.pk]), offer_id)
                for line, offer_id in plan_missing_by_offer(plan_part)
            ),
        ],
        order=40,
        fix_url=reverse("access:matrix", args=[case.pk]),
        fix_permission="access.change_accessmatrix",
        started=matrix is not None or plan is not None,
    )


def matrix_missing(view) -> list[str]:
    if view is None:
        return [_("No access matrix yet: a tech lead starts it from the least-privilege default.")]
    missing = []
    violations = view.state.violations
    for violation in violations[:SHOWN_VIOLATIONS]:
        missing.append(_("Access matrix: %(message)s") % {"message": violation.message})
    if len(violations) > SHOWN_VIOLATIONS:
        extra = len(violations) - SHOWN_VIOLATIONS
        missing.append(
            ngettext(
                "Access matrix: %(n)s more segregation-of-duties violation.",
                "Access matrix: %(n)s more segregation-of-duties violations.",
                extra,
            )
            % {"n": extra}
        )
    if not view.state.reviewed:
        missing.append(_("Access matrix not reviewed: a tech lead marks it reviewed once clean."))
    elif view.state.expired:
        missing.append(
            _("Access matrix review expired on %(date)s: review it again (quarterly).")
            % {"date": date_format(view.matrix.review_by)}
        )
    if view.control_gaps:
        # The sentence the approval gate gives, naming every control.
        missing.append(
            _("Access controls not in place or accepted as a risk: %(items)s.")
            % {"items": "; ".join(gap.message for gap in view.control_gaps)}
        )
    return missing


def plan_missing(view) -> list[str]:
    return [line for line, _offer_id in plan_missing_by_offer(view)]


def plan_missing_by_offer(view) -> list[tuple[str, int | None]]:
    """What the network plan lacks, each line with the offer it is about (None: the plan)."""
    if view is None:
        text = _("No network plan yet: list the workloads, their links and the latency budget.")
        return [(text, None)]
    missing: list[tuple[str, int | None]] = []
    if not view.links:
        missing.append((_("Network plan: no workload listed."), None))
    if not view.offers:
        missing += [(line, None) for line in _budget_missing(view.budget, "")]
    for row in view.offers:
        if not row.rtt.measured:
            missing.append(
                (
                    _(
                        "Network plan: %(offer)s: no RTT measured from the gateway yet (the "
                        "harness's gateway step, run on the gateway); the budget uses the "
                        "estimate."
                    )
                    % {"offer": row.offer},
                    row.offer_id,
                )
            )
        missing += [(line, row.offer_id) for line in _budget_missing(row.budget, row.offer)]
    missing += [
        (_("Network plan: %(problem)s") % {"problem": p}, None) for p in view.training_problems
    ]
    return missing


def _budget_missing(budget, offer: str) -> list[str]:
    lines = []
    if budget.missing:
        lines.append(_("the latency budget is incomplete."))
    if budget.over_target:
        lines.append(
            _("the latency budget of %(total)s ms is over the %(target)s ms target.")
            % {"total": f"{budget.total.normalize():f}", "target": f"{budget.target.normalize():f}"}
        )
    lines += list(budget.advice)
    if offer:
        return [
            _("Network plan: %(offer)s: %(problem)s") % {"offer": offer, "problem": line}
            for line in lines
        ]
    return [_("Network plan: %(problem)s") % {"problem": line} for line in lines]

"""The acceptance on the case page: the plan in force, its layers and the sign-off."""

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.acceptance import rules
from apps.acceptance.models import Layer
from apps.acceptance.selectors import acceptance_state, active_plan
from apps.cases.models import ProcurementCase
from apps.core.contributions import CasePanel, MissingLine

# Shows tracked records only (plans, results, attachments, sign-offs, the offer's
# evidence and approval); nothing in it turns with the clock.


def case_panel(case, *, actor) -> CasePanel:
    plan = active_plan(case)
    state = acceptance_state(plan) if plan else None
    return CasePanel(
        title=_("Acceptance"),
        template="acceptance/case_panel.html",
        context={"case": case, "state": state},
        missing=acceptance_missing(case, state),
        order=82,
        fix_url=reverse("acceptance:case", args=[case.pk]),
        fix_permission="acceptance.add_acceptanceplan",
        started=plan is not None,
    )


def acceptance_missing(case, state) -> list[str]:
    if state is None:
        if case.status == ProcurementCase.Status.APPROVED:
            return [
                MissingLine(
                    _("Approved but no acceptance plan yet: a tech lead plans the four layers."),
                    reverse("acceptance:plan_create", args=[case.pk]),
                )
            ]
        return []
    if state.accepted:
        return []
    missing: list[str] = []
    for layer in state.layers:
        if layer.status == rules.FAILED:
            missing.append(
                MissingLine(
                    _("Acceptance failed: %(reasons)s") % {"reasons": "; ".join(layer.reasons)},
                    run_url(case, state.plan, layer.layer),
                )
            )
    # Approved: the tests are due, and nothing is in place until they are measured.
    if case.status == ProcurementCase.Status.APPROVED:
        titles = dict(Layer.choices)
        for layer in state.layers:
            if layer.status in (rules.NOT_MEASURED, rules.IN_PROGRESS):
                missing.append(
                    MissingLine(
                        _("Run the acceptance tests: %(layer)s not measured yet.")
                        % {"layer": titles[layer.layer]},
                        run_url(case, state.plan, layer.layer),
                    )
                )
    if state.overall == rules.PASSED and not state.signed_off:
        missing.append(
            MissingLine(
                _("Acceptance passed every layer: another tech lead signs it off."),
                reverse("acceptance:signoff", args=[state.plan.pk]),
            )
        )
    return missing


# The layers whose results are recorded by hand (a fault injection and its recovery); the
# others are measured by the harness, run with a token of the case.
RECORDED_BY_HAND = (Layer.STABILITY,)


def run_url(case, plan, layer: str) -> str:
    """Where a layer's measurement is mended: the form that records a result, or the page
    that issues the harness token its run needs."""
    if layer in RECORDED_BY_HAND:
        return reverse("acceptance:result_create", args=[plan.pk])
    return reverse("evidence:tokens", args=[case.pk])

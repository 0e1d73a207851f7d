"""The approval on the case page: gates per offer, the decision in force, staleness."""

from datetime import datetime, timedelta

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.approvals import policies
from apps.approvals.overview import approval_overview
from apps.cases.models import ProcurementCase
from apps.core.contributions import CasePanel, MissingLine

# Shows tracked records only; the verification gates say until when they hold.


def case_panel(case, *, actor) -> CasePanel:
    overview = approval_overview(case)
    return CasePanel(
        title=_("Approval"),
        template="approvals/case_panel.html",
        context={"case": case, "overview": overview},
        missing=panel_missing(overview),
        order=80,
        valid_until=gates_valid_until(overview.offers),
        fix_url=reverse("approvals:case", args=[case.pk]),
        fix_permission="approvals.decide_approval"
        if overview.pending
        else "approvals.submit_approval",
        started=bool(overview.approvals) or not overview.submittable,
    )


def gates_valid_until(offers) -> datetime | None:
    """The first instant a passing verification ages past its limit, which turns its gate."""
    moments = []
    for entry in offers:
        facts = entry.inputs.verification
        if facts is None or not facts.exists or not facts.verdict_passing:
            continue
        if facts.measured_at is None:
            continue
        expires = facts.measured_at + timedelta(days=entry.inputs.max_age_days)
        if expires > entry.inputs.now:
            moments.append(expires)
    return min(moments, default=None)


def panel_missing(overview) -> list[str]:
    status = overview.case.status
    pk = overview.case.pk
    decide = reverse("approvals:decide", args=[pk])
    missing: list[str] = []
    if overview.stale:
        missing.append(
            MissingLine(
                _("The approval is stale (%(changes)s): the case needs a fresh decision.")
                % {"changes": "; ".join(str(c) for c in overview.stale_changes[:5])},
                decide,
            )
        )
    if status in (ProcurementCase.Status.DRAFT, ProcurementCase.Status.EVALUATING):
        if overview.offers and not overview.ready_offers:
            missing.append(
                MissingLine(
                    _("No offer passes every approval gate yet (see Approval)."),
                    reverse("approvals:case", args=[pk]),
                )
            )
        missing.append(
            MissingLine(
                _("Not submitted for approval yet."), reverse("approvals:submit", args=[pk])
            )
        )
    elif status == ProcurementCase.Status.PENDING_APPROVAL:
        chain = policies.running_chain(overview.case)
        if chain is not None:
            waiting = policies.chain_state(chain, with_people=False).open_steps
            missing.append(
                MissingLine(
                    _("Pending approval: the tech lead approved; waiting for %(steps)s.")
                    % {"steps": ", ".join(step.label for step in waiting)},
                    reverse("approvals:case", args=[pk]),
                )
            )
        else:
            missing.append(
                MissingLine(
                    _("Pending approval: a tech lead approves one offer or rejects."), decide
                )
            )
    return missing

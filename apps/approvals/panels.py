"""The approval on the case page: gates per offer, the decision in force, staleness."""

from django.utils.translation import gettext as _

from apps.approvals.overview import approval_overview
from apps.cases.models import ProcurementCase
from apps.cases.overview import CasePanel


def case_panel(case, *, actor) -> CasePanel | None:
    if not actor.has_perm("approvals.view_approval"):
        return None
    overview = approval_overview(case)
    return CasePanel(
        title=_("Approval"),
        template="approvals/case_panel.html",
        context={"case": case, "overview": overview},
        missing=panel_missing(overview),
        order=90,
    )


def panel_missing(overview) -> list[str]:
    status = overview.case.status
    missing = []
    if overview.stale:
        missing.append(
            _("The approval is stale (%(changes)s): the case needs a fresh decision.")
            % {"changes": "; ".join(str(c) for c in overview.stale_changes[:5])}
        )
    if status in (ProcurementCase.Status.DRAFT, ProcurementCase.Status.EVALUATING):
        if overview.offers and not overview.ready_offers:
            missing.append(_("No offer passes every approval gate yet (see Approval)."))
        missing.append(_("Not submitted for approval yet."))
    elif status == ProcurementCase.Status.PENDING_APPROVAL:
        missing.append(_("Pending approval: a tech lead approves one offer or rejects."))
    return missing

"""The audit section of the case page: chain head, last verification, timeline and export."""

from django.utils.translation import gettext as _

from apps.audit.selectors import chain_status
from apps.cases.overview import CasePanel

# Shows the chain head and the last verification run: the case page's cache key
# holds both (``apps.cases.page.page_versions``).
CASE_PANEL_CACHEABLE = True


def case_panel(case, *, actor) -> CasePanel | None:
    status = chain_status()
    missing = []
    if status.verified is False:
        missing.append(
            _("The audit chain failed verification: %(problem)s")
            % {"problem": status.first_problem}
        )
    return CasePanel(
        title=_("Audit trail"),
        template="audit/case_panel.html",
        context={"case": case, "status": status},
        missing=missing,
        order=90,
    )

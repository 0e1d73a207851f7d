"""The evidence section of the case page: per offer, its latest verdict."""

from django.utils.translation import gettext as _

from apps.cases.overview import CasePanel
from apps.evidence.models import Verdict
from apps.evidence.selectors import PASSING_VERDICTS, case_bundles, offers_evidence
from apps.offers.selectors import offers_of_case

# Shows tracked records only, by the viewer's permissions and today's date.
CASE_PANEL_CACHEABLE = True


def case_panel(case, *, actor) -> CasePanel | None:
    if not actor.has_perm("evidence.view_evidencebundle"):
        return None
    bundles = case_bundles(case)
    rows = offers_evidence(offers_of_case(case), bundles)
    missing = []
    for row in rows:
        verification = getattr(row.latest, "verification", None) if row.latest else None
        if verification is None or verification.verdict not in PASSING_VERDICTS:
            missing.append(
                _("No passing spec verification for %(vendor)s.") % {"vendor": row.offer.vendor}
            )
    return CasePanel(
        title=_("Evidence and spec verification"),
        template="evidence/case_panel.html",
        context={"case": case, "rows": rows, "bundles": len(bundles), "verdicts": Verdict},
        missing=missing,
        order=40,
    )

"""The evidence section of the case page (per offer, its verification) and of the offer page
(where each part of the offer's verification comes from)."""

from django.urls import reverse
from django.utils.translation import gettext as _

from apps.core.contributions import CasePanel, MissingLine
from apps.core.formats import one_full_stop
from apps.evidence.models import Verdict
from apps.evidence.selectors import (
    PASSING_VERDICTS,
    blocking_reasons,
    case_bundles,
    case_verifications,
    checks_with_sources,
    latest_verification,
    offers_evidence,
    verification_age_basis,
    verification_sources,
)
from apps.offers.selectors import offers_of_case

# Shows tracked records only, by the viewer's permissions and today's date.


def case_panel(case, *, actor) -> CasePanel:
    bundles = case_bundles(case)
    rows = offers_evidence(offers_of_case(case), bundles, case_verifications(case))
    missing: list[str] = []
    for row in rows:
        verification = row.verification
        if verification is None or verification.verdict not in PASSING_VERDICTS:
            # A run of the harness on the vendor's machines, with a token from this page.
            missing.append(
                MissingLine(
                    one_full_stop(
                        _("No passing spec verification for %(vendor)s.")
                        % {"vendor": row.offer.vendor}
                    ),
                    reverse("evidence:tokens", args=[case.pk]),
                    row.offer.pk,
                )
            )
        for reason in row.blocked:
            missing.append(
                MissingLine(
                    _("The spec verification of %(vendor)s cannot be confirmed: %(reason)s")
                    % {"vendor": row.offer.vendor, "reason": reason},
                    reverse("evidence:detail", args=[verification.bundle_id])
                    if verification is not None
                    else "",
                    row.offer.pk,
                )
            )
    return CasePanel(
        title=_("Evidence and spec verification"),
        template="evidence/case_panel.html",
        context={"case": case, "rows": rows, "bundles": len(bundles), "verdicts": Verdict},
        missing=missing,
        order=40,
        fix_url=reverse("evidence:tokens", args=[case.pk]),
        fix_permission="evidence.add_harnesstoken",
        started=bool(bundles),
    )


def offer_panel(offer, *, actor) -> CasePanel | None:
    if not actor.has_perm("evidence.view_specverification"):
        return None
    verification = latest_verification(offer)
    return CasePanel(
        title=_("Spec verification"),
        template="evidence/offer_panel.html",
        context={
            "offer": offer,
            "verification": verification,
            "measured_at": verification_age_basis(verification) if verification else None,
            "sources": verification_sources(verification),
            "blocked": blocking_reasons(verification),
            "checks": checks_with_sources(verification),
        },
        missing=[],
        order=40,
    )

"""The data-export assessment's section of the case page (docs/rules/data-export.md)."""

from dataclasses import dataclass

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.assessments.rules import governing_assessment
from apps.assessments.selectors import AssessmentSummary, assessment_summary, case_assessments
from apps.core.contributions import CasePanel, MissingLine
from apps.core.formats import one_full_stop
from apps.offers.models import Offer
from apps.offers.selectors import offers_of_case

# Shows tracked records only, by the viewer's permissions and today's date.


@dataclass
class OfferCoverage:
    offer: Offer
    summary: AssessmentSummary | None


def case_panel(case, *, actor) -> CasePanel:
    today = timezone.localdate()
    assessments = case_assessments(case)
    summaries = {a.pk: assessment_summary(a, today=today) for a in assessments}
    case_level = next((a for a in assessments if a.offer_id is None), None)
    own = {a.offer_id: a for a in assessments if a.offer_id is not None}
    offers = []
    for offer in sorted(offers_of_case(case), key=lambda offer: offer.pk):
        chosen = governing_assessment(
            case_assessment=case_level,
            offer_assessment=own.get(offer.pk),
            vendor_jurisdiction=offer.vendor.jurisdiction,
        )
        offers.append(OfferCoverage(offer, summaries[chosen.pk] if chosen else None))
    case_summary = summaries[case_level.pk] if case_level else None
    return CasePanel(
        title=_("Data-export self-assessment"),
        template="assessments/case_panel.html",
        context={
            "case": case,
            "case_summary": case_summary,
            "offers": offers,
            "can_add": actor.has_perm("assessments.add_dataexportassessment"),
        },
        missing=panel_missing(case, case_summary, offers),
        order=30,
        fix_url="" if assessments else reverse("assessments:create", args=[case.pk]),
        fix_permission="assessments.change_dataexportassessment"
        if assessments
        else "assessments.add_dataexportassessment",
        started=bool(assessments),
    )


def panel_missing(
    case, case_summary: AssessmentSummary | None, offers: list[OfferCoverage]
) -> list[str]:
    """What keeps the data-export assessment from counting, in a reviewer's words, each
    line with the form that mends it."""
    missing: list[str] = []
    start = reverse("assessments:create", args=[case.pk])
    if case_summary is None and not any(row.summary for row in offers):
        return [
            MissingLine(
                _("No data-export self-assessment yet: the legal reviewer starts one."), start
            )
        ]
    seen = set()
    for summary in ([case_summary] if case_summary else []) + [o.summary for o in offers]:
        if summary is None or summary.assessment.pk in seen:
            continue
        seen.add(summary.assessment.pk)
        offer = summary.assessment.offer
        about = offer.pk if offer is not None else None
        scope = str(offer.vendor) if offer is not None else _("the case")
        answer = reverse("assessments:edit", args=[summary.assessment.pk])
        sign_off = reverse("assessments:sign_off", args=[summary.assessment.pk])
        if summary.state.expired:
            # expired is only ever true with a review-by day (rules.assessment_state)
            assert summary.state.review_by is not None
            missing.append(
                MissingLine(
                    _(
                        "Data-export assessment for %(scope)s expired on %(day)s: "
                        "review and sign off again."
                    )
                    % {"scope": scope, "day": summary.state.review_by.isoformat()},
                    sign_off,
                    about,
                )
            )
        elif not summary.state.signed_off:
            missing.append(
                MissingLine(
                    _(
                        "Data-export assessment for %(scope)s is not signed off "
                        "(%(n)s questions unanswered)."
                    )
                    % {"scope": scope, "n": summary.unanswered},
                    answer if summary.unanswered else sign_off,
                    about,
                )
            )
        # The decision aid's checked step, in the words the approval gate uses.
        problems = [summary.contradiction] if summary.contradiction else []
        if not summary.mechanism.held:
            problems.append(summary.mechanism.text)
        for problem in problems:
            missing.append(
                MissingLine(
                    _("Data-export assessment for %(scope)s: %(problem)s")
                    % {"scope": scope, "problem": problem},
                    answer,
                    about,
                )
            )
        if not summary.exit_readiness_answered:
            missing.append(
                MissingLine(
                    one_full_stop(
                        _("Exit readiness not answered in the assessment for %(scope)s.")
                        % {"scope": scope}
                    ),
                    answer,
                    about,
                )
            )
    for row in offers:
        if row.summary is None:
            missing.append(
                MissingLine(
                    _(
                        "%(vendor)s (%(j)s) is outside the case assessment's jurisdiction: "
                        "assess this offer."
                    )
                    % {"vendor": row.offer.vendor, "j": row.offer.vendor.jurisdiction},
                    f"{start}?offer={row.offer.pk}",
                    row.offer.pk,
                )
            )
    return missing

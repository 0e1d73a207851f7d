"""The data-export self-assessment chapter of the signed packet (docs/rules/data-export.md).

Every assessment of the case is printed with which offers it governs; an
offer no assessment covers is named. The assessments' change history already
joins the packet through the case timeline.
"""

from django.utils import timezone
from django.utils.translation import gettext as _

from apps.assessments.questions import EXIT_READINESS_KEYS
from apps.assessments.rules import governing_assessment
from apps.assessments.selectors import assessment_summary, case_assessments
from apps.core.contributions import PacketSection
from apps.offers.models import Offer


def packet_section(case):
    today = timezone.localdate()
    assessments = case_assessments(case)
    offers = list(Offer.objects.filter(case=case).select_related("vendor").order_by("pk"))
    if not assessments and not offers:
        return None
    case_level = next((a for a in assessments if a.offer_id is None), None)
    own = {a.offer_id: a for a in assessments if a.offer_id is not None}
    coverage = [
        (
            offer,
            governing_assessment(
                case_assessment=case_level,
                offer_assessment=own.get(offer.pk),
                vendor_jurisdiction=offer.vendor.jurisdiction,
            ),
        )
        for offer in offers
    ]
    entries = []
    for assessment in assessments:
        summary = assessment_summary(assessment, today=today)
        entries.append(
            {
                "summary": summary,
                "governs": [offer for offer, chosen in coverage if chosen == assessment],
                "exit_rows": [r for r in summary.rows if r.question.key in EXIT_READINESS_KEYS],
            }
        )
    return PacketSection(
        title=_("Data-export self-assessment"),
        template="assessments/packet_section.html",
        context={"entries": entries, "coverage": coverage, "today": today},
    )

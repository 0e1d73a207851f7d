"""Reads of evidence, verifications and harness tokens, in a fixed number of queries."""

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from apps.core.downloads import StoredFile
from apps.evidence.models import (
    EvidenceBundle,
    EvidenceUpload,
    HarnessToken,
    SpecVerification,
    Verdict,
)
from apps.offers.models import Offer

# A passing verification has no failing check; warnings ("findings") are shown
# with it but do not block an approval gate on their own.
PASSING_VERDICTS = (Verdict.VERIFIED, Verdict.FINDINGS)


def bundle_list_for(actor) -> QuerySet[EvidenceBundle]:
    if not actor.has_perm("evidence.view_evidencebundle"):
        return EvidenceBundle.objects.none()
    return EvidenceBundle.objects.select_related(
        "case", "offer__vendor", "token", "verification"
    ).defer("summary")


def bundle_get_for(actor, pk: int) -> EvidenceBundle:
    queryset = bundle_list_for(actor).defer(None)
    return get_object_or_404(queryset, pk=pk)


def bundle_stored_file(bundle: EvidenceBundle) -> StoredFile:
    """The bundle's raw bytes as a download sends them, checked against its SHA-256."""
    return StoredFile(
        case_id=bundle.case_id,
        record=f"Evidence bundle {bundle.sha256[:12]}…",
        name=bundle.storage_name,
        sha256=bundle.sha256,
        filename=f"evidence-{bundle.sha256[:16]}.json",
        content_type="application/json",
    )


def case_bundles(case) -> list[EvidenceBundle]:
    """Every bundle of a case, newest first, with offer, vendor, token and verdict (1 query)."""
    return list(
        EvidenceBundle.objects.filter(case=case)
        .select_related("offer__vendor", "token", "verification")
        .defer("summary", "verification__checks")
        .order_by("-received_at", "-pk")
    )


def latest_verification(offer) -> SpecVerification | None:
    """The newest verification of the offer's evidence, by the time the server received it."""
    return (
        SpecVerification.objects.filter(offer=offer)
        .select_related("bundle")
        .order_by("-bundle__received_at", "-pk")
        .first()
    )


def verification_age_basis(verification: SpecVerification):
    """The run's own finish time, unless the server received it earlier (a wrong clock)."""
    bundle = verification.bundle
    times = [t for t in (bundle.run_finished_at, bundle.received_at) if t is not None]
    return min(times)


def verification_passing(verification: SpecVerification | None, *, max_age_days: int) -> bool:
    """For the approval gate: a passing verdict on evidence at most ``max_age_days`` old."""
    if verification is None or verification.verdict not in PASSING_VERDICTS:
        return False
    return verification_age_basis(verification) >= timezone.now() - timedelta(days=max_age_days)


@dataclass
class OfferEvidence:
    offer: Offer
    latest: EvidenceBundle | None
    bundles: int

    @property
    def suggested_score(self) -> int | None:
        return suggested_performance_score(getattr(self.latest, "verification", None))


def offers_evidence(offers, bundles: list[EvidenceBundle]) -> list[OfferEvidence]:
    """Per offer, its newest bundle (bundles are newest first) and how many it has."""
    rows = []
    for offer in offers:
        mine = [b for b in bundles if b.offer_id == offer.pk]
        rows.append(OfferEvidence(offer=offer, latest=mine[0] if mine else None, bundles=len(mine)))
    return rows


def case_tokens(case) -> list[HarnessToken]:
    return list(
        HarnessToken.objects.filter(case=case)
        .select_related("offer__vendor", "created_by", "revoked_by")
        .order_by("-created_at")
    )


# For the scorecard's measured-performance criterion (0–5, DESIGN §2.3): a reviewer
# may take this suggestion from the verified numbers instead of judging by hand.
PERFORMANCE_SCORE: dict[str, int] = {Verdict.VERIFIED: 5, Verdict.FINDINGS: 3, Verdict.FAILED: 0}


def suggested_performance_score(verification: SpecVerification | None) -> int | None:
    """None when the evidence cannot support a score (insufficient or absent)."""
    if verification is None:
        return None
    return PERFORMANCE_SCORE.get(verification.verdict)


# A token holder can send refused uploads until the token expires: the page lists them
# a page at a time.
UNFINISHED_PER_PAGE = 20


def case_uploads_not_stored(case) -> QuerySet[EvidenceUpload]:
    """The case's uploads that are not (yet) evidence, newest first: being read, refused or
    failed. A queryset, for the page to read one page of."""
    return (
        EvidenceUpload.objects.filter(case=case)
        .exclude(state=EvidenceUpload.State.VERIFIED)
        .select_related("token")
        .order_by("-received_at", "-pk")
    )

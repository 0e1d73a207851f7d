"""The evidence chapter of the signed packet (docs/rules/evidence.md): bundles, verifications, load
charts.

Every bundle file is listed in the manifest with the SHA-256 recorded at
upload, so the packet re-hashes it from storage and shows any that changed.
"""

from django.utils.translation import gettext as _

from apps.core.contributions import PacketSection
from apps.evidence.charts import load_charts
from apps.evidence.models import EvidenceBundle, SpecVerification
from apps.evidence.selectors import (
    blocking_reasons,
    checks_with_sources,
    own_checks,
    verification_age_basis,
    verification_sources,
)
from apps.offers.models import Offer


def _bundles(case) -> list[EvidenceBundle]:
    return list(
        EvidenceBundle.objects.filter(case=case)
        .select_related("token", "verification")
        .order_by("-received_at", "-pk")
    )


def _entry(bundle: EvidenceBundle) -> dict:
    verification = getattr(bundle, "verification", None)
    return {
        "bundle": bundle,
        "verification": verification,
        "checks": own_checks(verification),  # what this bundle measured itself
        "charts": load_charts((bundle.summary or {}).get("cells") or []),
    }


def _composed(verification: SpecVerification | None) -> dict | None:
    """The offer's verification: where each part comes from, and what blocks it."""
    if verification is None:
        return None
    return {
        "verification": verification,
        "measured_at": verification_age_basis(verification),
        "sources": verification_sources(verification),
        "blocked": blocking_reasons(verification),
        "checks": checks_with_sources(verification),
    }


def _offer_verifications(bundles: list[EvidenceBundle]) -> dict[int, SpecVerification]:
    """Each offer's verification: the newest recorded for it, composed from every bundle."""
    latest: dict[int, SpecVerification] = {}
    for bundle in bundles:
        verification = getattr(bundle, "verification", None)
        if bundle.offer_id is not None and verification is not None:
            known = latest.get(bundle.offer_id)
            if known is None or verification.pk > known.pk:
                latest[bundle.offer_id] = verification
    return latest


def history_querysets(case) -> list:
    bundle_ids = EvidenceBundle.history.filter(case_id=case.pk).values("id")
    return [
        EvidenceBundle.history.filter(case_id=case.pk),
        SpecVerification.history.filter(bundle_id__in=bundle_ids),
    ]


def packet_section(case):
    offers = list(Offer.objects.filter(case=case).select_related("vendor").order_by("pk"))
    bundles = _bundles(case)
    if not offers and not bundles:
        return None
    latest = _offer_verifications(bundles)
    groups: list[tuple[Offer | None, dict | None, list[dict]]] = [
        (
            offer,
            _composed(latest.get(offer.pk)),
            [_entry(b) for b in bundles if b.offer_id == offer.pk],
        )
        for offer in offers
    ]
    case_only = [_entry(b) for b in bundles if b.offer_id is None]
    if case_only:
        groups.append((None, None, case_only))
    return PacketSection(
        title=_("Evidence and spec verification"),
        template="evidence/packet_section.html",
        context={"groups": groups},
        manifest_files=[
            (f"evidence-{b.sha256[:16]}.json", b.storage_name, b.sha256) for b in bundles
        ],
        history_querysets=history_querysets(case),
    )

"""Recording an offer's composed verification when a bundle is verified
(docs/rules/evidence.md#composition).

Each upload records one ``SpecVerification``: the offer's verification as
composed from every bundle of the offer held at that moment, by the pure rules
of ``apps.evidence.rules.composition``. The offer's row is locked first, so two
bundles verified at once are composed one after the other and the newest
verification (by creation) has seen every bundle.
"""

from django.db.models import BooleanField, ExpressionWrapper, Q

from apps.core.services import tracked_create
from apps.core.signals import verification_recorded
from apps.evidence.models import EvidenceBundle, SpecVerification
from apps.evidence.rules import RULES_VERSION
from apps.evidence.rules.composition import (
    CORRECTNESS,
    HEADLINE_SECTIONS,
    SOAK,
    Contribution,
    Machine,
    compose,
)
from apps.offers.models import Offer

HOST_NAME_CHARS = 255


def _step_result(document: dict, step: str) -> dict:
    entry = (document.get("steps") or {}).get(step) or {}
    result = entry.get("result") if entry.get("status") == "ok" else None
    return result if isinstance(result, dict) else {}


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def machine_seen(document: dict) -> tuple[str, list[str]]:
    """The host name the harness ran on and every GPU UUID the run saw: in the inventory,
    in the soak's GPU samples and in the load test's memory samples."""
    host = document.get("host")
    host_name = str((host if isinstance(host, dict) else {}).get("hostname") or "")
    uuids = {gpu.get("uuid") for gpu in _dicts(_step_result(document, "inventory").get("gpus"))}
    soak_gpu = _step_result(document, "soak").get("gpu")
    for sample in _dicts((soak_gpu if isinstance(soak_gpu, dict) else {}).get("samples")):
        uuids |= {gpu.get("uuid") for gpu in _dicts(sample.get("gpus"))}
    for cell in _dicts(_step_result(document, "loadtest").get("cells")):
        peaks = cell.get("gpu_memory_peak_mib")
        uuids |= set(peaks) if isinstance(peaks, dict) else set()
    return host_name[:HOST_NAME_CHARS], sorted(u for u in uuids if isinstance(u, str) and u)


def measured_at(bundle: EvidenceBundle):
    """The run's own finish time, unless the server received it earlier (a wrong clock)."""
    return min(t for t in (bundle.run_finished_at, bundle.received_at) if t is not None)


def machine_of(bundle: EvidenceBundle) -> Machine:
    return Machine(
        host_name=bundle.host_name or "",
        gpu_uuids=frozenset(u for u in bundle.gpu_uuids or () if isinstance(u, str)),
    )


def runs_of(summary: dict) -> frozenset[str]:
    return frozenset(section for section in (SOAK, CORRECTNESS) if section in (summary or {}))


def gpus_seen(headline: dict) -> int:
    count = (headline or {}).get("gpus")
    return count if isinstance(count, int) else 0


def contribution_of(verification: SpecVerification, runs: frozenset[str]) -> Contribution:
    """What a stored verification's own bundle measured.

    A composed verification names the bundle of each check: its own bundle's are the
    parts it was the newest for. One recorded before composition is its bundle's alone.
    """
    bundle = verification.bundle
    checks, headline = list(verification.checks or []), dict(verification.headline or {})
    if verification.sources is not None:
        own = {s for s, source in verification.sources.items() if source["bundle"] == bundle.pk}
        checks = [c for c in checks if c.get("bundle") == bundle.pk]
        headline = {k: v for k, v in headline.items() if HEADLINE_SECTIONS.get(k) in own}
    return Contribution(
        bundle=bundle.pk,
        sha256=bundle.sha256,
        received_at=bundle.received_at,
        measured_at=measured_at(bundle),
        checks=tuple(checks),
        headline=headline,
        runs=runs,
        gpus_seen=gpus_seen(headline),
        machine=machine_of(bundle),
    )


def offer_contributions(offer) -> list[Contribution]:
    """Every stored verification of the offer as a contribution (one query)."""
    rows = (
        SpecVerification.objects.filter(offer=offer)
        .select_related("bundle")
        .defer("bundle__summary", "bundle__client_summary_disagreements")
        .annotate(
            has_soak=ExpressionWrapper(
                Q(bundle__summary__has_key=SOAK), output_field=BooleanField()
            ),
            has_correctness=ExpressionWrapper(
                Q(bundle__summary__has_key=CORRECTNESS), output_field=BooleanField()
            ),
        )
        .order_by("pk")
    )
    return [
        contribution_of(
            row,
            frozenset(
                s
                for s, present in ((SOAK, row.has_soak), (CORRECTNESS, row.has_correctness))
                if present
            ),
        )
        for row in rows
    ]


def verification_record(
    *, bundle: EvidenceBundle, offer, checks: list[dict], headline: dict
) -> SpecVerification:
    """Compose and record the offer's verification now that ``bundle`` is held.

    Called inside the upload's transaction, after the bundle is written.
    """
    own = Contribution(
        bundle=bundle.pk,
        sha256=bundle.sha256,
        received_at=bundle.received_at,
        measured_at=measured_at(bundle),
        checks=tuple(checks),
        headline=headline,
        runs=runs_of(bundle.summary),
        gpus_seen=gpus_seen(headline),
        machine=machine_of(bundle),
    )
    others: list[Contribution] = []
    if offer is not None:
        # Two uploads for one offer compose one after the other: the second sees the first.
        list(Offer.objects.select_for_update().filter(pk=offer.pk).values_list("pk", flat=True))
        others = offer_contributions(offer)
    composition = compose([*others, own], placeholders=own)
    composed_from = len({source["bundle"] for source in composition.sources.values()})
    verification = tracked_create(
        SpecVerification,
        actor=None,
        reason=f"Verified on upload ({RULES_VERSION}), composed from {composed_from} bundle(s)",
        bundle=bundle,
        offer=offer,
        verdict=composition.verdict,
        checks=composition.checks,
        headline=composition.headline,
        rules_version=RULES_VERSION,
        sources=composition.sources,
        findings=composition.findings,
        measured_at=composition.measured_at,
    )
    if offer is not None:
        verification_recorded.send(sender=SpecVerification, offer_id=offer.pk)
    return verification

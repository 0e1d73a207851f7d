"""What the harness's soak and correctness runs measured, as the acceptance rules read it.

The evidence app owns the bundles; the acceptance app owns the pass criteria
(docs/rules/acceptance.md). This module is the contract between them: plain, frozen values
recomputed by the server from a bundle's raw soak probes and correctness answers,
never the harness's own summary.

A correctness run is ``verified`` when its expected answers are the server's own: the
case's core sample set it used (read from the stored copy on upload), or a reference file
a tech lead vouched for by pinning a baseline run that carried the very same file (same
SHA-256), pinned now. A reference that only came inside the bundle judges nothing
(docs/rules/evidence.md#expected-answers).
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, QuerySet

from apps.evidence.models import Baseline, EvidenceBundle
from apps.evidence.recompute_acceptance import REFERENCE_CASE_SET


@dataclass(frozen=True)
class SoakMeasurement:
    """One soak run: the endpoint and the GPUs watched for a while."""

    bundle_id: int
    bundle_sha256: str
    measured_at: datetime
    duration_s: float  # how long the soak actually watched, seconds
    restarts_at_s: tuple[float, ...]  # endpoint, host or GPU restarts, seconds after the start
    outages: tuple[tuple[float, float], ...]  # endpoint unreachable from .. to, seconds
    xid_events: tuple[tuple[float, str, int], ...]  # (seconds, GPU UUID, Xid code)
    # Uncorrected ECC errors that appeared during the soak, all GPUs; None when no GPU
    # counter could be read (no nvidia-smi, no GPU): "not measured", never a zero.
    ecc_uncorrected: int | None
    health_checks_total: int
    health_checks_ok: int
    xid_measured: bool = False  # the kernel log was readable, so no Xid event means none


@dataclass(frozen=True)
class CorrectnessItem:
    """One fixed input sent at temperature 0, compared with the reference output."""

    item_id: str
    core: bool  # in the core set, which must pass in full
    passed: bool
    expected: str
    received: str
    reason: str  # why it failed ("" when it passed)


@dataclass(frozen=True)
class CorrectnessMeasurement:
    """One correctness run against a reference file made on a local baseline."""

    bundle_id: int
    bundle_sha256: str
    measured_at: datetime
    reference_name: str
    reference_sha256: str
    tolerance: str  # how answers were compared, in words (e.g. "exact after whitespace trim")
    items: tuple[CorrectnessItem, ...]
    # The expected answers are the server's own (the case's sample set, or a reference a
    # tech lead pinned); False: they came only inside the bundle, and judge nothing.
    verified: bool


def _measured_at(bundle: EvidenceBundle) -> datetime:
    """The run's own finish time, unless the server received it earlier (a wrong clock)."""
    return min(t for t in (bundle.run_finished_at, bundle.received_at) if t is not None)


def _bundles_with(offer, section: str, queryset: QuerySet | None = None) -> list[EvidenceBundle]:
    """The offer's bundles whose server-recomputed summary has this section, newest first."""
    return list(
        (queryset if queryset is not None else EvidenceBundle.objects)
        .filter(offer=offer, summary__has_key=section)
        .only("pk", "sha256", "received_at", "run_finished_at", "summary")
        .order_by("-received_at", "-pk")
    )


def _with_pinned_reference(queryset: QuerySet) -> QuerySet:
    """Each bundle with ``reference_pinned``: a baseline in force in its case was a run
    against the same correctness reference file (its SHA-256)."""
    return queryset.annotate(
        reference_pinned=Exists(
            Baseline.objects.filter(
                case_id=OuterRef("case_id"),
                unpinned_at__isnull=True,
                bundle__summary__correctness__reference_sha256=OuterRef(
                    "summary__correctness__reference_sha256"
                ),
            )
        )
    )


def _verified(run: dict, pinned: bool) -> bool:
    if run.get("reference_source") == REFERENCE_CASE_SET:
        return True  # judged on upload against the server's copy of the case's set
    return pinned


def correctness_verified(bundle: EvidenceBundle) -> bool | None:
    """Whether the bundle's correctness run was judged against the server's own expected
    answers (None: it has no correctness run)."""
    run = (bundle.summary or {}).get("correctness")
    if not run:
        return None
    if run.get("reference_source") == REFERENCE_CASE_SET:
        return True
    return (
        _with_pinned_reference(EvidenceBundle.objects.filter(pk=bundle.pk))
        .values_list("reference_pinned", flat=True)
        .first()
        or False
    )


def soak_measurements_for_offer(offer) -> list[SoakMeasurement]:
    """Every soak of the offer's evidence, newest first (one query)."""
    measurements = []
    for bundle in _bundles_with(offer, "soak"):
        soak = bundle.summary["soak"]
        measurements.append(
            SoakMeasurement(
                bundle_id=bundle.pk,
                bundle_sha256=bundle.sha256,
                measured_at=_measured_at(bundle),
                duration_s=float(soak["duration_s"]),
                restarts_at_s=tuple(float(r["at_s"]) for r in soak["restarts"]),
                outages=tuple((float(a), float(b)) for a, b in soak["outages"]),
                xid_events=tuple(
                    (float(t), str(gpu), int(code)) for t, gpu, code in soak["xid_events"]
                ),
                ecc_uncorrected=soak["ecc_uncorrected"],
                health_checks_total=int(soak["health_checks_total"]),
                health_checks_ok=int(soak["health_checks_ok"]),
                xid_measured=bool(soak["xid_measured"]),
            )
        )
    return measurements


def correctness_measurements_for_offer(offer) -> list[CorrectnessMeasurement]:
    """Every correctness run of the offer's evidence, newest first (one query)."""
    measurements = []
    for bundle in _bundles_with(
        offer, "correctness", _with_pinned_reference(EvidenceBundle.objects.all())
    ):
        run = bundle.summary["correctness"]
        measurements.append(
            CorrectnessMeasurement(
                bundle_id=bundle.pk,
                bundle_sha256=bundle.sha256,
                measured_at=_measured_at(bundle),
                reference_name=run["reference_name"],
                reference_sha256=run["reference_sha256"],
                tolerance=run["tolerance"],
                items=tuple(
                    CorrectnessItem(
                        item_id=item["id"],
                        core=item["core"],
                        passed=item["passed"],
                        expected=item["expected"],
                        received=item["received"],
                        reason=item["reason"],
                    )
                    for item in run["items"]
                ),
                verified=_verified(run, bool(getattr(bundle, "reference_pinned", False))),
            )
        )
    return measurements

"""What the harness and the evidence app measured for an offer, as the acceptance rules read it.

Soak and correctness runs come from ``apps.evidence.acceptance``; until that
module offers its functions there are simply no harness measurements yet. The
performance layer reads the offer's spec verification, composed from all its
bundles: the server-recomputed load-test summary of the bundle its load test
comes from (``EvidenceBundle.summary``: ``levels``, ``cells`` and ``gpus`` of
``apps.evidence.recompute``) and its version and environment checks, so a
soak or a correctness run uploaded on its own leaves the ladder in place.
The re-run after maintenance compares the offer's newest run after its pinned
baseline with it (``apps.evidence.baselines``), with the plan's tolerances.
"""

import math
from dataclasses import dataclass

from django.utils.translation import gettext

from apps.acceptance.rules import (
    ENVIRONMENT_KEYS,
    VERSION_KEYS,
    LadderLevel,
    MeasuredVersions,
    PerformanceMeasurement,
    RerunMeasurement,
    TrainingMeasurement,
    VerificationCheck,
)
from apps.evidence import acceptance as harness_values
from apps.evidence import baselines
from apps.evidence.acceptance import CorrectnessMeasurement, SoakMeasurement
from apps.evidence.rules.composition import ENVIRONMENT, INVENTORY, LOADTEST, TRAINING
from apps.evidence.selectors import latest_verification, source_bundles
from apps.evidence.wording import in_words


@dataclass(frozen=True)
class OfferMeasurements:
    soak: SoakMeasurement | None
    correctness: CorrectnessMeasurement | None
    performance: PerformanceMeasurement | None
    verification_checks: tuple[VerificationCheck, ...]
    verification: object | None
    rerun: RerunMeasurement | None = None
    versions: MeasuredVersions | None = None  # None: no verification yet
    # The bundles the measured versions come from (inventory, environment).
    version_bundles: tuple[tuple[int, str], ...] = ()
    rerun_bundle: object | None = None  # the re-run's EvidenceBundle, for the pages
    baseline: object | None = None  # the Baseline in force, for the pages
    training: TrainingMeasurement | None = None  # None: no training step measured

    @property
    def evidence(self) -> list[dict]:
        """The bundles the layers were judged on, as bound by a sign-off."""
        found = {}
        for item in (self.soak, self.correctness, self.performance, self.training):
            if item is not None:
                found[item.bundle_id] = item.bundle_sha256
        found.update(self.version_bundles)
        if self.rerun is not None:
            found[self.rerun.baseline_bundle_id] = self.rerun.baseline_sha256
            if self.rerun.bundle_id is not None:
                found[self.rerun.bundle_id] = self.rerun.bundle_sha256
        return [{"bundle": pk, "sha256": sha} for pk, sha in sorted(found.items())]

    @property
    def rerun_charts(self) -> list:
        comparison = self.rerun.comparison if self.rerun is not None else None
        return baselines.comparison_charts(comparison) if comparison is not None else []


def _newest(name: str, offer) -> list:
    measure = getattr(harness_values, name, None)
    if measure is None:
        return []  # the harness cannot deliver this kind of run yet
    return list(measure(offer))


def soak_measurements(offer) -> list[SoakMeasurement]:
    """Newest first."""
    return _newest("soak_measurements_for_offer", offer)


def correctness_measurements(offer) -> list[CorrectnessMeasurement]:
    """Newest first."""
    return _newest("correctness_measurements_for_offer", offer)


def ladder_levels(summary: dict) -> tuple[LadderLevel, ...]:
    """Per concurrency level: P95 TTFT and its sample, error rate, and peak memory share (%)."""
    totals = {g.get("uuid"): g.get("memory_total_mib") for g in summary.get("gpus") or []}
    peaks: dict[int, float] = {}
    for cell in summary.get("cells") or []:
        for uuid, peak in (cell.get("gpu_memory_peak_mib") or {}).items():
            if peak is not None and totals.get(uuid):
                share = peak * 100 / totals[uuid]
                level = cell["concurrency"]
                peaks[level] = max(peaks.get(level, 0.0), share)
    levels = []
    for level in summary.get("levels") or []:
        ttft = level.get("ttft_ms") or {}
        e2e = level.get("e2e_ms")  # absent from load tests received before it was kept
        throughput = level.get("output_tok_s") or {}
        levels.append(
            LadderLevel(
                concurrency=level["concurrency"],
                ttft_samples=ttft.get("n", 0),
                ttft_p95_ms=ttft.get("p95"),
                error_rate=level.get("error_rate"),
                peak_memory_pct=peaks.get(level["concurrency"]),
                output_tok_s=throughput.get("mean") if isinstance(throughput, dict) else None,
                ttft_p99_ms=ttft.get("p99"),
                e2e_samples=e2e.get("n", 0) if isinstance(e2e, dict) else None,
                e2e_p95_ms=e2e.get("p95") if isinstance(e2e, dict) else None,
                e2e_p99_ms=e2e.get("p99") if isinstance(e2e, dict) else None,
            )
        )
    return tuple(levels)


def measured_versions(verification, sources=None) -> tuple[MeasuredVersions | None, tuple]:
    """The driver from the inventory and the software from the environment of the bundles
    the verification was composed from (docs/rules/acceptance.md#versions-the-plan-expects),
    and those bundles as (id, SHA-256). ``sources``: those bundles by part, where read already
    (``source_bundles``). A verification recorded before composition has one bundle, whole:
    both come from it."""
    if verification is None:
        return None, ()
    if sources is None:
        sources = source_bundles(verification, (INVENTORY, ENVIRONMENT))
    inventory, environment = sources[INVENTORY], sources[ENVIRONMENT]
    used = {}
    driver = None
    if inventory is not None:
        summary_driver = (inventory.summary or {}).get("driver")
        if isinstance(summary_driver, dict):
            driver = summary_driver.get("driver_version") or None
        used[inventory.pk] = inventory.sha256
    software = None
    if environment is not None:
        held = (environment.summary or {}).get("software")
        if isinstance(held, dict):
            software = held
            used[environment.pk] = environment.sha256
    versions = MeasuredVersions(inventory=inventory is not None, driver=driver, software=software)
    return versions, tuple(sorted(used.items()))


def level_throughput(summary: dict, concurrency: int) -> tuple[float | None, float | None]:
    """(requests/s, output tokens/s) the load test served at one concurrency level.

    Output tokens per second are the level's own figure (the mean over rounds of its
    cells' mean), as the evidence pages show it; requests per second, which the levels do
    not carry, are the mean of the same cells' completed requests per second. None where
    the summary has no such figure.
    """
    level = next(
        (lvl for lvl in summary.get("levels") or [] if lvl.get("concurrency") == concurrency),
        None,
    )
    tokens = ((level or {}).get("output_tok_s") or {}).get("mean")
    rates = [
        cell["req_s"]
        for cell in summary.get("cells") or []
        if cell.get("concurrency") == concurrency and cell.get("req_s") is not None
    ]
    requests = math.fsum(rates) / len(rates) if rates else None
    return requests, tokens


def verification_checks(verification) -> tuple[VerificationCheck, ...]:
    """The version and environment checks, worded in the reader's language (the
    verification stores them in English)."""
    wanted = VERSION_KEYS + ENVIRONMENT_KEYS
    return tuple(
        VerificationCheck(
            key=check["key"],
            title=gettext(str(check.get("title") or check["key"])),
            status=check.get("status") or "not_measured",
            measured=in_words(check.get("measured")),
            expected=in_words(check.get("expected")),
        )
        for check in (verification.checks if verification else []) or []
        if check.get("key") in wanted
    )


def _number(value) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def training_measurement(bundle) -> TrainingMeasurement | None:
    """The reference training step the server recomputed into the bundle's summary
    (``apps.evidence.recompute_train``); None where it holds none."""
    if bundle is None:
        return None
    training = (bundle.summary or {}).get("training")
    if not isinstance(training, dict) or not isinstance(training.get("one_card"), dict):
        return None
    one, every = training["one_card"], training.get("all_cards")
    every = every if isinstance(every, dict) else None
    checkpoint = training.get("checkpoint")
    checkpoint = checkpoint if isinstance(checkpoint, dict) else {}
    phases = [p for p in (one, every) if p is not None]
    sound = not any(p.get("non_finite_losses") for p in phases) and (
        every is None or every.get("params_agree") is not False
    )
    size = checkpoint.get("bytes")
    return TrainingMeasurement(
        bundle_id=bundle.pk,
        bundle_sha256=bundle.sha256,
        backend=str(training.get("backend") or ""),
        one_card_samples_per_s=_number(one.get("samples_per_s")),
        cards=every.get("cards") if every is not None else None,
        per_card_samples_per_s=_number(every.get("samples_per_s_per_card")) if every else None,
        scaling_efficiency=_number(training.get("scaling_efficiency")),
        sound=sound,
        checkpoint_bytes=size if isinstance(size, int) else None,
        checkpoint_save_s=_number(checkpoint.get("save_s")),
        checkpoint_restore_s=_number(checkpoint.get("restore_s")),
        restored_matches=checkpoint.get("restored_matches") if checkpoint else None,
    )


def offer_measurements(offer) -> OfferMeasurements:
    soaks, runs = soak_measurements(offer), correctness_measurements(offer)
    verification = latest_verification(offer)
    # The bundles each part comes from, in one query.
    sources = source_bundles(verification, (LOADTEST, INVENTORY, ENVIRONMENT, TRAINING))
    performance = None
    # The ladder of the newest load test the offer's verification was composed from.
    bundle = sources[LOADTEST]
    if bundle is not None:
        levels = ladder_levels(bundle.summary or {})
        if levels:
            performance = PerformanceMeasurement(bundle.pk, bundle.sha256, levels)
    rerun = baselines.offer_rerun(offer, baselines.tolerances_for(offer))
    versions, version_bundles = measured_versions(verification, sources)
    return OfferMeasurements(
        soak=soaks[0] if soaks else None,
        correctness=runs[0] if runs else None,
        performance=performance,
        verification_checks=verification_checks(verification),
        verification=verification,
        rerun=rerun_measurement(rerun),
        rerun_bundle=rerun.bundle,
        baseline=rerun.baseline,
        versions=versions,
        version_bundles=version_bundles,
        training=training_measurement(sources[TRAINING]),
    )


def rerun_measurement(rerun: baselines.Rerun) -> RerunMeasurement | None:
    if rerun.baseline is None:
        return None
    bundle = rerun.bundle
    return RerunMeasurement(
        baseline_bundle_id=rerun.baseline.bundle_id,
        baseline_sha256=rerun.baseline.bundle.sha256,
        bundle_id=bundle.pk if bundle is not None else None,
        bundle_sha256=bundle.sha256 if bundle is not None else "",
        comparison=rerun.comparison,
    )

"""Harness values built directly, as ``apps.evidence.acceptance`` defines them."""

from datetime import UTC, datetime

from apps.acceptance.rules import LadderLevel, PerformanceMeasurement, ResultFacts
from apps.evidence.acceptance import CorrectnessItem, CorrectnessMeasurement, SoakMeasurement

WHEN = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def soak(
    *,
    minutes=30.0,
    restarts=(),
    outages=(),
    xid=(),
    ecc=0,
    xid_measured=True,
    checks=(180, 180),
    bundle_id=1,
    sha="a" * 64,
):
    return SoakMeasurement(
        bundle_id=bundle_id,
        bundle_sha256=sha,
        measured_at=WHEN,
        duration_s=minutes * 60,
        restarts_at_s=tuple(m * 60 for m in restarts),
        outages=tuple((a * 60, b * 60) for a, b in outages),
        xid_events=tuple(xid),
        ecc_uncorrected=ecc,
        health_checks_total=checks[0],
        health_checks_ok=checks[1],
        xid_measured=xid_measured,
    )


def correctness(passed: int, total: int, *, extra_non_core_failures=0, bundle_id=2, verified=True):
    items = [
        CorrectnessItem(
            f"core-{i:03d}",
            True,
            i < passed,
            "4",
            "4" if i < passed else "5",
            "" if i < passed else "answer differs",
        )
        for i in range(total)
    ]
    items += [
        CorrectnessItem(f"extra-{i}", False, False, "x", "y", "answer differs")
        for i in range(extra_non_core_failures)
    ]
    return CorrectnessMeasurement(
        bundle_id=bundle_id,
        bundle_sha256="b" * 64,
        measured_at=WHEN,
        reference_name="reference-llama-3.1-8b.jsonl",
        reference_sha256="c" * 64,
        tolerance="exact after whitespace trim",
        items=tuple(items),
        verified=verified,
    )


def level(c, p95=800.0, n=200, errors=0.0, memory=None):
    return LadderLevel(c, n, p95, errors, memory)


def ladder(*levels, bundle_id=3):
    return PerformanceMeasurement(bundle_id, "d" * 64, tuple(levels))


def fault(kind, *, resumed=True, duplicated=False, outcome="passed"):
    return ResultFacts(
        layer="stability",
        outcome=outcome,
        activity=f"inject {kind}",
        fault_kind=kind,
        resumed_from_checkpoint=resumed,
        duplicated_data=duplicated,
    )


THREE_FAULTS = (fault("network"), fault("node_killed"), fault("maintenance"))

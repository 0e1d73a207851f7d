"""Performance: matmul and bandwidth against the datasheet, burst vs sustained, slowest GPU,
round-to-round spread (seed 004 §2 "实测基线"; harness-anchors §4.2, §4.3, §6 idea 4)."""

import statistics

from apps.evidence import datasheet
from apps.evidence.recompute import spread
from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.rules.identity import _record

CV_LIMIT = 0.10  # DESIGN §2.7 / seed 004 §2: rounds differing more ⇒ isolation problem
# harness-anchors §4.3 "all GPUs loaded vs one alone": within 5 % pass, 5–10 % warn.
DROP_WARN, DROP_FAIL = 0.05, 0.10
# FP8 reaches ≈0.71–0.73 of peak where BF16 reaches ≈0.80 (§0 item 3): scale the BF16 band.
FP8_BAND_SCALE = 0.89
MATMUL_DTYPES = ("bf16", "fp16", "fp8")


def checks(facts: Facts, context: Context) -> list[Check]:
    bench = facts.bench or {}
    sku = _sku(facts)
    if bench.get("backend") != "cuda":
        reason = (
            "No GPU benchmark in the bundle."
            if not bench
            else f"Benchmarks ran on the {bench.get('backend')} backend, not on a GPU."
        )
        return [
            Check(
                "performance.matmul",
                "performance",
                "Matmul TFLOP/s against dense peak",
                NOT_MEASURED,
                detail=reason,
                source=datasheet.BAND_SOURCE,
            )
        ]
    graded = [check_matmul(bench, sku, dtype, context) for dtype in MATMUL_DTYPES]
    found = [c for c in graded if c is not None] or [
        Check(
            "performance.matmul",
            "performance",
            "Matmul TFLOP/s against dense peak",
            NOT_MEASURED,
            detail="No bf16/fp16/fp8 matmul records.",
        )
    ]
    return found + [
        check_bandwidth(bench, sku),
        check_burst_vs_sustained(bench),
        check_slowest_gpu(bench),
        check_round_spread(bench),
    ]


def _sku(facts: Facts):
    for gpu in facts.gpus:
        record = _record(gpu)
        sku = datasheet.by_pci_id(record["pci_device_id"]) or datasheet.by_name(record["name"])
        if sku:
            return sku
    return None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def sustained_tflops(bench: dict, dtype: str) -> tuple[float | None, str]:
    """Median over devices and rounds of the sustained regime, else the burst one."""
    for regime in ("sustained", "burst"):
        values = [
            m["median"]
            for m in bench.get("matmul") or []
            if m.get("dtype") == dtype and m.get("regime") == regime and m.get("median")
        ]
        if values:
            return _median(values), regime
    return None, ""


def grade(fraction: float, band: tuple[float, float]) -> str:
    passing, warning = band
    if fraction >= passing:
        return PASS
    return WARN if fraction >= warning else FAIL


def check_matmul(bench: dict, sku, dtype: str, context: Context) -> Check | None:
    tflops, regime = sustained_tflops(bench, dtype)
    if tflops is None:
        return None
    check = Check(
        f"performance.matmul.{dtype}",
        "performance",
        f"{dtype.upper()} matmul against dense peak ({regime})",
        NOT_MEASURED,
        measured=f"{tflops:,.1f} TFLOP/s",
        source=datasheet.BAND_SOURCE,
    )
    peak = (sku.dense_tflops.value or {}).get(dtype) if sku else None
    if not peak:
        check.detail = "No datasheet peak for this SKU and dtype."
        return check
    band = datasheet.matmul_band(sku, context.matmul_bands)
    if dtype == "fp8":
        passing, warning = band
        band = (round(passing * FP8_BAND_SCALE, 3), round(warning * FP8_BAND_SCALE, 3))
    fraction = tflops / peak
    check.measured = f"{tflops:,.1f} TFLOP/s = {fraction:.2f} of {peak:g}"
    check.expected = (
        f"≥ {band[0]:.2f} of {peak:g} dense ({sku.accumulate} accumulate); "
        f"healthy ≈ {sku.healthy_fraction.value:.2f}"
    )
    check.tolerance = f"warn below {band[0]:.2f}, fail below {band[1]:.2f}"
    check.status = grade(fraction, band)
    check.source += f"; peak: {sku.dense_tflops.citation}"
    return check


def check_bandwidth(bench: dict, sku) -> Check:
    best = [m["best"] for m in bench.get("memory_bw") or [] if m.get("best")]
    check = Check(
        "performance.bandwidth",
        "performance",
        "Device memory bandwidth (best of copy/triad)",
        NOT_MEASURED,
        tolerance=f"warn below {datasheet.BANDWIDTH_BAND[0]}, fail below "
        f"{datasheet.BANDWIDTH_BAND[1]}",
        source="the vendor's datasheet memory bandwidth; BabelStream and NVIDIA DCGM best-of runs",
    )
    if not best:
        return check
    measured = max(best)
    check.measured = f"{measured:,.0f} GB/s"
    if not sku or not sku.memory_bandwidth_gbps.value:
        check.detail = "No datasheet bandwidth for this SKU."
        return check
    spec = sku.memory_bandwidth_gbps.value
    fraction = measured / spec
    check.measured += f" = {fraction:.2f} of {spec:,.0f}"
    check.expected = f"≥ {datasheet.BANDWIDTH_BAND[0]:.2f} of {spec:,.0f} GB/s"
    check.status = grade(fraction, datasheet.BANDWIDTH_BAND)
    return check


def _drop_status(drop: float) -> str:
    if drop > DROP_FAIL:
        return FAIL
    return WARN if drop > DROP_WARN else PASS


def check_burst_vs_sustained(bench: dict) -> Check:
    check = Check(
        "performance.burst_vs_sustained",
        "performance",
        "Sustained against burst matmul",
        NOT_MEASURED,
        expected="sustained within 5 % of burst",
        tolerance="warn above a 5 % drop, fail above 10 %",
        source="sustained against burst rate: power caps, shared cooling and throttling show here",
    )
    for dtype in MATMUL_DTYPES:
        by_regime = {
            regime: _median(
                [
                    m["median"]
                    for m in bench.get("matmul") or []
                    if m.get("dtype") == dtype and m.get("regime") == regime and m.get("median")
                ]
            )
            for regime in ("burst", "sustained")
        }
        if by_regime["burst"] and by_regime["sustained"]:
            drop = 1 - by_regime["sustained"] / by_regime["burst"]
            check.measured = (
                f"{dtype}: burst {by_regime['burst']:,.1f}, sustained "
                f"{by_regime['sustained']:,.1f} TFLOP/s ({drop:+.1%} drop)"
            )
            check.status = _drop_status(drop)
            return check
    return check


def check_slowest_gpu(bench: dict) -> Check:
    check = Check(
        "performance.slowest_gpu",
        "performance",
        "Slowest GPU against the others",
        NOT_MEASURED,
        expected="within 5 % of the median of the others",
        tolerance="warn above 5 %, fail above 10 % slower",
        source=(
            "GPUs of one node normally differ by about 5 % "
            "(Stas Bekman, Machine Learning Engineering)"
        ),
    )
    per_device: dict = {}
    for m in bench.get("matmul") or []:
        if m.get("dtype") == "bf16" and m.get("median"):
            per_device.setdefault(m["device"], []).append(m["median"])
    if len(per_device) < 2:
        check.detail = "Fewer than two GPUs benchmarked."
        return check
    # Every list holds a value and there are two devices or more: no median is None.
    medians = {device: statistics.median(values) for device, values in per_device.items()}
    slowest = min(medians, key=medians.__getitem__)
    others = statistics.median([v for d, v in medians.items() if d != slowest])
    drop = 1 - medians[slowest] / others
    check.measured = f"{slowest}: {medians[slowest]:,.1f} vs {others:,.1f} TFLOP/s ({drop:.1%})"
    check.status = _drop_status(drop)
    return check


def check_round_spread(bench: dict) -> Check:
    check = Check(
        "performance.round_cv",
        "performance",
        "Round-to-round spread of the micro-benchmarks",
        NOT_MEASURED,
        expected=f"coefficient of variation ≤ {CV_LIMIT:.0%}",
        tolerance="a finding above 10 % (noisy neighbour or throttling)",
        source="three rounds; rounds that differ widely point to a shared, poorly isolated machine",
    )
    groups: dict = {}
    for m in bench.get("matmul") or []:
        groups.setdefault((m["device"], m["dtype"], m["regime"]), []).append(m.get("median"))
    for m in bench.get("memory_bw") or []:
        groups.setdefault((m["device"], m["kernel"], "bw"), []).append(m.get("median"))
    spreads = {k: spread(v) for k, v in groups.items() if len(v) > 1}
    cvs = {k: s["cv"] for k, s in spreads.items() if s.get("cv") is not None}
    if not cvs:
        return check
    worst = max(cvs, key=cvs.__getitem__)
    check.measured = f"worst CV {cvs[worst]:.1%} ({'/'.join(map(str, worst))})"
    check.status = WARN if cvs[worst] > CV_LIMIT else PASS
    return check

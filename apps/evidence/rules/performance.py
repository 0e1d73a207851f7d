"""Performance: matmul and bandwidth against the datasheet, burst vs sustained, slowest GPU,
round-to-round spread (docs/rules/evidence.md#performance)."""

import statistics

from apps.evidence import datasheet
from apps.evidence.recompute import spread
from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.rules.identity import _record
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

CV_LIMIT = 0.10  # docs/rules/evidence.md#performance: rounds differing more ⇒ isolation
# docs/rules/evidence.md#performance, all GPUs loaded vs one alone: within 5 % pass,
# 5–10 % warn.
DROP_WARN, DROP_FAIL = 0.05, 0.10
# FP8 reaches ≈0.71–0.73 of peak where BF16 reaches ≈0.80 (docs/rules/evidence.md#performance):
# scale the BF16 band.
FP8_BAND_SCALE = 0.89
MATMUL_DTYPES = ("bf16", "fp16", "fp8")

# Stored in English and worded for the reader where shown (apps.evidence.wording).
phrase(datasheet.BAND_SOURCE)
MATMUL_TITLE = phrase("Matmul TFLOP/s against dense peak")
DTYPE_TITLE = phrase("%(dtype)s matmul against dense peak (%(regime)s)")
REGIMES = {"sustained": phrase("sustained"), "burst": phrase("burst")}
TFLOPS = phrase("%(tflops)s TFLOP/s")
TFLOPS_OF_PEAK = phrase("%(tflops)s TFLOP/s = %(fraction)s of %(peak)s")
MATMUL_EXPECTED = phrase(
    "≥ %(least)s of %(peak)s dense (%(accumulate)s accumulate); healthy ≈ %(healthy)s"
)
WARN_FAIL_BELOW = phrase("warn below %(warn)s, fail below %(fail)s")
PEAK_SOURCE = phrase("peak: %(citation)s")
GBPS = phrase("%(gbps)s GB/s")
GBPS_OF_SPEC = phrase("%(gbps)s GB/s = %(fraction)s of %(spec)s")
GBPS_EXPECTED = phrase("≥ %(least)s of %(spec)s GB/s")
BURST_MEASURED = phrase(
    "%(dtype)s: burst %(burst)s, sustained %(sustained)s TFLOP/s (%(drop)s drop)"
)
SLOWEST_MEASURED = phrase("%(gpu)s: %(slowest)s vs %(others)s TFLOP/s (%(drop)s)")
WORST_CV = phrase("worst CV %(cv)s (%(where)s)")


def checks(facts: Facts, context: Context) -> list[Check]:
    bench = facts.bench or {}
    sku = _sku(facts)
    if bench.get("backend") != "cuda":
        reason = (
            phrase("No GPU benchmark in the bundle.")
            if not bench
            else phrase("Benchmarks ran on the %(backend)s backend, not on a GPU.")
            % {"backend": bench.get("backend")}
        )
        return [
            Check(
                "performance.matmul",
                "performance",
                MATMUL_TITLE,
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
            MATMUL_TITLE,
            NOT_MEASURED,
            detail=phrase("No bf16/fp16/fp8 matmul records."),
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
        DTYPE_TITLE % {"dtype": dtype.upper(), "regime": REGIMES.get(regime, regime)},
        NOT_MEASURED,
        measured=TFLOPS % {"tflops": f"{tflops:,.1f}"},
        source=datasheet.BAND_SOURCE,
    )
    peak = (sku.dense_tflops.value or {}).get(dtype) if sku else None
    if not peak:
        check.detail = phrase("No datasheet peak for this SKU and dtype.")
        return check
    band = datasheet.matmul_band(sku, context.matmul_bands)
    if dtype == "fp8":
        passing, warning = band
        band = (round(passing * FP8_BAND_SCALE, 3), round(warning * FP8_BAND_SCALE, 3))
    fraction = tflops / peak
    check.measured = TFLOPS_OF_PEAK % {
        "tflops": f"{tflops:,.1f}",
        "fraction": f"{fraction:.2f}",
        "peak": f"{peak:g}",
    }
    check.expected = MATMUL_EXPECTED % {
        "least": f"{band[0]:.2f}",
        "peak": f"{peak:g}",
        "accumulate": sku.accumulate,
        "healthy": f"{sku.healthy_fraction.value:.2f}",
    }
    check.tolerance = WARN_FAIL_BELOW % {"warn": f"{band[0]:.2f}", "fail": f"{band[1]:.2f}"}
    check.status = grade(fraction, band)
    check.source += "; " + PEAK_SOURCE % {"citation": sku.dense_tflops.citation}
    return check


def check_bandwidth(bench: dict, sku) -> Check:
    best = [m["best"] for m in bench.get("memory_bw") or [] if m.get("best")]
    check = Check(
        "performance.bandwidth",
        "performance",
        phrase("Device memory bandwidth (best of copy/triad)"),
        NOT_MEASURED,
        tolerance=WARN_FAIL_BELOW
        % {"warn": datasheet.BANDWIDTH_BAND[0], "fail": datasheet.BANDWIDTH_BAND[1]},
        source=phrase(
            "the vendor's datasheet memory bandwidth; BabelStream and NVIDIA DCGM best-of runs"
        ),
    )
    if not best:
        return check
    measured = max(best)
    check.measured = GBPS % {"gbps": f"{measured:,.0f}"}
    if not sku or not sku.memory_bandwidth_gbps.value:
        check.detail = phrase("No datasheet bandwidth for this SKU.")
        return check
    spec = sku.memory_bandwidth_gbps.value
    fraction = measured / spec
    check.measured = GBPS_OF_SPEC % {
        "gbps": f"{measured:,.0f}",
        "fraction": f"{fraction:.2f}",
        "spec": f"{spec:,.0f}",
    }
    check.expected = GBPS_EXPECTED % {
        "least": f"{datasheet.BANDWIDTH_BAND[0]:.2f}",
        "spec": f"{spec:,.0f}",
    }
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
        phrase("Sustained against burst matmul"),
        NOT_MEASURED,
        expected=phrase("sustained within 5 %% of burst") % {},
        tolerance=phrase("warn above a 5 %% drop, fail above 10 %%") % {},
        source=phrase(
            "sustained against burst rate: power caps, shared cooling and throttling show here"
        ),
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
            check.measured = BURST_MEASURED % {
                "dtype": dtype,
                "burst": f"{by_regime['burst']:,.1f}",
                "sustained": f"{by_regime['sustained']:,.1f}",
                "drop": f"{drop:+.1%}",
            }
            check.status = _drop_status(drop)
            return check
    return check


def check_slowest_gpu(bench: dict) -> Check:
    check = Check(
        "performance.slowest_gpu",
        "performance",
        phrase("Slowest GPU against the others"),
        NOT_MEASURED,
        expected=phrase("within 5 %% of the median of the others") % {},
        tolerance=phrase("warn above 5 %%, fail above 10 %% slower") % {},
        source=phrase(
            "GPUs of one node normally differ by about 5 %% "
            "(Stas Bekman, Machine Learning Engineering)"
        )
        % {},
    )
    per_device: dict = {}
    for m in bench.get("matmul") or []:
        if m.get("dtype") == "bf16" and m.get("median"):
            per_device.setdefault(m["device"], []).append(m["median"])
    if len(per_device) < 2:
        check.detail = phrase("Fewer than two GPUs benchmarked.")
        return check
    # Every list holds a value and there are two devices or more: no median is None.
    medians = {device: statistics.median(values) for device, values in per_device.items()}
    slowest = min(medians, key=medians.__getitem__)
    others = statistics.median([v for d, v in medians.items() if d != slowest])
    drop = 1 - medians[slowest] / others
    check.measured = SLOWEST_MEASURED % {
        "gpu": slowest,
        "slowest": f"{medians[slowest]:,.1f}",
        "others": f"{others:,.1f}",
        "drop": f"{drop:.1%}",
    }
    check.status = _drop_status(drop)
    return check


def check_round_spread(bench: dict) -> Check:
    check = Check(
        "performance.round_cv",
        "performance",
        phrase("Round-to-round spread of the micro-benchmarks"),
        NOT_MEASURED,
        expected=phrase("coefficient of variation ≤ %(limit)s") % {"limit": f"{CV_LIMIT:.0%}"},
        tolerance=phrase("a finding above 10 %% (noisy neighbour or throttling)") % {},
        source=phrase(
            "three rounds; rounds that differ widely point to a shared, poorly isolated machine"
        ),
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
    check.measured = WORST_CV % {"cv": f"{cvs[worst]:.1%}", "where": "/".join(map(str, worst))}
    check.status = WARN if cvs[worst] > CV_LIMIT else PASS
    return check

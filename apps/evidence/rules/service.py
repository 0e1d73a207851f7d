"""Service: each ladder level against the case's SLOs, only where the sample is large enough.

docs/rules/evidence.md#service-levels sets the pass line (P95 TTFT < 1.5 s, error rate < 0.5 %,
peak memory < 90 %; the case may set its own); docs/metrics.md#percentiles sets
the least sample for each percentile (P95 needs n ≥ 130).
"""

from apps.evidence.recompute import P95_MIN_SAMPLES, samples_shortfall
from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

# Stored in English and worded for the reader where shown (apps.evidence.wording).
SLO_SOURCE = phrase("the case's service levels (P95 time to first token, error rate, peak memory)")
SAMPLE_SOURCE = phrase(
    "MLPerf Inference early-stopping rule: a P95 needs at least %(least)s samples"
) % {"least": P95_MIN_SAMPLES}
TTFT_TITLE = phrase("P95 time to first token at concurrency %(level)s")
ERRORS_TITLE = phrase("Error rate at concurrency %(level)s")
ONLY_WITH = phrase("only with n ≥ %(least)s")
TOO_FEW = phrase("Not measured: too few completed requests for a P95 (%(shortfall)s).")
SHORTFALL = phrase("%(n)s request; a P95 needs at least %(least)s: send %(more)s more")
SHORTFALLS = phrase("%(n)s requests; a P95 needs at least %(least)s: send %(more)s more")
P95_MEASURED = phrase("%(p95)s ms (n = %(n)s)")
ERRORS_MEASURED = phrase("%(pct)s %% (%(errors)s of %(n)s)")
LEVEL_SHORTFALL = phrase("concurrency %(level)s: %(shortfall)s")
NO_LEVEL = phrase("No level had enough requests for a P95 (%(levels)s).")
CV_LIMIT = 0.10
CLIENT_LIMITED = 0.9  # effective concurrency below 90 % of the target: the client limited it


def checks(facts: Facts, context: Context) -> list[Check]:
    if not facts.levels:
        return [
            Check(
                "service.ladder",
                "service",
                phrase("Load test against the SLOs"),
                NOT_MEASURED,
                detail=phrase("No load test in the bundle."),
                source=SLO_SOURCE,
            )
        ]
    found = []
    for level in facts.levels:
        found += [check_ttft(level, context), check_error_rate(level, context)]
    found += [
        check_peak_memory(facts, context),
        check_highest_concurrency(facts.levels, context),
        check_round_spread(facts.levels),
        check_client_limited(facts.levels),
    ]
    return found


def ttft_holds(level: dict, context: Context) -> bool | None:
    """None when the sample is too small for P95; else whether P95 TTFT is under the SLO."""
    ttft = level["ttft_ms"]
    if ttft.get("n", 0) < P95_MIN_SAMPLES:
        return None
    return ttft["p95"] < float(context.slo["p95_ttft_ms"])


def error_rate_holds(level: dict, context: Context) -> bool:
    return (level["error_rate"] or 0) * 100 < float(context.slo["error_rate_pct"])


def check_ttft(level: dict, context: Context) -> Check:
    c = level["concurrency"]
    ttft = level["ttft_ms"]
    check = Check(
        f"service.ttft_p95.c{c}",
        "service",
        TTFT_TITLE % {"level": c},
        NOT_MEASURED,
        expected=f"< {context.slo['p95_ttft_ms']} ms",
        tolerance=ONLY_WITH % {"least": P95_MIN_SAMPLES},
        source=f"{SLO_SOURCE}; {SAMPLE_SOURCE}",
    )
    holds = ttft_holds(level, context)
    if holds is None:
        p50 = f"; P50 {ttft['p50']:,.0f} ms" if ttft.get("p50") is not None else ""
        check.measured = f"n = {ttft.get('n', 0)}{p50}"
        shortfall = samples_shortfall(ttft.get("n", 0))
        check.detail = TOO_FEW % {"shortfall": shortfall}
        return check
    check.measured = P95_MEASURED % {"p95": f"{ttft['p95']:,.0f}", "n": ttft["n"]}
    check.status = PASS if holds else FAIL
    return check


def check_error_rate(level: dict, context: Context) -> Check:
    c = level["concurrency"]
    rate = level["error_rate"]
    check = Check(
        f"service.error_rate.c{c}",
        "service",
        ERRORS_TITLE % {"level": c},
        NOT_MEASURED,
        expected=f"< {context.slo['error_rate_pct']} %",
        tolerance=phrase("errors include non-2xx, timeouts, truncated streams"),
        source=SLO_SOURCE + "; " + phrase("an error is a failed or incomplete response"),
    )
    if rate is None:
        return check
    check.measured = ERRORS_MEASURED % {
        "pct": f"{rate * 100:.2f}",
        "errors": level["errors"],
        "n": level["n"],
    }
    check.status = PASS if error_rate_holds(level, context) else FAIL
    return check


def peak_memory_share(facts: Facts) -> tuple[float, str] | None:
    """Highest share of a GPU's memory used in any load-test cell, and the GPU's UUID."""
    totals = {
        gpu.get("uuid"): (gpu.get("nvml") or {}).get("memory_total_mib")
        or (gpu.get("cuda") or {}).get("memory_total_mib")
        for gpu in facts.gpus
    }
    shares = [
        (peak / totals[uuid], uuid)
        for cell in facts.cells
        for uuid, peak in (cell.get("gpu_memory_peak_mib") or {}).items()
        if totals.get(uuid) and peak is not None
    ]
    return max(shares) if shares else None


def check_peak_memory(facts: Facts, context: Context) -> Check:
    limit = float(context.slo["peak_memory_pct"])
    check = Check(
        "service.peak_memory",
        "service",
        phrase("Peak device memory under load"),
        NOT_MEASURED,
        expected=phrase("< %(limit)s %% of device memory") % {"limit": f"{limit:g}"},
        source=SLO_SOURCE,
        detail=phrase(
            "The bundle's load test has no device-memory samples (no GPU on the machine)."
        ),
    )
    peak = peak_memory_share(facts)
    if peak is None:
        return check
    share, uuid = peak
    check.measured = phrase("%(pct)s %% on %(gpu)s") % {"pct": f"{share * 100:.1f}", "gpu": uuid}
    check.detail = phrase("Highest memory.used over memory.total in any load-test cell.")
    check.status = PASS if share * 100 < limit else FAIL
    return check


def check_highest_concurrency(levels: list[dict], context: Context) -> Check:
    check = Check(
        "service.max_concurrency",
        "service",
        phrase("Highest concurrency at which the SLOs hold"),
        NOT_MEASURED,
        expected=phrase("at least one measured level within the SLOs"),
        tolerance=phrase("levels with P95 samples (n ≥ %(least)s) only")
        % {"least": P95_MIN_SAMPLES},
        source=phrase("goodput: the highest load at which the service levels still hold"),
    )
    graded = [
        (level["concurrency"], ttft_holds(level, context) and error_rate_holds(level, context))
        for level in levels
        if ttft_holds(level, context) is not None
    ]
    if not graded:
        short = [
            LEVEL_SHORTFALL
            % {
                "level": level["concurrency"],
                "shortfall": samples_shortfall(level["ttft_ms"].get("n", 0)),
            }
            for level in levels
        ]
        check.detail = NO_LEVEL % {"levels": "; ".join(short)}
        return check
    holding = [c for c, ok in graded if ok]
    check.measured = max(holding) if holding else phrase("none")
    check.status = PASS if holding else FAIL
    return check


def check_round_spread(levels: list[dict]) -> Check:
    check = Check(
        "service.round_cv",
        "service",
        phrase("Round-to-round spread of output tokens/s"),
        NOT_MEASURED,
        expected=phrase("coefficient of variation ≤ %(limit)s") % {"limit": f"{CV_LIMIT:.0%}"},
        tolerance=phrase("a finding above 10 %% (noisy neighbour or throttling)") % {},
        source=phrase("three rounds at each load level"),
    )
    cvs = {
        level["concurrency"]: level["output_tok_s"]["cv"]
        for level in levels
        if level["output_tok_s"].get("n", 0) > 1 and level["output_tok_s"].get("cv") is not None
    }
    if not cvs:
        return check
    worst = max(cvs, key=cvs.__getitem__)
    check.measured = phrase("worst CV %(cv)s at concurrency %(level)s") % {
        "cv": f"{cvs[worst]:.1%}",
        "level": worst,
    }
    check.status = WARN if cvs[worst] > CV_LIMIT else PASS
    return check


def check_client_limited(levels: list[dict]) -> Check:
    check = Check(
        "service.client_limited",
        "service",
        phrase("The load generator held the target concurrency"),
        NOT_MEASURED,
        expected=phrase("effective concurrency ≥ %(share)s of the target")
        % {"share": f"{CLIENT_LIMITED:.0%}"},
        source=phrase("effective concurrency as the SGLang benchmark reports it"),
    )
    short = []
    measured = False
    for level in levels:
        for effective in level["effective_concurrency"]:
            if effective is None:
                continue
            measured = True
            if effective < CLIENT_LIMITED * level["concurrency"]:
                short.append(f"c{level['concurrency']}: {effective:.2f}")
    if not measured:
        return check
    check.measured = ", ".join(short) if short else phrase("held at every level")
    check.status = WARN if short else PASS
    return check

"""Throughput at the SLO: the open-loop rate search against the case's service levels and
the vendor's declared throughput (docs/rules/evidence.md#throughput-at-the-slo).

The harness sends requests at a scheduled rate whatever has completed (Poisson or
constant arrivals) and searches for the highest rate whose P95 time to first token and
P95 time per output token still meet the SLO; the server recomputes every step from its
raw requests (``recompute.ratesearch``) and judges each step here against the case's own
service levels: the case's P95 TTFT and error rate, and the TPOT limit the run was given
(the case sets none). A step is judged only with at least 130 requests with a first token
(docs/metrics.md#percentiles). The goodput at the highest passing step, requests meeting
every limit and their output tokens per second, is checked against the declared
throughput: at least the declared figure passes, within 10 % below it warns, less fails.
"""

from apps.evidence.recompute import P95_MIN_SAMPLES, goodput, samples_shortfall
from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

RATE_KEY = "service.throughput_at_slo"
REQUESTS_KEY = "service.throughput_at_slo.requests"
TOKENS_KEY = "service.throughput_at_slo.tokens"
# docs/rules/evidence.md#throughput-at-the-slo: within 10 % below the declared figure warns.
DECLARED_WARN = 0.10

# Stored in English and worded for the reader where shown (apps.evidence.wording).
SOURCE = phrase(
    "throughput under a latency constraint, as vLLM's bench serve (request rate, goodput) "
    "and MLPerf Inference's server scenario measure it: Poisson arrivals at a set rate"
)
SAMPLE_SOURCE = phrase(
    "MLPerf Inference early-stopping rule: a P95 needs at least %(least)s samples"
) % {"least": P95_MIN_SAMPLES}
RATE_TITLE = phrase("Highest request rate within the service levels (open-loop rate search)")
REQUESTS_TITLE = phrase("Declared throughput in requests/s at the service levels")
TOKENS_TITLE = phrase("Declared throughput in output tokens/s at the service levels")
NO_SEARCH = phrase("No open-loop rate search in the bundle.")
NO_STEP = phrase("No rate step had enough requests for a P95 (%(steps)s).")
NO_STEP_SHORT = phrase("No rate step had enough requests for a P95.")
STEP_SHORTFALL = phrase("%(rate)s req/s: %(shortfall)s")
RATE_MEASURED = phrase(
    "%(rate)s req/s offered, goodput %(requests)s req/s and %(tokens)s output tokens/s (n = %(n)s)"
)
NONE_HELD = phrase("none of %(steps)s rates (lowest %(lowest)s req/s)")
RATE_EXPECTED = phrase(
    "P95 TTFT ≤ %(ttft)s ms%(tpot)s, error rate < %(errors)s %% at some rate tried"
)
TPOT_PART = phrase(", P95 TPOT ≤ %(tpot)s ms")
RATE_TOLERANCE = phrase("steps with n ≥ %(least)s requests with a first token only")
UNCAPPED = phrase(
    "The search stopped at its highest rate while the service levels still held: the "
    "capacity is above it (run it with a higher --rate-max)."
)
DECLARED_EXPECTED = phrase("≥ %(declared)s %(unit)s (declared)")
DECLARED_TOLERANCE = phrase("warn within %(warn)s below the declared figure, fail below that")
GOODPUT_MEASURED = phrase("%(value)s %(unit)s at %(rate)s req/s offered")
NOTHING_DECLARED = phrase("The declared spec states no figure to verify.")
NO_RATE_HELD = phrase("No rate tried met the service levels.")
UNIT_REQUESTS = phrase("requests/s")
UNIT_TOKENS = phrase("output tokens/s")


def limits(facts: Facts, context: Context) -> dict:
    """What judges a step: the case's P95 TTFT and error rate, the run's TPOT limit."""
    run = (facts.ratesearch or {}).get("slo_ms") or {}
    return {
        "ttft_ms": float(context.slo["p95_ttft_ms"]),
        "tpot_ms": run.get("tpot_ms"),
        "error_rate_pct": float(context.slo["error_rate_pct"]),
    }


def step_holds(step: dict, slo: dict) -> bool | None:
    """None when a P95 the SLO needs rests on too few requests; else whether every limit
    holds (errors alone fail a step whatever its sample)."""
    rate = step.get("error_rate") or 0
    if rate and rate * 100 >= slo["error_rate_pct"]:
        return False
    held = True
    for name in ("ttft_ms", "tpot_ms"):
        if slo.get(name) is None:
            continue
        dist = step[name]
        if dist.get("n", 0) < P95_MIN_SAMPLES:
            return None
        held = held and dist["p95"] <= slo[name]
    return held


def at_slo(facts: Facts, context: Context) -> dict | None:
    """The rate search judged: the highest passing step with its goodput, whether the search
    found where the service levels stop holding, and the steps that could be judged.
    None when the bundle has no rate search."""
    if facts.ratesearch is None:
        return None
    slo = limits(facts, context)
    per_request = {"ttft_ms": slo["ttft_ms"], "tpot_ms": slo["tpot_ms"]}
    steps = facts.ratesearch.get("steps") or []
    judged = [(step, step_holds(step, slo)) for step in steps]
    measured = [(step, held) for step, held in judged if held is not None]
    passing = [step for step, held in measured if held]
    best = max(passing, key=lambda s: s["offered_rps"] or 0, default=None)
    result: dict = {"slo": slo, "steps": steps, "measured": measured, "best": None}
    if best is not None:
        requests, tokens = goodput(best, per_request)
        rate = best["offered_rps"] or 0
        failing_above = [s for s, held in measured if not held and (s["offered_rps"] or 0) > rate]
        result["best"] = {
            "index": best["index"],
            "offered_rps": best["offered_rps"],
            "goodput_req_s": requests,
            "goodput_tok_s": tokens,
            "n": best["ttft_ms"].get("n", 0),
            "limit_found": bool(failing_above),
        }
    return result


def _rate(value) -> str:
    return f"{value:,.2f}" if value is not None else "—"


def checks(facts: Facts, context: Context) -> list[Check]:
    judged = at_slo(facts, context)
    return [
        check_rate(judged),
        check_declared(judged, context, REQUESTS_KEY, "throughput_requests_per_s"),
        check_declared(judged, context, TOKENS_KEY, "throughput_tokens_per_s"),
    ]


def check_rate(judged: dict | None) -> Check:
    check = Check(
        RATE_KEY,
        "service",
        RATE_TITLE,
        NOT_MEASURED,
        source=f"{SOURCE}; {SAMPLE_SOURCE}",
        tolerance=RATE_TOLERANCE % {"least": P95_MIN_SAMPLES},
    )
    if judged is None:
        check.detail = NO_SEARCH
        return check
    slo = judged["slo"]
    tpot = TPOT_PART % {"tpot": f"{slo['tpot_ms']:g}"} if slo["tpot_ms"] is not None else ""
    check.expected = RATE_EXPECTED % {
        "ttft": f"{slo['ttft_ms']:g}",
        "tpot": tpot,
        "errors": f"{slo['error_rate_pct']:g}",
    }
    if not judged["measured"]:
        short = [
            STEP_SHORTFALL
            % {
                "rate": _rate(step.get("offered_rps")),
                "shortfall": samples_shortfall(step["ttft_ms"].get("n", 0)),
            }
            for step in judged["steps"]
        ]
        check.detail = NO_STEP % {"steps": "; ".join(short) or "—"}
        return check
    best = judged["best"]
    if best is None:
        lowest = min((s.get("offered_rps") or 0 for s, _held in judged["measured"]), default=0)
        check.measured = NONE_HELD % {"steps": len(judged["measured"]), "lowest": _rate(lowest)}
        check.status = FAIL
        return check
    check.measured = RATE_MEASURED % {
        "rate": _rate(best["offered_rps"]),
        "requests": _rate(best["goodput_req_s"]),
        "tokens": f"{best['goodput_tok_s'] or 0:,.1f}",
        "n": best["n"],
    }
    check.status = PASS
    if not best["limit_found"]:
        check.detail = UNCAPPED
    return check


def check_declared(judged: dict | None, context: Context, key: str, claim: str) -> Check:
    requests = key == REQUESTS_KEY
    unit = UNIT_REQUESTS if requests else UNIT_TOKENS
    check = Check(
        key,
        "service",
        REQUESTS_TITLE if requests else TOKENS_TITLE,
        NOT_MEASURED,
        tolerance=DECLARED_TOLERANCE % {"warn": f"{DECLARED_WARN:.0%}"},
        source=SOURCE,
    )
    declared = context.declared.get(claim)
    declared = float(declared) if declared is not None else None
    if declared is not None:
        check.expected = DECLARED_EXPECTED % {"declared": f"{declared:,.2f}", "unit": unit}
    if judged is None:
        check.detail = NO_SEARCH
        return check
    best = judged["best"]
    if best is None:
        if not judged["measured"]:
            check.detail = NO_STEP_SHORT
            return check
        check.detail = NO_RATE_HELD
        if declared is not None:
            check.status = FAIL
        return check
    value = best["goodput_req_s" if requests else "goodput_tok_s"] or 0.0
    check.measured = GOODPUT_MEASURED % {
        "value": f"{value:,.2f}",
        "unit": unit,
        "rate": _rate(best["offered_rps"]),
    }
    if declared is None:
        check.detail = NOTHING_DECLARED
        return check
    if value >= declared:
        check.status = PASS
    elif not best["limit_found"]:
        check.detail = UNCAPPED  # below the claim only because the search stopped short
    elif value >= declared * (1 - DECLARED_WARN):
        check.status = WARN
    else:
        check.status = FAIL
    return check

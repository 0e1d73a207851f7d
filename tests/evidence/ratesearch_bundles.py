"""Rate-search bundles for the server's tests: raw requests with known timings, summarised
by the harness's own code (the test oracle) and assembled as the harness writes a bundle.

Each step sends ``n`` requests at a constant ``rate`` and every request of the step has the
same time to first token and time per output token, so each step's P95s, its goodput and
the highest rate within the SLO are known exactly.
"""

from diligence_harness import metrics
from diligence_harness.bundle import assemble
from diligence_harness.ratesearch import best_step

MS = 1_000_000
OSL = 8
START_NS = 10**12
# (rate req/s, TTFT ms, TPOT ms): two steps within the case's default 1.5 s, one past it.
STEPS = ((10.0, 100.0, 20.0), (20.0, 900.0, 20.0), (40.0, 3000.0, 20.0))
RUN_SLO = {"ttft_ms": 1500.0, "tpot_ms": 50.0}


def request(step: int, i: int, t_sched: int, ttft_ms: float, tpot_ms: float, error=None) -> dict:
    first = t_sched + int(ttft_ms * MS)
    last = first + int(tpot_ms * MS) * (OSL - 1)
    return {
        "request_id": f"s{step}-{i}",
        "prompt_index": 0,
        "prompt_sha256": "0" * 64,
        "isl_chars": 40,
        "t_sched_ns": t_sched,
        "t_connect_start_ns": None,
        "t_send_ns": t_sched,
        "t_hdr_ns": t_sched + MS,
        "t_first_ns": first,
        "t_first_out_ns": first,
        "t_last_ns": last,
        "t_end_ns": last,
        "http_status": 500 if error else 200,
        "chunks": [[first - t_sched, 4, 0, 1], [last - t_sched, 28, 0, OSL]],
        "finish_reason": "length",
        "osl": OSL,
        "osl_source": "server_usage",
        "osl_server": OSL,
        "osl_client": OSL,
        "error": {"kind": error} if error else None,
    }


def rate_step(index: int, rate: float, ttft_ms: float, tpot_ms: float, *, n=130, errors=0):
    start = START_NS + index * 100_000 * MS  # 100 s apart
    requests = [
        request(
            index,
            i,
            start + int(i * 1e9 / rate),
            ttft_ms,
            tpot_ms,
            error="http_500" if i < errors else None,
        )
        for i in range(n)
    ]
    summary = metrics.rate_step_summary(requests, RUN_SLO)
    return {
        "index": index,
        "target_rps": rate,
        "arrival": "constant",
        "seed": 1234000 + index,
        "planned": n,
        "client": {"wall_s": 1.0, "cpu_s": None, "loop_lag_ms": {"n": 0, "method": "x"}},
        "requests": requests,
        "summary": summary,
        "meets_slo": metrics.rate_step_meets_slo(summary, RUN_SLO, 0.005),
    }


def ratesearch_result(steps=STEPS, *, n=130, errors=0) -> dict:
    made = [
        rate_step(i, rate, ttft, tpot, n=n, errors=errors)
        for i, (rate, ttft, tpot) in enumerate(steps, start=1)
    ]
    return {
        "mode": "open_loop",
        "endpoint": {"base_url": "http://127.0.0.1:1", "apis": ["chat"], "model": "m"},
        "workload": {"max_tokens": OSL},
        "arrival": "constant",
        "seed": 1234,
        "slo_ms": RUN_SLO,
        "search": {"max_error_rate": 0.005, "min_samples": 130},
        "steps": made,
        "stopped": "max_steps",
        "best": best_step(made),
    }


def ratesearch_document(result: dict | None = None) -> dict:
    """A bundle that ran the rate search alone (every other step "not requested")."""
    step = {
        "status": "ok",
        "reason": None,
        "started_utc": "2026-01-05T10:00:00Z",
        "finished_utc": "2026-01-05T10:01:00Z",
        "duration_s": 60.0,
        "result": result or ratesearch_result(),
    }
    document = assemble(
        steps={"ratesearch": step},
        findings=[],
        artifacts=[],
        argv=["diligence-harness", "ratesearch"],
        seeds={"ratesearch": 1234},
        case=None,
        nonce=None,
        started_utc="2026-01-05T10:00:00Z",
    )
    document["finished_utc"] = "2026-01-05T10:01:00Z"
    return document


# The goodput of step 2 (20 req/s, TTFT 900 ms, TPOT 20 ms): 130 requests over the 6.45 s
# their sends span plus the last one's 1.04 s, and 8 output tokens each.
STEP2_DURATION_S = 129 / 20 + (900 + 7 * 20) / 1000
STEP2_GOODPUT_REQ_S = 130 / STEP2_DURATION_S
STEP2_GOODPUT_TOK_S = 8 * STEP2_GOODPUT_REQ_S

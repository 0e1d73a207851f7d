"""Metric definitions and summaries, pinned and cited.

Every definition here follows docs/metrics.md (the AIPerf / MLPerf definitions), under a
name that cannot be confused with another tool's metric of the same name
(docs/metrics.md#why-pinned). The bracketed § numbers in ``METRIC_DEFINITIONS`` are part
of the stored ``diligence-metrics/1`` text: they name the sections of the measurement
notes the definitions were drawn from (§2.1 timestamps, §2.2 per-request metrics, §2.3
per-cell aggregates); docs/metrics.md says where each is. The bundle stores raw
per-request events; these summaries are advisory and the server recomputes them from the
raw events with the same definitions.
"""

import math
import statistics
from collections.abc import Iterable, Sequence

# docs/metrics.md#percentiles: minimum n for a defensible percentile at 99 % confidence
# (MLPerf LoadGen early stopping, find_min_passing with t=1; mlcommons/endpoints).
MIN_SAMPLES_FOR_PERCENTILE = {50: 11, 90: 64, 95: 130, 99: 662}
PERCENTILES = (50, 90, 95, 99)
PERCENTILE_METHOD = "numpy_linear"  # type 7, as vLLM, SGLang, AIPerf and llmperf use

METRIC_DEFINITIONS = {
    "ttft_ms": "t_first_ns - t_send_ns; t_first = first SSE event whose delta has non-empty "
    "content or reasoning_content (empty and role-only chunks do not count) "
    "[harness-anchors §2.1/§2.2; AIPerf TTFT]",
    "ttft_incl_client_queue_ms": "t_first_ns - t_sched_ns [§2.2; vLLM PR #54136]",
    "ttfo_ms": "t_first_out_ns - t_send_ns; first non-reasoning content [§2.2; AIPerf TTFO]",
    "e2e_ms": "t_last_ns - t_send_ns; t_last = last event carrying content, not the usage-only "
    "chunk nor [DONE] [§2.2; AIPerf request latency]",
    "client_queue_ms": "t_send_ns - t_sched_ns [§2.1; vLLM client_queue_time]",
    "tpot_ms": "(t_last_ns - t_first_ns) / (osl - 1) for osl >= 2; the canonical 'ITL' of "
    "AIPerf/NIM, vLLM TPOT, MLPerf TPOT; NOT GuideLLM TPOT, NOT llmperf ITL [§2.2]",
    "tpot_corrected_ms": "(t_last_ns - t_first_ns) / (osl - tokens_in_first_content_chunk), "
    "only when per-chunk usage is streamed [§2.2; AIPerf PR #1279]",
    "icl_ms": "gaps between consecutive content-carrying chunks, pooled per cell; what vLLM and "
    "SGLang call 'ITL' [§2.2]",
    "osl": "usage.completion_tokens (last non-null) when the server sends it, else the client "
    "count (content chunks); osl_source says which [§2.2]",
    "duration_s": "max(t_last_ns) - min(t_send_ns) over the cell's requests [§2.3; AIPerf]",
    "output_tok_s": "sum(osl of successful requests) / duration_s [§2.3]",
    "req_s": "successful requests / duration_s [§2.3]",
    "error_rate": "errors / requests; an error is non-2xx, transport error, timeout, no content, "
    "error event, or truncation (no finish_reason / body cut short) [§2.3; AIPerf]",
    "effective_concurrency": "sum(e2e over all requests) / duration_s; short of the target "
    "means the client was the bottleneck [§2.3; SGLang 'concurrency']",
    "good_fraction": "requests meeting every SLO / all requests (errors in the denominator) "
    "[§2.3; AIPerf good_request_fraction]",
    "goodput_req_s": "requests meeting every SLO / duration_s [§2.3; vLLM goodput]",
    "percentiles": "numpy 'linear' (type 7) with n stated; a percentile is flagged "
    "insufficient below n = 11/64/130/662 for P50/P90/P95/P99 [§2.3; MLPerf early stopping]",
    # The open-loop rate search (docs/metrics.md#rate-search).
    "offered_rps": "(n - 1) / (max(t_sched_ns) - min(t_sched_ns)) over a rate step's requests: "
    "the rate they were scheduled at; send_rps the same over t_send_ns [rate search; vLLM "
    "bench serve request rate, MLPerf server scenario]",
    "goodput_tok_s": "sum(osl of requests meeting every SLO) / duration_s [rate search]",
    "rate_at_slo": "the highest offered_rps of a rate step whose P95 ttft_ms and P95 tpot_ms are "
    "within the SLO with n >= 130 requests with a first token and whose error_rate is within "
    "the limit [rate search; MLPerf server scenario, vLLM goodput]",
}
# Inside the node and the local disk (docs/metrics.md#inside-the-node).
METRIC_DEFINITIONS |= {
    "copy_GBps": "bytes / iter_ns of each repetition (decimal GB/s, one direction), median and "
    "best; host<->device from pinned memory, device->device per ordered pair of cards",
    "busbw_GBps": "all-reduce bus bandwidth: bytes / t * 2(n - 1)/n, t the mean over the ranks "
    "of a repetition's time, the median over the repetitions [nccl-tests]",
    "disk_seq_GBps": "block_bytes * blocks / (sum(blocks_ns) + fsync_ns), O_DIRECT where the "
    "filesystem takes it [fio --direct=1]",
    "disk_rand_iops": "4 KiB reads at queue depth 1 from seeded offsets / sum(ops_ns) [fio]",
}
# The reference training step (docs/metrics.md#reference-training-step).
METRIC_DEFINITIONS |= {
    "train_samples_per_s": "sum over ranks of batch_size * steps / sum over steps of the "
    "slowest rank's step_ns, the device synchronised after each step; per card: / cards",
    "train_scaling_efficiency": "all cards' samples/s / (cards * one card's samples/s)",
    "checkpoint_GBps": "bytes / save_ns (torch.save, fsync'd) and bytes / restore_ns (torch.load "
    "after the cache is dropped, into a fresh model and optimizer); restored_sha256 must equal "
    "saved_sha256",
}


def percentile_linear(sorted_values: Sequence[float], pct: float) -> float:
    """numpy.percentile(method='linear'): h = (n-1)p, interpolate between neighbours."""
    if not sorted_values:
        raise ValueError("no values")
    h = (len(sorted_values) - 1) * pct / 100.0
    lower = math.floor(h)
    upper = min(lower + 1, len(sorted_values) - 1)
    return sorted_values[lower] + (h - lower) * (sorted_values[upper] - sorted_values[lower])


def percentile_nearest_rank(sorted_values: Sequence[float], pct: float) -> float:
    """MLPerf LoadGen's sorted[floor(n*p)] (loadgen/results.cc), kept as the secondary method."""
    index = min(len(sorted_values) - 1, math.floor(len(sorted_values) * pct / 100.0))
    return sorted_values[index]


def distribution(values: Iterable[float]) -> dict:
    """Mean, spread and P50/P90/P95/P99 with n, method and an insufficient-samples flag."""
    ordered = sorted(values)
    n = len(ordered)
    summary: dict = {"n": n, "method": PERCENTILE_METHOD}
    if n == 0:
        summary["insufficient_samples"] = [f"p{p}" for p in PERCENTILES]
        return summary
    summary["mean"] = statistics.fmean(ordered)
    summary["std"] = statistics.pstdev(ordered) if n > 1 else 0.0
    summary["min"] = ordered[0]
    summary["max"] = ordered[-1]
    for pct in PERCENTILES:
        summary[f"p{pct}"] = percentile_linear(ordered, pct)
    summary["insufficient_samples"] = [
        f"p{p}" for p in PERCENTILES if n < MIN_SAMPLES_FOR_PERCENTILE[p]
    ]
    return summary


def _ms(delta_ns: int | None) -> float | None:
    return None if delta_ns is None else delta_ns / 1e6


def request_metrics(record: dict) -> dict:
    """Per-request metrics (docs/metrics.md#per-request-metrics) from one raw request record."""
    send, first, last = record.get("t_send_ns"), record.get("t_first_ns"), record.get("t_last_ns")
    sched, first_out = record.get("t_sched_ns"), record.get("t_first_out_ns")
    osl = record.get("osl")
    metrics: dict = {
        "ttft_ms": _ms(first - send) if first is not None and send is not None else None,
        "ttft_incl_client_queue_ms": _ms(first - sched)
        if first is not None and sched is not None
        else None,
        "ttfo_ms": _ms(first_out - send) if first_out is not None and send is not None else None,
        "e2e_ms": _ms(last - send) if last is not None and send is not None else None,
        "client_queue_ms": _ms(send - sched) if send is not None and sched is not None else None,
        "tpot_ms": None,
        "tpot_corrected_ms": None,
    }
    if first is not None and last is not None and osl and osl >= 2:
        metrics["tpot_ms"] = (last - first) / 1e6 / (osl - 1)
        first_tokens = _tokens_in_first_content_chunk(record.get("chunks", []))
        if first_tokens is not None and osl > first_tokens:
            metrics["tpot_corrected_ms"] = (last - first) / 1e6 / (osl - first_tokens)
    metrics["icl_ms"] = inter_chunk_gaps_ms(record.get("chunks", []))
    return metrics


def _tokens_in_first_content_chunk(chunks: list) -> int | None:
    """Tokens the first content chunk carried, from cumulative per-chunk usage if streamed."""
    previous = 0
    for _t_rel, content_chars, reasoning_chars, usage_tokens in chunks:
        if usage_tokens is None:
            return None
        if content_chars or reasoning_chars:
            return usage_tokens - previous
        previous = usage_tokens
    return None


def inter_chunk_gaps_ms(chunks: list) -> list[float]:
    """Gaps between consecutive content-carrying chunks (ICL,
    docs/metrics.md#per-request-metrics)."""
    times = [c[0] for c in chunks if c[1] or c[2]]
    return [(b - a) / 1e6 for a, b in zip(times, times[1:])]


def meets_slo(metrics: dict, slo: dict) -> bool:
    """vLLM goodput rule: every configured SLO (ms) must be >= the measured value."""
    for name, limit in slo.items():
        value = metrics.get(name)
        if limit is None:
            continue
        if value is None or value > limit:
            return False
    return True


def cell_summary(records: list[dict], *, target_concurrency: int, slo: dict) -> dict:
    """Per-cell aggregates (docs/metrics.md#per-cell-aggregates) from the raw request records."""
    ok = [r for r in records if r.get("error") is None]
    per_request = [request_metrics(r) for r in records]
    per_ok = [request_metrics(r) for r in ok]
    sends = [r["t_send_ns"] for r in records if r.get("t_send_ns") is not None]
    lasts = [r["t_last_ns"] for r in ok if r.get("t_last_ns") is not None]
    duration_s = (max(lasts) - min(sends)) / 1e9 if sends and lasts else None
    e2e_all = [m["e2e_ms"] for m in per_request if m["e2e_ms"] is not None]
    good = sum(
        1 for r, m in zip(records, per_request) if r.get("error") is None and meets_slo(m, slo)
    )
    total_osl = sum(r.get("osl") or 0 for r in ok)

    def per_second(amount: float) -> float | None:
        return amount / duration_s if duration_s else None

    return {
        "n": len(records),
        "completed": len(ok),
        "errors": len(records) - len(ok),
        "error_rate": (len(records) - len(ok)) / len(records) if records else None,
        "error_kinds": _count_error_kinds(records),
        "duration_s": duration_s,
        "output_tok_s": per_second(total_osl),
        "req_s": per_second(len(ok)),
        "target_concurrency": target_concurrency,
        "effective_concurrency": per_second(sum(e2e_all) / 1e3),
        "good_fraction": good / len(records) if records else None,
        "goodput_req_s": per_second(good),
        "slo_ms": slo,
        "osl_sources": _count_values(r.get("osl_source") for r in ok),
        "ttft_ms": distribution(m["ttft_ms"] for m in per_ok if m["ttft_ms"] is not None),
        "ttft_incl_client_queue_ms": distribution(
            m["ttft_incl_client_queue_ms"]
            for m in per_ok
            if m["ttft_incl_client_queue_ms"] is not None
        ),
        "client_queue_ms": distribution(
            m["client_queue_ms"] for m in per_ok if m["client_queue_ms"] is not None
        ),
        "tpot_ms": distribution(m["tpot_ms"] for m in per_ok if m["tpot_ms"] is not None),
        "tpot_corrected_ms": distribution(
            m["tpot_corrected_ms"] for m in per_ok if m["tpot_corrected_ms"] is not None
        ),
        "icl_ms": distribution(gap for m in per_ok for gap in m["icl_ms"]),
        "e2e_ms": distribution(m["e2e_ms"] for m in per_ok if m["e2e_ms"] is not None),
    }


def arrival_rate(times_ns: Iterable[int | None]) -> float | None:
    """(n - 1) / (last - first): the rate the times are spaced at (None below two times)."""
    times = [t for t in times_ns if t is not None]
    if len(times) < 2 or max(times) == min(times):
        return None
    return (len(times) - 1) / ((max(times) - min(times)) / 1e9)


def rate_step_summary(records: list[dict], slo: dict) -> dict:
    """One open-loop rate step (docs/metrics.md#rate-search): the cell aggregates, the rate
    the requests were scheduled and sent at, and the goodput in requests and output tokens."""
    summary = cell_summary(records, target_concurrency=0, slo=slo)
    del summary["target_concurrency"]  # an open loop sets a rate, not a concurrency
    good_tokens = sum(
        r.get("osl") or 0
        for r in records
        if r.get("error") is None and meets_slo(request_metrics(r), slo)
    )
    duration_s = summary["duration_s"]
    summary.update(
        offered_rps=arrival_rate(r.get("t_sched_ns") for r in records),
        send_rps=arrival_rate(r.get("t_send_ns") for r in records),
        goodput_tok_s=good_tokens / duration_s if duration_s else None,
    )
    return summary


def rate_step_meets_slo(summary: dict, slo: dict, max_error_rate: float) -> bool | None:
    """Whether a rate step meets the SLO: error rate within the limit, P95 TTFT and P95 TPOT
    within theirs; None when a P95 has too few samples (and the errors do not already fail it)."""
    if (summary["error_rate"] or 0) > max_error_rate:
        return False
    held = True
    for name in ("ttft_ms", "tpot_ms"):
        limit = slo.get(name)
        if limit is None:
            continue
        dist = summary[name]
        if dist["n"] < MIN_SAMPLES_FOR_PERCENTILE[95]:
            return None
        held = held and dist["p95"] <= limit
    return held


def _count_error_kinds(records: list[dict]) -> dict:
    return _count_values(r["error"]["kind"] for r in records if r.get("error"))


def _count_values(values: Iterable) -> dict:
    counts: dict = {}
    for value in values:
        counts[str(value)] = counts.get(str(value), 0) + 1
    return counts


# Two-sided 95 % Student t critical values by degrees of freedom (1..10), for the
# across-rounds interval AIPerf reports (docs/metrics.md#across-rounds).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def spread(values: Sequence[float | None]) -> dict:
    """Mean, sample std, CV and a 95 % t-interval across rounds; CV > 10 % flags isolation."""
    clean = [v for v in values if v is not None]
    result: dict = {"values": list(values), "n": len(clean)}
    if not clean:
        return result
    mean = statistics.fmean(clean)
    std = statistics.stdev(clean) if len(clean) > 1 else 0.0
    result.update({"mean": mean, "std": std, "cv": std / mean if mean else None})
    if len(clean) > 1:
        half = _T95.get(len(clean) - 1, 1.96) * std / math.sqrt(len(clean))
        result["ci95"] = [mean - half, mean + half]
    return result


ACROSS_ROUND_METRICS = (
    ("output_tok_s", None),
    ("req_s", None),
    ("error_rate", None),
    ("effective_concurrency", None),
    ("ttft_ms", "mean"),
    ("ttft_ms", "p50"),
    ("tpot_ms", "mean"),
    ("e2e_ms", "mean"),
)


def across_rounds(cells: list[dict]) -> list[dict]:
    """Group cells by (api, concurrency, prompt set) and give each metric's spread over rounds."""
    groups: dict = {}
    for cell in cells:
        key = (cell["api"], cell["concurrency"], cell["prompt_set"])
        groups.setdefault(key, []).append(cell)
    result = []
    for (api, concurrency, prompt_set), group in sorted(groups.items()):
        group.sort(key=lambda c: c["round"])
        metrics = {}
        for name, field in ACROSS_ROUND_METRICS:
            values = [_summary_value(c["summary"], name, field) for c in group]
            metrics[name if field is None else f"{name}.{field}"] = spread(values)
        result.append(
            {
                "api": api,
                "concurrency": concurrency,
                "prompt_set": prompt_set,
                "rounds": [c["round"] for c in group],
                "metrics": metrics,
            }
        )
    return result


def _summary_value(summary: dict, name: str, field: str | None) -> float | None:
    value = summary.get(name)
    if field is not None:
        value = value.get(field) if isinstance(value, dict) else None
    return value

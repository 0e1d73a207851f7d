"""Recompute every summary from the bundle's raw events, with the server's own code.

The definitions are the pinned ``diligence-metrics/1`` ones (docs/metrics.md,
harness README "Metrics"): the client's summaries are advisory,
so the server derives its numbers from per-request timestamps and
per-iteration timings, then lists every client figure that disagrees.
"""

import math
import re
import statistics
from dataclasses import dataclass

METRIC_DEFINITIONS_VERSION = "diligence-metrics/1"
PERCENTILES = (50, 90, 95, 99)
# docs/metrics.md#percentiles: MLPerf early stopping, the least n for a defensible percentile.
MIN_SAMPLES = {50: 11, 90: 64, 95: 130, 99: 662}
# The one least sample the service rules and the acceptance's performance layer both use:
# a level with fewer requests has no P95 to judge and is "not measured", never passed or failed.
P95_MIN_SAMPLES = MIN_SAMPLES[95]
# Floats recomputed in a different order differ in the last bits, nothing more.
REL_TOLERANCE = 1e-6
ABS_TOLERANCE = 1e-6


def percentile(sorted_values: list[float], pct: float) -> float:
    """numpy.percentile 'linear' (type 7): rank h = (n − 1)·p, interpolated."""
    rank = (len(sorted_values) - 1) * pct / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (rank - low) * (sorted_values[high] - sorted_values[low])


def describe(values) -> dict:
    ordered = sorted(v for v in values if v is not None)
    n = len(ordered)
    result: dict = {"n": n}
    if not n:
        return result
    result["mean"] = math.fsum(ordered) / n
    result["min"], result["max"] = ordered[0], ordered[-1]
    for pct in PERCENTILES:
        result[f"p{pct}"] = percentile(ordered, pct)
    result["insufficient"] = [f"p{p}" for p in PERCENTILES if n < MIN_SAMPLES[p]]
    return result


def samples_missing(n: int, pct: int = 95) -> int:
    """How many more requests a level of ``n`` needs before its percentile can be stated."""
    return max(MIN_SAMPLES[pct] - n, 0)


def samples_shortfall(n: int, pct: int = 95) -> str:
    """Empty when ``n`` is enough; else the count, the least sample and how many more to send."""
    missing = samples_missing(n, pct)
    if not missing:
        return ""
    noun = "request" if n == 1 else "requests"
    return f"{n} {noun}; a P{pct} needs at least {MIN_SAMPLES[pct]}: send {missing} more"


def spread(values: list[float]) -> dict:
    """Mean, sample standard deviation and coefficient of variation across rounds."""
    clean = [v for v in values if v is not None]
    if not clean:
        return {"n": 0}
    mean = math.fsum(clean) / len(clean)
    std = statistics.stdev(clean) if len(clean) > 1 else 0.0
    return {"n": len(clean), "mean": mean, "std": std, "cv": std / mean if mean else None}


def _ms(later, earlier):
    if later is None or earlier is None:
        return None
    return (later - earlier) / 1e6


def request_metrics(record: dict) -> dict:
    """Per-request metrics of docs/metrics.md#per-request-metrics from one raw request record."""
    send, first, last = record.get("t_send_ns"), record.get("t_first_ns"), record.get("t_last_ns")
    osl = record.get("osl")
    tpot = None
    if first is not None and last is not None and osl is not None and osl >= 2:
        tpot = (last - first) / 1e6 / (osl - 1)
    content_times = [c[0] for c in record.get("chunks") or [] if c[1] or c[2]]
    return {
        "ttft_ms": _ms(first, send),
        "e2e_ms": _ms(last, send),
        "tpot_ms": tpot,
        "icl_ms": [(b - a) / 1e6 for a, b in zip(content_times, content_times[1:])],
    }


def cell_summary(requests: list[dict]) -> dict:
    """Per-cell aggregates (docs/metrics.md#per-cell-aggregates): errors count in every rate's
    denominator."""
    ok = [r for r in requests if r.get("error") is None]
    metrics = [request_metrics(r) for r in requests]  # once per request: uploads are large
    per_ok = [m for r, m in zip(requests, metrics) if r.get("error") is None]
    sends = [r["t_send_ns"] for r in requests if r.get("t_send_ns") is not None]
    lasts = [r["t_last_ns"] for r in ok if r.get("t_last_ns") is not None]
    duration = (max(lasts) - min(sends)) / 1e9 if sends and lasts else None
    e2e_all = [m["e2e_ms"] for m in metrics if m["e2e_ms"] is not None]
    output_tokens = sum(r.get("osl") or 0 for r in ok)
    n, errors = len(requests), len(requests) - len(ok)
    return {
        "n": n,
        "completed": len(ok),
        "errors": errors,
        "error_rate": errors / n if n else None,
        "duration_s": duration,
        "output_tok_s": output_tokens / duration if duration else None,
        "req_s": len(ok) / duration if duration else None,
        "effective_concurrency": math.fsum(e2e_all) / 1e3 / duration if duration else None,
        "ttft_ms": describe(m["ttft_ms"] for m in per_ok),
        "tpot_ms": describe(m["tpot_ms"] for m in per_ok),
        "e2e_ms": describe(m["e2e_ms"] for m in per_ok),
        "icl_ms": describe(gap for m in per_ok for gap in m["icl_ms"]),
    }


SCALARS: tuple[str, ...] = (
    "n",
    "completed",
    "errors",
    "error_rate",
    "duration_s",
    "output_tok_s",
    "req_s",
)
SCALARS += ("effective_concurrency",)
DISTRIBUTIONS = ("ttft_ms", "tpot_ms", "e2e_ms", "icl_ms")
STATS = ("n", "mean", "p50", "p90", "p95", "p99")


@dataclass(frozen=True)
class Disagreement:
    where: str
    metric: str
    client: object
    server: object

    def as_dict(self) -> dict:
        return {
            "where": self.where,
            "metric": self.metric,
            "client": self.client,
            "server": self.server,
        }


def _differs(client, server) -> bool:
    if client is None or server is None:
        return (client is None) != (server is None)
    if isinstance(client, bool) or not isinstance(client, (int, float)):
        return True
    return not math.isclose(client, server, rel_tol=REL_TOLERANCE, abs_tol=ABS_TOLERANCE)


def compare_cell(where: str, client: dict, server: dict) -> list[Disagreement]:
    found = []
    for name in SCALARS:
        if name in client and _differs(client[name], server[name]):
            found.append(Disagreement(where, name, client[name], server[name]))
    for name in DISTRIBUTIONS:
        theirs, ours = client.get(name) or {}, server[name]
        for stat in STATS:
            if stat in theirs and _differs(theirs[stat], ours.get(stat)):
                found.append(Disagreement(where, f"{name}.{stat}", theirs[stat], ours.get(stat)))
    return found


def cell_key(cell: dict) -> str:
    return f"{cell['api']}/r{cell['round']}/c{cell['concurrency']}/{cell['prompt_set']}"


def loadtest(result: dict | None) -> tuple[list[dict], list[dict], list[Disagreement]]:
    """Recomputed cells, ladder levels (every round and prompt set of one concurrency
    pooled) and the client's disagreements."""
    cells: list[dict] = []
    disagreements: list[Disagreement] = []
    pooled: dict[int, list[dict]] = {}  # concurrency: every request at it
    for cell in (result or {}).get("cells") or []:
        requests = cell.get("requests") or []
        ours = cell_summary(requests)
        disagreements += compare_cell(cell_key(cell), cell.get("summary") or {}, ours)
        cells.append(
            {
                "key": cell_key(cell),
                "api": cell["api"],
                "round": cell["round"],
                "concurrency": cell["concurrency"],
                "prompt_set": cell["prompt_set"],
                # Sampled by the harness from nvidia-smi inside the cell's window
                # (MiB per GPU UUID); absent on machines without a GPU.
                "gpu_memory_peak_mib": cell.get("gpu_memory_peak_mib") or {},
                **ours,
            }
        )
        pooled.setdefault(cell["concurrency"], []).extend(requests)
    levels = []
    for concurrency, requests in sorted(pooled.items()):
        summary = cell_summary(requests)
        mine = [c for c in cells if c["concurrency"] == concurrency]
        by_round: dict = {}
        for c in mine:
            by_round.setdefault(c["round"], []).append(c["output_tok_s"])
        per_round = [math.fsum(v for v in vs if v) / len(vs) for vs in by_round.values()]
        levels.append(
            {
                "concurrency": concurrency,
                "n": summary["n"],
                "errors": summary["errors"],
                "error_rate": summary["error_rate"],
                "ttft_ms": summary["ttft_ms"],
                "tpot_ms": summary["tpot_ms"],
                # Shown per level in the acceptance report (docs/rules/acceptance.md#report).
                "e2e_ms": summary["e2e_ms"],
                "output_tok_s": spread(per_round),
                "effective_concurrency": [c["effective_concurrency"] for c in mine],
            }
        )
    return cells, levels, disagreements


def matmul_tflops(record: dict) -> dict:
    """2·m·n·k per iteration over each iteration's time (docs/metrics.md#microbenchmarks)."""
    flop = record.get("flop_per_iter") or 2 * record["m"] * record["n"] * record["k"]
    rates = sorted(flop / ns / 1e3 for ns in record.get("iter_ns") or [] if ns)
    if not rates:
        return {}
    return {"median": percentile(rates, 50), "max": rates[-1], "min": rates[0]}


def bandwidth_gbps(record: dict) -> dict:
    """Bytes moved per iteration over its time, decimal GB/s; best and median."""
    moved = record["bytes_per_iter"]
    rates = sorted(moved / ns for ns in record.get("iter_ns") or [] if ns)
    if not rates:
        return {}
    return {"median": percentile(rates, 50), "best": rates[-1]}


def bench(result: dict | None) -> tuple[dict, list[Disagreement]]:
    if not result:
        return {}, []
    disagreements, matmul, memory = [], [], []
    for record in result.get("matmul") or []:
        ours = matmul_tflops(record)
        where = f"matmul/{record['device']}/{record['dtype']}/{record['regime']}/r{record['round']}"
        for stat, value in ours.items():
            theirs = (record.get("tflops") or {}).get(stat)
            if _differs(theirs, value):
                disagreements.append(Disagreement(where, f"tflops.{stat}", theirs, value))
        matmul.append({k: record.get(k) for k in ("device", "dtype", "regime", "round")} | ours)
    for record in result.get("memory_bw") or []:
        ours = bandwidth_gbps(record)
        where = f"memory_bw/{record['device']}/{record['kernel']}/r{record['round']}"
        for stat, value in ours.items():
            theirs = (record.get("GBps") or {}).get(stat)
            if _differs(theirs, value):
                disagreements.append(Disagreement(where, f"GBps.{stat}", theirs, value))
        memory.append({k: record.get(k) for k in ("device", "kernel", "round")} | ours)
    summary = {"backend": result.get("backend"), "matmul": matmul, "memory_bw": memory}
    return summary, disagreements


def netprobe(result: dict | None) -> list[dict]:
    probes = []
    for probe in (result or {}).get("probes") or []:
        raw = probe.get("rtt_ms_raw") or []
        count = probe.get("count") or 0
        probes.append(
            {
                "host": f"{probe.get('host')}:{probe.get('port')}",
                "rtt_ms": describe(raw),
                "loss": (count - len(raw)) / count if count else None,
            }
        )
    return probes


# --- the open-loop rate search (docs/metrics.md#rate-search) --------------------------


def arrival_rate(times) -> float | None:
    """(n − 1) ÷ (last − first): the rate the times are spaced at; None below two times."""
    clean = [t for t in times if t is not None]
    if len(clean) < 2 or max(clean) == min(clean):
        return None
    return (len(clean) - 1) / ((max(clean) - min(clean)) / 1e9)


def meets_slo(metrics: dict, slo: dict) -> bool:
    """vLLM's goodput rule: every limit set (ms) is at least the request's value."""
    for name, limit in slo.items():
        if limit is None:
            continue
        value = metrics.get(name)
        if value is None or value > limit:
            return False
    return True


def goodput(step: dict, slo: dict) -> tuple[float | None, float | None]:
    """Requests meeting every limit of ``slo``, and their output tokens, per second of the
    step (``step`` as ``rate_step`` gives it)."""
    duration = step["duration_s"]
    if not duration:
        return None, None
    good = [r for r in step["timings"] if meets_slo(r, slo)]
    return len(good) / duration, sum(r["osl"] or 0 for r in good) / duration


def rate_step(step: dict) -> dict:
    """One rate step recomputed from its requests: the cell aggregates, the rates the
    requests were scheduled (``t_sched``) and sent at, and each completed request's timings
    (``timings``, for goodput against whichever SLO judges it)."""
    requests = step.get("requests") or []
    summary = cell_summary(requests)
    timings = [
        {**{k: m[k] for k in ("ttft_ms", "tpot_ms")}, "osl": r.get("osl")}
        for r in requests
        if r.get("error") is None
        for m in (request_metrics(r),)
    ]
    return {
        "index": step.get("index"),
        "target_rps": step.get("target_rps"),
        "arrival": step.get("arrival"),
        "offered_rps": arrival_rate(r.get("t_sched_ns") for r in requests),
        "send_rps": arrival_rate(r.get("t_send_ns") for r in requests),
        **summary,
        "timings": timings,
    }


RATE_SCALARS = (*SCALARS, "offered_rps", "send_rps", "goodput_req_s", "goodput_tok_s")
RATE_DISTRIBUTIONS = ("ttft_ms", "tpot_ms", "e2e_ms")


def ratesearch(result: dict | None) -> tuple[dict | None, list[Disagreement]]:
    """The rate search recomputed: every step from its requests, judged against the SLO the
    run was given for the client's figures only (the rules judge the case's SLO), and every
    client figure that disagrees, its best step included. None when the step did not run."""
    if not result:
        return None, []
    run_slo = result.get("slo_ms") or {}
    slo = {name: run_slo.get(name) for name in ("ttft_ms", "tpot_ms")}
    disagreements: list[Disagreement] = []
    steps = []
    for step in result.get("steps") or []:
        ours = rate_step(step)
        ours["goodput_req_s"], ours["goodput_tok_s"] = goodput(ours, slo)
        where = f"ratesearch/step{step.get('index')}"
        theirs = step.get("summary") or {}
        for name in RATE_SCALARS:
            if name in theirs and _differs(theirs[name], ours[name]):
                disagreements.append(Disagreement(where, name, theirs[name], ours[name]))
        for name in RATE_DISTRIBUTIONS:
            mine, client = ours[name], theirs.get(name) or {}
            for stat in STATS:
                if stat in client and _differs(client[stat], mine.get(stat)):
                    disagreements.append(
                        Disagreement(where, f"{name}.{stat}", client[stat], mine.get(stat))
                    )
        steps.append(ours)
    best = result.get("best")
    best = best if isinstance(best, dict) else {}
    ours_best = next((s for s in steps if s["index"] == best.get("index")), None)
    for name in ("offered_rps", "goodput_req_s", "goodput_tok_s"):
        if name in best and _differs(best[name], ours_best[name] if ours_best else None):
            server = ours_best[name] if ours_best else None
            disagreements.append(Disagreement("ratesearch/best", name, best[name], server))
    search = result.get("search")
    search = search if isinstance(search, dict) else {}
    return {
        "arrival": result.get("arrival"),
        "seed": result.get("seed"),
        "slo_ms": slo,
        "max_error_rate": search.get("max_error_rate"),
        "stopped": result.get("stopped"),
        "steps": steps,
    }, disagreements


# --- between nodes and from the gateway (docs/metrics.md#between-nodes) ------------------


def jitter_ms(raw: list) -> float | None:
    """The mean absolute difference of consecutive round trips (RFC 3550 style)."""
    values = [v for v in raw if isinstance(v, int | float) and not isinstance(v, bool)]
    gaps = [abs(b - a) for a, b in zip(values, values[1:])]
    return math.fsum(gaps) / len(gaps) if gaps else None


def round_trips(probe: dict) -> dict:
    """A probe's round trips recomputed from its raw times: distribution, jitter, loss."""
    raw = probe.get("rtt_ms_raw") or []
    count = probe.get("count") or 0
    return {
        "host": f"{probe.get('host')}:{probe.get('port')}",
        "method": probe.get("method"),
        "rtt_ms": describe(raw),
        "jitter_ms": jitter_ms(raw),
        "loss": (count - len(raw)) / count if count else None,
    }


def transfer_gbit_s(transfer: dict) -> float | None:
    """Every stream's last sample summed over the latest of their times (bits per ns are
    Gbit/s); None when no stream moved bytes or a stream's samples run backwards."""
    last = []
    for stream in transfer.get("per_stream") or []:
        samples = stream.get("samples") or []
        for (t0, b0), (t1, b1) in zip(samples, samples[1:]):
            if t1 < t0 or b1 < b0:
                return None
        if samples:
            last.append(samples[-1])
    elapsed = max((t for t, _bytes in last), default=0)
    total = sum(b for _t, b in last)
    if elapsed <= 0 or total <= 0:
        return None
    return total * 8 / elapsed


_RATE_GBIT = re.compile(r"([\d.]+)\s*Gb/sec")


def rdma_ports(rdma: dict | None) -> list[dict]:
    """Each RDMA port sysfs listed, read from its raw text: link layer, rate, active."""
    ports = []
    for device in (rdma or {}).get("devices") or []:
        for port in device.get("ports") or []:
            rate = _RATE_GBIT.search(str(port.get("rate") or ""))
            ports.append(
                {
                    "device": str(device.get("name") or ""),
                    "port": str(port.get("port") or ""),
                    "link_layer": str(port.get("link_layer") or ""),
                    "rate_gbit": float(rate.group(1)) if rate else None,
                    "active": "ACTIVE" in str(port.get("state") or "").upper(),
                }
            )
    return ports


def netpeer(result: dict | None) -> tuple[dict | None, list[Disagreement]]:
    """The between-nodes figures recomputed from the raw round trips and byte samples,
    and the client figures that disagree with them."""
    if not result:
        return None, []
    disagreements = []
    rtt = round_trips(result.get("rtt") or {})
    client_rtt = result.get("rtt") or {}
    for name, ours in (("loss", rtt["loss"]), ("jitter_ms", rtt["jitter_ms"])):
        if name in client_rtt and _differs(client_rtt[name], ours):
            disagreements.append(Disagreement("netpeer/rtt", name, client_rtt[name], ours))
    throughput = {}
    for transfer in result.get("throughput") or []:
        direction = transfer.get("direction")
        ours = transfer_gbit_s(transfer)
        throughput[direction] = ours
        if "gbit_s" in transfer and _differs(transfer["gbit_s"], ours):
            disagreements.append(
                Disagreement(f"netpeer/{direction}", "gbit_s", transfer["gbit_s"], ours)
            )
    streams = [t.get("streams") for t in result.get("throughput") or []]
    peer = result.get("peer") or {}
    summary = {
        "peer": f"{peer.get('host')}:{peer.get('port')}",
        "rtt_ms": rtt["rtt_ms"],
        "jitter_ms": rtt["jitter_ms"],
        "loss": rtt["loss"],
        "send_gbit_s": throughput.get("send"),
        "receive_gbit_s": throughput.get("receive"),
        "streams": max((s for s in streams if isinstance(s, int)), default=None),
        "rdma": rdma_ports(result.get("rdma")),
    }
    return summary, disagreements


def gateway(result: dict | None) -> list[dict]:
    """The round trips a gateway bundle measured from the customer's gateway."""
    return [round_trips(probe) for probe in (result or {}).get("probes") or []]

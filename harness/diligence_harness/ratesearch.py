"""Open-loop arrivals and the search for the highest request rate within the SLO.

Beside the closed-loop ladder (loadtest.py), where a stream sends its next request only
once the previous one has finished, this step sends each request at its scheduled time
whatever the endpoint is doing: a Poisson process (exponential gaps, the arrivals of many
independent users) or a constant rate, seeded. That is how vLLM's `bench serve` and
MLPerf Inference's server scenario load a server, and it shows what a closed loop hides:
a server slower than the arrivals builds a queue, and the time to first token grows.

The search (docs/metrics.md#rate-search) runs steps at rising rates: doubling from the
start rate while each step meets the SLO, then bisecting between the highest passing and
the lowest failing rate, within a number of steps and a time budget. A step meets the
SLO when its P95 time to first token and P95 time per output token are within the SLO,
judged only with at least 130 requests with a first token (the P95 rule), and its error
rate is within the limit. The result is the highest passing rate, with the goodput there:
requests meeting every SLO, and their output tokens, per second.

Every step keeps its per-request raw records as the ladder does; `t_sched_ns` is the
request's scheduled send time, so `t_send − t_sched` shows a client that fell behind its
schedule. The summaries are advisory: the server recomputes them from the raw records.
"""

import asyncio
import math
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from diligence_harness import metrics
from diligence_harness.clock import now_ns
from diligence_harness.eventloop import collector_paused
from diligence_harness.eventloop import run as run_event_loop
from diligence_harness.loadtest import (
    LoadtestConfig,
    PreparedRequest,
    _cpu_seconds,
    _loop_lag_monitor,
    _preflight,
    _prompt_sets,
    _warmup,
    _workload_description,
    client_window,
    finish_record,
    prepare,
)
from diligence_harness.streamclient import (
    ClientProtocol,
    Endpoint,
    exchange,
    open_connection,
    parse_endpoint,
)

ARRIVALS = ("poisson", "constant")
P95_MIN_SAMPLES = metrics.MIN_SAMPLES_FOR_PERCENTILE[95]
# Bounded defaults: at most 8 steps of 160 requests and 15 minutes in all. 160 leaves room
# for a few errors above the 130 requests a P95 needs.
DEFAULT_START_RPS = 1.0
DEFAULT_MAX_RPS = 256.0
DEFAULT_MAX_STEPS = 8
DEFAULT_REQUESTS_PER_STEP = 160
DEFAULT_RESOLUTION = 0.05  # bisect until the failing rate is within 5 % of the passing one
DEFAULT_MAX_SECONDS = 900.0
DEFAULT_MAX_ERROR_RATE = 0.005  # the case's default error-rate SLO, 0.5 %
DEFAULT_MAX_IN_FLIGHT = 512  # requests open at once (one connection each), under 1024 files


@dataclass
class RateSearchConfig:
    load: LoadtestConfig  # endpoint, model, API, prompts, output length, SLOs, key
    arrival: str = "poisson"
    seed: int = 1234
    start_rps: float = DEFAULT_START_RPS
    max_rps: float = DEFAULT_MAX_RPS
    max_steps: int = DEFAULT_MAX_STEPS
    requests_per_step: int = DEFAULT_REQUESTS_PER_STEP
    resolution: float = DEFAULT_RESOLUTION
    max_seconds: float = DEFAULT_MAX_SECONDS
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    slo_ms: dict = field(default_factory=dict)  # ttft_ms / tpot_ms; set from load.slo_ms

    def __post_init__(self) -> None:
        if self.arrival not in ARRIVALS:
            raise ValueError(f"arrival must be one of {', '.join(ARRIVALS)}")
        if not 0 < self.start_rps <= self.max_rps:
            raise ValueError("the start rate must be above 0 and at most the maximum rate")
        if self.max_steps < 1 or self.requests_per_step < 1 or self.max_in_flight < 1:
            raise ValueError("steps, requests per step and requests in flight must be ≥ 1")
        if not self.slo_ms:
            slo = self.load.slo_ms or {}
            self.slo_ms = {"ttft_ms": slo.get("ttft_ms"), "tpot_ms": slo.get("tpot_ms")}
        if self.slo_ms.get("ttft_ms") is None and self.slo_ms.get("tpot_ms") is None:
            raise ValueError("the rate search needs an SLO: --slo-ttft-ms and/or --slo-tpot-ms")


def step_seed(seed: int, index: int) -> int:
    """Each step's own arrival seed: the run's seed and the step's number (1, 2, …)."""
    return seed * 1000 + index


def arrival_offsets(kind: str, rate_rps: float, count: int, seed: int) -> list[float]:
    """Seconds from the step's start at which each of `count` requests is sent.

    Poisson: exponential gaps of mean 1 / rate from `random.Random(seed)`, the first request
    at 0 (vLLM `bench serve`'s default arrivals, MLPerf's server scenario). Constant: evenly
    spaced at 1 / rate. The same arguments give the same offsets.
    """
    if rate_rps <= 0 or not math.isfinite(rate_rps):
        raise ValueError("the rate must be a positive number")
    if kind == "constant":
        return [i / rate_rps for i in range(count)]
    if kind != "poisson":
        raise ValueError(f"arrival must be one of {', '.join(ARRIVALS)}")
    rng = random.Random(seed)
    offsets, t = [], 0.0
    for _ in range(count):
        offsets.append(t)
        t += rng.expovariate(rate_rps)
    return offsets


# --- sending on schedule -------------------------------------------------------------


class _Connections:
    """Idle keep-alive connections; a request that finds none opens one (its wait is
    recorded as client queueing, never as the server's time)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.idle: list[ClientProtocol] = []
        self.opened: list[ClientProtocol] = []

    async def fill(self, count: int) -> None:
        opened = await asyncio.gather(
            *(open_connection(self.endpoint) for _ in range(count)), return_exceptions=True
        )
        for protocol in opened:
            if isinstance(protocol, ClientProtocol):
                self.idle.append(protocol)
                self.opened.append(protocol)

    def take(self) -> ClientProtocol | None:
        while self.idle:
            protocol = self.idle.pop()
            if protocol.open:
                return protocol
        return None

    async def open(self) -> ClientProtocol:
        protocol = await open_connection(self.endpoint)
        self.opened.append(protocol)
        return protocol

    def close(self) -> None:
        for protocol in self.opened:
            if protocol.transport is not None:
                protocol.transport.close()


async def _send(
    connections: _Connections,
    job: PreparedRequest,
    t_sched_ns: int,
    timeout_s: float,
    in_flight: asyncio.Semaphore,
    results: list,
) -> None:
    raw: dict = {"request_id": job.request_id, "t_sched_ns": t_sched_ns}
    async with in_flight:
        protocol = connections.take()
        if protocol is None:
            raw["t_connect_start_ns"] = now_ns()
            try:
                protocol = await connections.open()
            except OSError as exc:
                raw.update(t_send_ns=None, status=None, pieces=[], transport_error=str(exc))
                results.append((job, raw))
                return
        t_send, reader = await exchange(protocol, job.payload, timeout_s)
        raw.update(
            t_send_ns=t_send,
            t_hdr_ns=reader.t_hdr_ns,
            t_end_ns=reader.t_end_ns,
            status=reader.status,
            headers=reader.headers,
            pieces=reader.body_pieces,
            transport_error=reader.error,
        )
        if protocol.open:
            connections.idle.append(protocol)
    results.append((job, raw))


async def run_open_loop(
    endpoint: Endpoint,
    jobs: Sequence[PreparedRequest],
    offsets_s: Sequence[float],
    timeout_s: float,
    *,
    preopen: int,
    max_in_flight: int,
) -> tuple[list, dict]:
    """Send job i at `offsets_s[i]` after the start whatever has completed; returns the raw
    exchanges (in completion order) and the client's own figures, as `loadtest.run_cell`."""
    connections = _Connections(endpoint)
    await connections.fill(min(preopen, max_in_flight))
    in_flight = asyncio.Semaphore(max_in_flight)
    results: list = []
    lag: list[float] = []
    stop = asyncio.Event()
    tasks = []
    with collector_paused():
        monitor = asyncio.ensure_future(_loop_lag_monitor(lag, stop))
        cpu_start, t_start = _cpu_seconds(), now_ns()
        for job, offset in zip(jobs, offsets_s):
            due = t_start + int(offset * 1e9)
            wait_ns = due - now_ns()
            if wait_ns > 0:
                await asyncio.sleep(wait_ns / 1e9)
            tasks.append(
                asyncio.ensure_future(_send(connections, job, due, timeout_s, in_flight, results))
            )
        await asyncio.gather(*tasks)
        t_end, cpu_end = now_ns(), _cpu_seconds()
        stop.set()
        await monitor
    connections.close()
    client = client_window(t_start, t_end, cpu_start, cpu_end, lag)
    client["connections_opened"] = len(connections.opened)
    return results, client


# --- the search ----------------------------------------------------------------------


def next_rate(
    rate: float, highest_pass: float | None, lowest_fail: float | None, cfg
) -> tuple[float | None, str | None]:
    """The next step's rate, or None and why the search stops.

    Doubling (capped at the maximum) while every step passes; halving while none has;
    then the midpoint between the highest passing and the lowest failing rate until they
    are within the resolution.
    """
    if highest_pass is None:
        return rate / 2, None
    if lowest_fail is None:
        if rate >= cfg.max_rps:
            return None, "max_rate"
        return min(rate * 2, cfg.max_rps), None
    if lowest_fail <= highest_pass * (1 + cfg.resolution):
        return None, "resolution"
    return (highest_pass + lowest_fail) / 2, None


def _interleaved_prompts(prompt_sets: dict) -> list[str]:
    """One prompt of each set in turn, so every step sends the sets' mix."""
    lists = [list(p) for p in prompt_sets.values() if len(p)]
    longest = max((len(p) for p in lists), default=0)
    return [p[i % len(p)] for i in range(longest) for p in lists]


async def _run_step(cfg: RateSearchConfig, endpoint, api: str, prompts: list, index, rate, tag):
    count = cfg.requests_per_step
    seed = step_seed(cfg.seed, index)
    offsets = arrival_offsets(cfg.arrival, rate, count, seed)
    ids = [f"{tag}-rate{index}-{i}" for i in range(count)]
    jobs = prepare(cfg.load, endpoint, api, prompts, ids)
    results, client = await run_open_loop(
        endpoint,
        jobs,
        offsets,
        cfg.load.timeout_s,
        preopen=max(8, math.ceil(rate)),
        max_in_flight=cfg.max_in_flight,
    )
    order = {job.request_id: i for i, job in enumerate(jobs)}
    results.sort(key=lambda pair: order[pair[0].request_id])  # in the schedule's order
    records = [finish_record(job, raw, api) for job, raw in results]
    summary = metrics.rate_step_summary(records, cfg.slo_ms)
    return {
        "index": index,
        "target_rps": rate,
        "arrival": cfg.arrival,
        "seed": seed,
        "planned": count,
        "client": client,
        "requests": records,
        "summary": summary,
        "meets_slo": metrics.rate_step_meets_slo(summary, cfg.slo_ms, cfg.max_error_rate),
    }


async def _search(cfg: RateSearchConfig) -> dict:
    load = cfg.load
    endpoint = parse_endpoint(load.endpoint)
    api = load.apis[0]
    prompt_sets = _prompt_sets(load)
    prompts = _interleaved_prompts(prompt_sets)
    tag = uuid.uuid4().hex[:8]
    preflight = {api: await _preflight(load, endpoint, api, prompts[0])}
    load.extras_accepted = preflight[api]["extras_accepted"]
    load.apis = (api,)
    warmup = await _warmup(load, endpoint, prompt_sets, tag)
    started = time.monotonic()
    steps: list[dict] = []
    highest_pass: float | None = None
    lowest_fail: float | None = None
    rate: float | None = cfg.start_rps
    stopped = "max_steps"
    for index in range(1, cfg.max_steps + 1):
        assert rate is not None  # the loop stops as soon as there is no next rate
        elapsed = time.monotonic() - started
        if elapsed + cfg.requests_per_step / rate > cfg.max_seconds:
            stopped = "max_seconds"  # the next step's arrivals alone would overrun the budget
            break
        step = await _run_step(cfg, endpoint, api, prompts, index, rate, tag)
        steps.append(step)
        if step["meets_slo"] is None:
            stopped = "too_few_samples"
            break
        if step["meets_slo"]:
            highest_pass = max(highest_pass or rate, rate)
        else:
            lowest_fail = min(lowest_fail or rate, rate)
        rate, reason = next_rate(rate, highest_pass, lowest_fail, cfg)
        if rate is None:
            stopped = reason or stopped
            break
    return {
        "mode": "open_loop",
        "endpoint": {"base_url": endpoint.display, "apis": [api], "model": load.model},
        "workload": _workload_description(load, prompt_sets),
        "arrival": cfg.arrival,
        "seed": cfg.seed,
        "slo_ms": cfg.slo_ms,
        "search": {
            "start_rps": cfg.start_rps,
            "max_rps": cfg.max_rps,
            "max_steps": cfg.max_steps,
            "requests_per_step": cfg.requests_per_step,
            "resolution": cfg.resolution,
            "max_seconds": cfg.max_seconds,
            "max_error_rate": cfg.max_error_rate,
            "max_in_flight": cfg.max_in_flight,
            "min_samples": P95_MIN_SAMPLES,
        },
        "preflight": preflight,
        "warmup": warmup,
        "steps": steps,
        "stopped": stopped,
        "best": best_step(steps),
    }


def best_step(steps: list[dict]) -> dict | None:
    """The passing step of the highest target rate, with its rates and goodput."""
    passing = [s for s in steps if s["meets_slo"]]
    if not passing:
        return None
    best = max(passing, key=lambda s: s["target_rps"])
    summary = best["summary"]
    return {
        "index": best["index"],
        "target_rps": best["target_rps"],
        "offered_rps": summary["offered_rps"],
        "goodput_req_s": summary["goodput_req_s"],
        "goodput_tok_s": summary["goodput_tok_s"],
    }


def run_ratesearch(cfg: RateSearchConfig) -> dict:
    """The whole search on a fresh event loop; the result is the bundle's ratesearch step."""
    return run_event_loop(_search(cfg), busy_poll=cfg.load.busy_poll)

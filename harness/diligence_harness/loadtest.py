"""Closed-loop load test of an OpenAI-compatible streaming endpoint.

Shape (docs/metrics.md#load-test): fixed short / medium / long prompt sets,
fixed output length, a concurrency ladder (default 1/2/4/8/16/32), 3 rounds,
warm-up discarded. Every request's raw events are recorded
(docs/metrics.md#timestamps); summaries are derived (metrics.py) and advisory.

Accuracy rules this module follows (docs/metrics.md#client-accuracy):
- bodies are serialised before the cell starts; the hot path writes bytes;
- `t_send_ns` is read immediately before the write, after any wait for a slot
  or a connection; the wait itself is kept as `t_sched_ns` (vLLM #54101);
- connections are opened before the cell's clock starts, one per stream;
- SSE/JSON decoding runs after the cell (streamdecode.py), never on the loop;
- the client's own CPU time and event-loop lag are recorded per cell so a
  client bottleneck is visible next to `effective_concurrency`.
"""

import asyncio
import json
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from diligence_harness import metrics, prompts
from diligence_harness.clock import now_ns
from diligence_harness.eventloop import collector_paused
from diligence_harness.eventloop import run as run_event_loop
from diligence_harness.streamclient import (
    ClientProtocol,
    Endpoint,
    build_request,
    exchange,
    open_connection,
    parse_endpoint,
)
from diligence_harness.streamdecode import classify_error, decode_stream
from diligence_harness.telemetry import TelemetrySampler

try:
    import resource
except ImportError:  # not on Linux/macOS: CPU accounting is then not recorded
    resource = None  # type: ignore[assignment]

API_PATHS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}
DEFAULT_LADDER = (1, 2, 4, 8, 16, 32)
# The server judges each concurrency level by its P95 time to first token, pooled over every
# round, prompt set and API of that level, and only when the level has at least this many
# requests (MLPerf's early-stopping bound for a P95); with fewer the level is "not measured".
# By default every level sends at least this many, spread evenly over its cells.
P95_MIN_SAMPLES = metrics.MIN_SAMPLES_FOR_PERCENTILE[95]


@dataclass
class LoadtestConfig:
    endpoint: str
    model: str
    apis: tuple[str, ...] = ("chat",)
    ladder: tuple[int, ...] = DEFAULT_LADDER
    rounds: int = 3
    prompt_sets: tuple[str, ...] = ("short", "medium", "long")
    max_tokens: int = 128
    ignore_eos: bool = True
    min_tokens: bool = True
    continuous_usage: bool = True
    requests_per_stream: int = 4
    min_requests_per_cell: int = 8
    min_requests_per_level: int = P95_MIN_SAMPLES
    warmup_requests: int = 2
    timeout_s: float = 300.0
    seed: int = 1234
    slo_ms: dict = field(default_factory=lambda: {"ttft_ms": None, "tpot_ms": None, "e2e_ms": None})
    api_key: str | None = None  # a secret: used for requests, never recorded
    busy_poll: bool = False  # see eventloop.py: lower timing error, one core fully used
    extras_accepted: bool = True  # set by the preflight: did the server take the extras?
    # The case's own prompt set (workload_sets.SetFile), by tier; None: the built-in sets.
    prompt_source: Any = None


def cells_per_level(cfg: LoadtestConfig) -> int:
    """The cells one concurrency level is measured in: every round, API and prompt set."""
    return cfg.rounds * len(cfg.apis) * len(cfg.prompt_sets)


def requests_per_cell(cfg: LoadtestConfig, concurrency: int) -> int:
    """Enough for every stream to send several, and for the level to reach its P95 sample."""
    cells = max(cells_per_level(cfg), 1)
    for_level = -(-cfg.min_requests_per_level // cells)  # ceiling division
    return max(cfg.min_requests_per_cell, concurrency * cfg.requests_per_stream, for_level)


def requests_per_level(cfg: LoadtestConfig) -> dict[int, int]:
    """How many requests each concurrency level of the ladder sends, all its cells together."""
    return {c: requests_per_cell(cfg, c) * cells_per_level(cfg) for c in cfg.ladder}


@dataclass
class PreparedRequest:
    request_id: str
    prompt_index: int
    prompt_sha256: str
    isl_chars: int
    payload: bytes


def request_body(cfg: LoadtestConfig, api: str, prompt: str, extras: bool) -> dict:
    body: dict = {"model": cfg.model, "max_tokens": cfg.max_tokens, "stream": True}
    body["temperature"] = 0
    if api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    body["stream_options"] = {"include_usage": True}
    if extras:
        # Fixed output length where the server supports it (vLLM, SGLang): without it
        # an early EOS shortens the output and flatters throughput (docs/metrics.md#errors,
        # MLPerf TEST09). Per-chunk usage corrects bundling (docs/metrics.md).
        if cfg.ignore_eos:
            body["ignore_eos"] = True
        if cfg.min_tokens:
            body["min_tokens"] = cfg.max_tokens
        if cfg.continuous_usage:
            body["stream_options"]["continuous_usage_stats"] = True
    return body


def _headers(cfg: LoadtestConfig, request_id: str) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "X-Request-Id": request_id,
    }
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    return headers


def prepare(
    cfg: LoadtestConfig, endpoint: Endpoint, api: str, prompt_list: Sequence[str], ids: list[str]
) -> list[PreparedRequest]:
    prepared = []
    for i, request_id in enumerate(ids):
        prompt_index = i % len(prompt_list)
        prompt = prompt_list[prompt_index]
        body = json.dumps(request_body(cfg, api, prompt, cfg.extras_accepted)).encode()
        payload = build_request(endpoint, "POST", API_PATHS[api], body, _headers(cfg, request_id))
        prepared.append(
            PreparedRequest(
                request_id, prompt_index, prompts.sha256_text(prompt), len(prompt), payload
            )
        )
    return prepared


class _Stream:
    """One closed-loop stream: a persistent keep-alive connection and its requests."""

    def __init__(self, endpoint: Endpoint, timeout_s: float) -> None:
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self.protocol: ClientProtocol | None = None

    async def connect(self) -> None:
        self.protocol = await open_connection(self.endpoint)

    async def run(self, jobs: deque, results: list) -> None:
        while jobs:
            job = jobs.popleft()
            # Closed loop: the request is due the moment this stream's slot is free.
            raw = {"request_id": job.request_id, "t_sched_ns": now_ns()}
            if self.protocol is None or not self.protocol.open:
                raw["t_connect_start_ns"] = now_ns()
                try:
                    await self.connect()
                except OSError as exc:
                    raw.update(t_send_ns=None, status=None, pieces=[], transport_error=str(exc))
                    results.append((job, raw))
                    continue
            assert self.protocol is not None  # connected just above when it was not
            t_send, reader = await exchange(self.protocol, job.payload, self.timeout_s)
            raw.update(
                t_send_ns=t_send,
                t_hdr_ns=reader.t_hdr_ns,
                t_end_ns=reader.t_end_ns,
                status=reader.status,
                headers=reader.headers,
                pieces=reader.body_pieces,
                transport_error=reader.error,
            )
            results.append((job, raw))

    def close(self) -> None:
        if self.protocol is not None and self.protocol.transport is not None:
            self.protocol.transport.close()


async def _loop_lag_monitor(samples: list[float], stop: asyncio.Event, period_s: float = 0.01):
    """Event-loop lag: how late a 10 ms sleep wakes up; high lag flags a client bottleneck."""
    while not stop.is_set():
        start = now_ns()
        await asyncio.sleep(period_s)
        samples.append(max(0.0, (now_ns() - start) / 1e6 - period_s * 1e3))


def _cpu_seconds() -> float | None:
    if resource is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run_cell(
    endpoint: Endpoint, jobs: list[PreparedRequest], concurrency: int, timeout_s: float
) -> tuple[list, dict]:
    """Run the jobs over `concurrency` streams; returns raw results and client-side stats."""
    streams = [_Stream(endpoint, timeout_s) for _ in range(concurrency)]
    await asyncio.gather(*(s.connect() for s in streams), return_exceptions=True)
    queue = deque(jobs)
    results: list[tuple[PreparedRequest, dict]] = []
    lag: list[float] = []  # ms late, one per monitor tick
    stop = asyncio.Event()
    with collector_paused():
        monitor = asyncio.ensure_future(_loop_lag_monitor(lag, stop))
        cpu_start, t_start = _cpu_seconds(), now_ns()
        await asyncio.gather(*(s.run(queue, results) for s in streams))
        t_end, cpu_end = now_ns(), _cpu_seconds()
        stop.set()
        await monitor
    for stream in streams:
        stream.close()
    return results, client_window(t_start, t_end, cpu_start, cpu_end, lag)


def client_window(t_start, t_end, cpu_start, cpu_end, lag) -> dict:
    """The client's own load over a run: wall and CPU time, event-loop lag, the window."""
    wall_s = (t_end - t_start) / 1e9
    cpu_s = None if cpu_start is None or cpu_end is None else cpu_end - cpu_start
    return {
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "cpu_fraction": cpu_s / wall_s if cpu_s is not None and wall_s else None,
        "loop_lag_ms": metrics.distribution(lag),
        "window": {"t_start_ns": t_start, "t_end_ns": t_end},
    }


def finish_record(job: PreparedRequest, raw: dict, api: str) -> dict:
    """Decode one raw exchange into the bundle's request record (schema $defs/request)."""
    record = {
        "request_id": job.request_id,
        "prompt_index": job.prompt_index,
        "prompt_sha256": job.prompt_sha256,
        "isl_chars": job.isl_chars,
        "t_sched_ns": raw["t_sched_ns"],
        "t_connect_start_ns": raw.get("t_connect_start_ns"),
        "t_send_ns": raw["t_send_ns"],
        "t_hdr_ns": raw.get("t_hdr_ns"),
        "t_first_ns": None,
        "t_first_out_ns": None,
        "t_last_ns": None,
        "t_end_ns": raw.get("t_end_ns"),
        "http_status": raw.get("status"),
        "error": None,
    }
    status = raw.get("status")
    if status == 200 and raw["t_send_ns"] is not None:
        decode_stream(record, raw["pieces"], api)
    else:
        decode_stream(record, [], api)
        body = b"".join(piece for _, piece in raw.get("pieces", []))
        if body:
            record["error_body"] = body[:300].decode("utf-8", errors="replace")
    classify_error(record, status, raw.get("transport_error"))
    return record


async def _preflight(cfg: LoadtestConfig, endpoint: Endpoint, api: str, prompt: str) -> dict:
    """One request with the fixed-length extras; if refused (4xx), retry without them."""
    attempts = []
    for extras in (True, False):
        body = json.dumps(request_body(cfg, api, prompt, extras)).encode()
        request_id = f"preflight-{api}-{'x' if extras else 'plain'}-{uuid.uuid4().hex[:8]}"
        payload = build_request(endpoint, "POST", API_PATHS[api], body, _headers(cfg, request_id))
        job = PreparedRequest(request_id, 0, prompts.sha256_text(prompt), len(prompt), payload)
        results, _ = await run_cell(endpoint, [job], 1, cfg.timeout_s)
        record = finish_record(job, results[0][1], api)
        attempts.append(
            {
                "extras": extras,
                "http_status": record["http_status"],
                "error": record["error"],
                "server_header": results[0][1].get("headers", {}).get("server"),
            }
        )
        status = record["http_status"]
        if record["error"] is None or status is None or not 400 <= status < 500:
            return {"attempts": attempts, "extras_accepted": extras}
    return {"attempts": attempts, "extras_accepted": False}


async def _run_ladder(cfg: LoadtestConfig) -> dict:
    endpoint = parse_endpoint(cfg.endpoint)
    prompt_sets = _prompt_sets(cfg)
    run_tag = uuid.uuid4().hex[:8]
    preflight = {}
    for api in cfg.apis:
        preflight[api] = await _preflight(cfg, endpoint, api, prompt_sets[cfg.prompt_sets[0]][0])
    cfg.extras_accepted = all(p["extras_accepted"] for p in preflight.values())
    warmup = await _warmup(cfg, endpoint, prompt_sets, run_tag)
    # Device memory while serving (docs/metrics.md#telemetry), where this machine
    # has GPUs; it says nothing about a remote endpoint's GPUs.
    sampler = TelemetrySampler(period_s=0.5)
    sampler.start()
    try:
        cells = await _measure_cells(cfg, endpoint, prompt_sets, run_tag, sampler)
    finally:
        sampler.stop()
    return {
        "endpoint": {"base_url": endpoint.display, "apis": list(cfg.apis), "model": cfg.model},
        "workload": _workload_description(cfg, prompt_sets),
        "ladder": list(cfg.ladder),
        "rounds": cfg.rounds,
        "mode": "closed_loop",
        "preflight": preflight,
        "warmup": warmup,
        "slo_ms": cfg.slo_ms,
        "cells": cells,
        "across_rounds": metrics.across_rounds(cells),
        "telemetry": {"source": sampler.source, "samples": sampler.samples},
    }


async def _measure_cells(cfg, endpoint, prompt_sets: dict, run_tag: str, sampler) -> list[dict]:
    cells = []
    for round_no in range(1, cfg.rounds + 1):
        for concurrency in cfg.ladder:
            for api in cfg.apis:
                for set_name, prompt_list in prompt_sets.items():
                    cell = await _measure_cell(
                        cfg, endpoint, api, set_name, prompt_list, round_no, concurrency, run_tag
                    )
                    window = cell["client"]["window"]
                    cell["gpu_memory_peak_mib"] = sampler.peak_memory(
                        window["t_start_ns"], window["t_end_ns"]
                    )
                    cells.append(cell)
    return cells


async def _warmup(cfg: LoadtestConfig, endpoint: Endpoint, prompt_sets: dict, run_tag: str) -> dict:
    """Warm-up requests per API and prompt set, sent and then discarded, as vLLM's warm-ups."""
    sent = 0
    for api in cfg.apis:
        for set_name, prompt_list in prompt_sets.items():
            ids = [f"{run_tag}-warmup-{api}-{set_name}-{i}" for i in range(cfg.warmup_requests)]
            jobs = prepare(cfg, endpoint, api, prompt_list, ids)
            if jobs:
                await run_cell(endpoint, jobs, 1, cfg.timeout_s)
            sent += len(jobs)
    return {"requests": sent, "discarded": True}


async def _measure_cell(cfg, endpoint, api, set_name, prompt_list, round_no, concurrency, run_tag):
    count = requests_per_cell(cfg, concurrency)
    prefix = f"{run_tag}-{api}-r{round_no}-c{concurrency}-{set_name}"
    jobs = prepare(cfg, endpoint, api, prompt_list, [f"{prefix}-{i}" for i in range(count)])
    results, client = await run_cell(endpoint, jobs, concurrency, cfg.timeout_s)
    records = [finish_record(job, raw, api) for job, raw in results]
    return {
        "round": round_no,
        "concurrency": concurrency,
        "prompt_set": set_name,
        "api": api,
        "client": client,
        "requests": records,
        "summary": metrics.cell_summary(records, target_concurrency=concurrency, slo=cfg.slo_ms),
    }


def _prompt_sets(cfg: LoadtestConfig) -> dict:
    """The prompts of each set: the case's own tiers (read back from the file), or built."""
    if cfg.prompt_source is not None:
        return {t: cfg.prompt_source.tiers[t] for t in cfg.prompt_sets}
    return {name: prompts.build_prompt_set(name, cfg.seed) for name in cfg.prompt_sets}


def _describe_sets(cfg: LoadtestConfig, prompt_sets: dict) -> dict:
    if cfg.prompt_source is None:
        return {name: prompts.describe_prompt_set(name, p) for name, p in prompt_sets.items()}
    # The case's own set: its digest and sizes, never its text (or one digest per prompt:
    # each request already names its prompt's digest).
    source = cfg.prompt_source
    return {
        tier: {
            "name": tier,
            "generator": f"{source.source}:{source.name}",
            "count": len(tier_prompts),
            "chars_total": tier_prompts.chars_total,
            "set_sha256": source.sha256,
        }
        for tier, tier_prompts in prompt_sets.items()
    }


def _workload_description(cfg: LoadtestConfig, prompt_sets: dict) -> dict:
    sample_body = request_body(cfg, cfg.apis[0], "<prompt>", cfg.extras_accepted)
    return {
        "prompt_sets": _describe_sets(cfg, prompt_sets),
        "prompt_seed": cfg.seed,
        "max_tokens": cfg.max_tokens,
        "request_body_template": sample_body,
        "requests_per_stream": cfg.requests_per_stream,
        "min_requests_per_cell": cfg.min_requests_per_cell,
        "min_requests_per_level": cfg.min_requests_per_level,
        "timeout_s": cfg.timeout_s,
        "stream": True,
        "busy_poll": cfg.busy_poll,
    }


def run_loadtest(cfg: LoadtestConfig) -> dict:
    """Run the whole ladder on a fresh event loop; the result is the bundle's loadtest step."""
    return run_event_loop(_run_ladder(cfg), busy_poll=cfg.busy_poll)

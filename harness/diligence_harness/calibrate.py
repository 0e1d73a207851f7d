"""Measure the client's own floor against the loopback mock (docs/metrics.md#calibration).

The mock runs in a separate process (no shared GIL) on the same machine, so
both sides stamp CLOCK_MONOTONIC. For every request, matched by `X-Request-Id`:
  true TTFT = mock's first content write - mock's read of the request
  reported TTFT = client's t_first - client's t_send
and the difference is the client's error for that request. The same for E2E
and TPOT, and per chunk (arrival - write) for delivery lag.
"""

import json
import os
import subprocess
import sys
import urllib.request
from dataclasses import asdict

import diligence_harness
from diligence_harness import metrics
from diligence_harness.clock import now_ns
from diligence_harness.eventloop import run as run_event_loop
from diligence_harness.loadtest import LoadtestConfig, finish_record, prepare, run_cell
from diligence_harness.mockserver import MockConfig
from diligence_harness.prompts import build_prompt_set
from diligence_harness.streamclient import parse_endpoint

# Short enough for a calibration of the whole ladder to take seconds, long enough that
# every request has many chunks to compare.
DEFAULT_MOCK = MockConfig(ttft_ms=50.0, itl_ms=10.0, tokens_per_chunk=1, default_output_tokens=16)


def harness_command() -> list[str]:
    """How to start this same harness again: from the zipapp, or as `-m diligence_harness`."""
    package_dir = os.path.dirname(os.path.abspath(diligence_harness.__file__))
    archive = os.path.dirname(package_dir)
    if os.path.isfile(archive):  # running from dist/diligence-harness.pyz
        return [sys.executable, archive]
    return [sys.executable, "-m", "diligence_harness"]


def _child_env() -> dict:
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(diligence_harness.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


def process_scheduling(pid: int = 0) -> dict:
    """How the OS schedules a process (0: this one): policy, real-time priority, nice, CPUs.

    Read back from the OS rather than taken from the command line, so a bundle or a
    benchmark result says what was in force, not what was asked for.
    """
    view: dict = {"pid": pid or os.getpid()}
    if hasattr(os, "sched_getscheduler"):
        policy = os.sched_getscheduler(pid)
        names = {
            getattr(os, name): name[6:].lower()
            for name in ("SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_IDLE")
            if hasattr(os, name)
        }
        view["policy"] = names.get(policy, str(policy))
        view["rt_priority"] = os.sched_getparam(pid).sched_priority
    if hasattr(os, "getpriority"):
        view["nice"] = os.getpriority(os.PRIO_PROCESS, pid)
    if hasattr(os, "sched_getaffinity"):
        view["cpus"] = sorted(os.sched_getaffinity(pid))
    return view


class MockProcess:
    """`diligence-harness mock-server` in a child process, bounded in time.

    `cpus` pins the child to those CPUs; `scheduling` (policy, priority) sets its
    scheduling policy, e.g. `(os.SCHED_FIFO, 20)` (it otherwise inherits this
    process's); `launcher` replaces the command that starts the harness (e.g. to run
    it under a profiler).
    """

    def __init__(
        self,
        config: MockConfig,
        max_seconds: float = 1800.0,
        busy_poll: bool = False,
        cpus: set[int] | None = None,
        launcher: list[str] | None = None,
        scheduling: tuple[int, int] | None = None,
    ) -> None:
        args = (launcher or harness_command()) + [
            "mock-server",
            "--port",
            "0",
            "--ttft-ms",
            str(config.ttft_ms),
            "--itl-ms",
            str(config.itl_ms),
            "--tokens-per-chunk",
            str(config.tokens_per_chunk),
            "--output-tokens",
            str(config.default_output_tokens),
            "--max-seconds",
            str(max_seconds),
        ]
        if config.empty_first_chunk:
            args.append("--empty-first-chunk")
        if config.error_every:
            args += ["--error-every", str(config.error_every)]
            args += ["--error-kinds", ",".join(config.error_kinds)]
        if busy_poll:
            args.append("--busy-poll")
        self.config = config
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, env=_child_env(), text=True)
        try:
            if cpus:
                os.sched_setaffinity(self.process.pid, cpus)
            if scheduling:
                policy, priority = scheduling
                os.sched_setscheduler(self.process.pid, policy, os.sched_param(priority))
        except OSError:  # e.g. no such CPU, or no permission for a real-time policy
            self.process.kill()
            self.process.wait()
            raise
        assert self.process.stdout is not None  # opened with stdout=PIPE
        line = self.process.stdout.readline()
        if not line:
            self.process.kill()
            raise RuntimeError("mock server did not start")
        self.port = json.loads(line)["port"]
        self.url = f"http://127.0.0.1:{self.port}"

    def fetch_log(self) -> list[dict]:
        with urllib.request.urlopen(f"{self.url}/_mock/log", timeout=60) as response:
            return json.load(response)["requests"]

    def cpu_seconds(self) -> float | None:
        """The mock process's CPU time (Linux /proc): is the reference itself saturated?"""
        try:
            with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.url}/_mock/reset", data=b"", method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def __enter__(self) -> "MockProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def compare_to_mock_log(records: list[dict], log: list[dict]) -> dict:
    """Per-request error of the client's TTFT / TPOT / E2E against the mock's own log (ms)."""
    by_id = {entry["request_id"]: entry for entry in log}
    ttft, tpot, e2e, send_lag, first_lag, matched = [], [], [], [], [], 0
    chunk_lag: list[float] = []
    for record in records:
        entry = by_id.get(record["request_id"])
        if entry is None or record["error"] is not None or not entry["chunks"]:
            continue
        matched += 1
        writes = [chunk[0] for chunk in entry["chunks"]]
        osl = sum(chunk[1] for chunk in entry["chunks"])
        true_ttft = writes[0] - entry["t_read_ns"]
        true_e2e = writes[-1] - entry["t_read_ns"]
        ttft.append((record["t_first_ns"] - record["t_send_ns"] - true_ttft) / 1e6)
        e2e.append((record["t_last_ns"] - record["t_send_ns"] - true_e2e) / 1e6)
        if osl >= 2 and record["osl"] >= 2:
            reported = (record["t_last_ns"] - record["t_first_ns"]) / (record["osl"] - 1)
            tpot.append((reported - (writes[-1] - writes[0]) / (osl - 1)) / 1e6)
        send_lag.append((entry["t_read_ns"] - record["t_send_ns"]) / 1e6)
        first_lag.append((record["t_first_ns"] - writes[0]) / 1e6)
        arrivals = [record["t_send_ns"] + c[0] for c in record["chunks"] if c[1] or c[2]]
        chunk_lag.extend((a - w) / 1e6 for a, w in zip(arrivals, writes))
    return {
        "matched_requests": matched,
        "ttft_error_ms": metrics.distribution(ttft),
        "tpot_error_ms": metrics.distribution(tpot),
        "e2e_error_ms": metrics.distribution(e2e),
        "send_lag_ms": metrics.distribution(send_lag),
        "first_chunk_delivery_lag_ms": metrics.distribution(first_lag),
        "chunk_delivery_lag_ms": metrics.distribution(chunk_lag),
        "ttft_abs_error_mean_ms": sum(abs(v) for v in ttft) / len(ttft) if ttft else None,
    }


async def measure_level(mock: MockProcess, concurrency: int, requests_per_stream: int) -> dict:
    """One ladder step against a running mock: a discarded warm-up, then the measured cell."""
    cfg = LoadtestConfig(endpoint=mock.url, model=mock.config.model, continuous_usage=True)
    cfg.max_tokens = mock.config.default_output_tokens
    endpoint = parse_endpoint(mock.url)
    prompt_list = build_prompt_set("short", cfg.seed)
    count = max(4, concurrency * requests_per_stream)
    warmup_ids = [f"calibrate-c{concurrency}-warmup-{i}" for i in range(concurrency)]
    warmup = prepare(cfg, endpoint, "chat", prompt_list, warmup_ids)
    await run_cell(endpoint, warmup, concurrency, cfg.timeout_s)  # discarded
    ids = [f"calibrate-c{concurrency}-{i}" for i in range(count)]
    jobs = prepare(cfg, endpoint, "chat", prompt_list, ids)
    results, client = await run_cell(endpoint, jobs, concurrency, cfg.timeout_s)
    records = [finish_record(job, raw, "chat") for job, raw in results]
    summary = metrics.cell_summary(records, target_concurrency=concurrency, slo={})
    return {"records": records, "client": client, "summary": summary}


def measure_floor(
    ladder: tuple[int, ...],
    mock_config: MockConfig = DEFAULT_MOCK,
    requests_per_stream: int = 3,
    keep_records: bool = False,
    busy_poll: bool = False,
    mock_cpus: set[int] | None = None,
    mock_scheduling: tuple[int, int] | None = None,
) -> dict:
    """Run the mock at each ladder step and record how far the client is off (the floor)."""
    levels = []
    with MockProcess(mock_config, cpus=mock_cpus, scheduling=mock_scheduling) as mock:
        scheduling = {"client": process_scheduling(), "mock": process_scheduling(mock.process.pid)}
        for concurrency in ladder:
            mock.reset()
            mock_cpu_start, level_start = mock.cpu_seconds(), now_ns()
            measured = run_event_loop(
                measure_level(mock, concurrency, requests_per_stream), busy_poll=busy_poll
            )
            mock_cpu_end, level_wall_s = mock.cpu_seconds(), (now_ns() - level_start) / 1e9
            comparison = compare_to_mock_log(measured["records"], mock.fetch_log())
            summary = measured["summary"]
            level = {
                "concurrency": concurrency,
                "requests": summary["n"],
                "errors": summary["errors"],
                "effective_concurrency": summary["effective_concurrency"],
                "client": measured["client"],
                # Warm-up and measured cell together: is the reference itself saturated?
                "mock_cpu_fraction": None
                if mock_cpu_start is None or mock_cpu_end is None
                else (mock_cpu_end - mock_cpu_start) / level_wall_s,
                "reported": {k: summary[k] for k in ("ttft_ms", "tpot_ms", "e2e_ms")},
                **comparison,
            }
            if keep_records:
                level["records"] = measured["records"]
            levels.append(level)
    mock_view = asdict(mock_config) | {"api_key": None}
    return {
        "mock": mock_view,
        "mock_process": "separate process, loopback",
        "client_busy_poll": busy_poll,
        "scheduling": scheduling,
        "levels": levels,
    }

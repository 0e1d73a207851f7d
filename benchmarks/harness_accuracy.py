"""How far off are the harness's own TTFT / TPOT / E2E measurements?

Runs the harness's load-test client against its loopback mock server in a
*separate process* (no shared GIL) at 1, 8, 32, 128 and 256 concurrent
streams, and compares every request, matched by its X-Request-Id, against the
mock's own log of when it read the request off the socket and when it wrote
each token (both sides stamp CLOCK_MONOTONIC; docs/metrics.md#harness-accuracy). Also
records the client's CPU use per level.

    python benchmarks/harness_accuracy.py [--repeats 3] [--quick] [--wait-quiet-s 600]
        [--realtime 20] [--nice -20] [--client-cpus 1] [--mock-cpus 0] [--profile]

On a shared machine, other work is measured as client error; `--realtime`
(SCHED_FIFO, needs root or CAP_SYS_NICE) or `--nice` keeps it off the two
processes, and `--client-cpus` / `--mock-cpus` pin them apart. The scheduling
actually in force (read back from the OS), the load before each repeat and the
CPU other processes used during it are recorded with the results. With
`--realtime`, a third mode runs the default client at normal priority, for
comparison. `--baseline` adds an earlier results file to the tables.

Writes benchmarks/results/harness_accuracy.{md,json}. Bounded: about two
minutes on a 2-core machine (three with `--realtime`, one more with `--profile`).
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from diligence_harness.calibrate import measure_floor  # noqa: E402
from diligence_harness.mockserver import MockConfig  # noqa: E402
from harness_profile import profile_levels, profile_section  # noqa: E402
from machine_conditions import apply_scheduling, machine, measured_repeat  # noqa: E402

LEVELS = (1, 8, 32, 128, 256)
# Issue 4 targets for the mean TTFT error on a 2-core machine (ms); 128 has none.
TARGETS_MS = {1: 1.0, 8: 1.0, 32: 3.0, 256: 10.0}
# Reference points quoted in the issue, measured on such a machine against such a mock.
VLLM_CLIENT_MS = {1: 1.0, 8: 3.8, 32: 9.5, 128: 38.0, 256: 63.0}
RAW_SOCKET_CLIENT_MS = {1: 0.1, 8: 1.0, 32: 2.0, 128: 5.5, 256: 9.3}
NOTES = [
    "## Reading the numbers",
    "",
    "- The TTFT error is the sum of the send lag (the client's write to the mock's read "
    "stamp) and the first-chunk lag (the mock's write to the client's read stamp); both "
    "columns are in the tables. What counts as the truth has not changed since the earlier "
    "results: the mock's own stamps, taken right after the `recv()` that returned a "
    "request and just before the `send()` of each token.",
    "- Where the earlier error went (found by profiling both processes at 8 and 256 "
    "streams; development runs of one repeat each at SCHED_FIFO 20, 2026-12-01, 256-stream "
    "TTFT error): the earlier code 4.37 ms (send lag 4.33 ms); with the mock on its own "
    "selectors loop, a timer heap and pre-encoded frames (mockcore.py) 1.30 ms; with 64 KiB "
    "reads on both sides 1.42 ms, the client's CPU at 128 streams halved (0.35 to 0.17 of "
    "a core); with the mock stamping new requests between dispatches 0.47 ms (send lag "
    "0.32 ms). The earlier results at niceness -15 without real-time priority were 0.97, "
    "1.28, 1.60, 6.20 and 16.23 ms (commit 3e46ffa).",
    "- Every `recv()` of 256 KiB (asyncio's default read size, and the mock's earlier "
    "one) makes CPython allocate 256 KiB, which glibc serves with mmap/munmap: measured "
    "20-60 us more per read than 64 KiB on this machine, on every token of every stream.",
    "- What remains in the default mode at 256 streams is in the send-lag and first-chunk "
    "columns: the mock wakes and reads a burst of requests that all arrive within a "
    "millisecond (one `recv()` of a few us each), and the client reads a burst of first "
    "tokens that the mock wrote in one pass. At 1 and 8 streams the first-chunk lag is "
    "mostly the wake-up of an idle virtual CPU.",
    "- The E2E error is larger than the TTFT error at high concurrency (its last-chunk "
    "part is the E2E error minus the send lag). In a closed loop every stream finishes in "
    "the same pass of the mock, and the client's loop, while reading the last chunks, also "
    "writes each finished stream's next request (a loopback `send()` does the receiver's "
    "TCP work too), so later last chunks wait. First chunks arrive 50 ms after the "
    "requests, when the client has nothing else to do. There is no target for E2E.",
    "- TPOT error stays near zero at every level: the same delivery lag is on both ends "
    "of the decode interval and cancels.",
    "- Other work on the machine shows up as error; the load before each repeat and the CPU "
    "other processes used during it are recorded above. Real-time priority (SCHED_FIFO) "
    'keeps it off the client and the mock; the mode "default at normal priority" is the '
    "same code without it. There, with other work using most of both cores, the mock and "
    "the client get only a small share of a core each (mock and client CPU columns), "
    "requests wait to be read and tokens wait to be received; the verdict says which "
    "targets that breaks, and the send-lag and first-chunk columns show how it splits. "
    "Niceness does not help on this machine: other sessions' processes are in other "
    "cgroups, where niceness does not reach. On a rented GPU machine, run `calibrate` "
    "the same way (e.g. under `chrt -f 20`), or on an otherwise idle machine.",
    "- Busy polling: under SCHED_FIFO a task that never sleeps is stopped by the kernel's "
    "real-time throttling for 50 ms in every second (sched_rt_runtime_us 950000 of "
    "1000000), and a repeat in which such a stop falls on first tokens shows a mean of "
    "several ms (see the per-repeat column; the worst p99 is about the 50 ms stop). As a "
    "normal task at nice -20 (`--busy-poll-nice -20`, a development run) the busy-polling "
    "client got only about 0.2 of its core on this shared machine and was off by 5-14 ms. "
    "Use `--busy-poll` only on a machine with a core to spare and without a real-time "
    "policy; the default mode meets every target without it.",
]
MOCK = MockConfig(ttft_ms=50.0, itl_ms=20.0, tokens_per_chunk=1, default_output_tokens=32)


def pooled(levels: list[dict], key: str) -> float | None:
    """Mean over every request of every repetition (each level's mean weighted by its n)."""
    total = sum(level[key]["mean"] * level[key]["n"] for level in levels if level[key]["n"])
    count = sum(level[key]["n"] for level in levels)
    return total / count if count else None


def summarise(runs: list[dict]) -> list[dict]:
    rows = []
    for index, concurrency in enumerate(LEVELS):
        levels = [run["levels"][index] for run in runs]
        rows.append(
            {
                "concurrency": concurrency,
                "requests": sum(level["requests"] for level in levels),
                "errors": sum(level["errors"] for level in levels),
                "ttft_error_mean_ms": pooled(levels, "ttft_error_ms"),
                "ttft_error_mean_ms_per_repeat": [lv["ttft_error_ms"]["mean"] for lv in levels],
                "ttft_error_p99_ms_worst": max(lv["ttft_error_ms"]["p99"] for lv in levels),
                "tpot_error_mean_ms": pooled(levels, "tpot_error_ms"),
                "e2e_error_mean_ms": pooled(levels, "e2e_error_ms"),
                "send_lag_mean_ms": pooled(levels, "send_lag_ms"),
                "first_chunk_lag_mean_ms": pooled(levels, "first_chunk_delivery_lag_ms"),
                "client_cpu_fraction": statistics.fmean(
                    lv["client"]["cpu_fraction"] for lv in levels
                ),
                "client_loop_lag_p99_ms": max(lv["client"]["loop_lag_ms"]["p99"] for lv in levels),
                "mock_cpu_fraction": statistics.fmean(lv["mock_cpu_fraction"] for lv in levels),
                "effective_concurrency": statistics.fmean(
                    lv["effective_concurrency"] for lv in levels
                ),
            }
        )
    return rows


def verdict(row: dict) -> str:
    target = TARGETS_MS.get(row["concurrency"])
    if target is None:
        return "no target"
    return "met" if row["ttft_error_mean_ms"] <= target else "NOT met"


def markdown(result: dict) -> str:
    m = result["machine"]
    lines = [
        "# Harness accuracy against its loopback mock",
        "",
        "Produced by `python benchmarks/harness_accuracy.py`; raw numbers in "
        "`harness_accuracy.json` beside this file.",
        "",
        f"- Machine: {m['cores']} cores, {m['cpu_model']}, {m['implementation']} "
        f"{m['python']}, {m['os']}",
        f"- Virtual machine: {'yes' if m.get('virtual_machine') else 'no'}. Shared with other "
        f"work; load average {m['load_average_1min_at_start']} (1 min) when the results "
        "were written.",
        f"- Scheduling: {_scheduling_line(result)}",
        f"- Mock (separate process, loopback): TTFT {MOCK.ttft_ms:g} ms, inter-token gap "
        f"{MOCK.itl_ms:g} ms, {MOCK.default_output_tokens} tokens per request, one token per "
        "SSE event; it logs when it read each request off the socket and when it wrote each "
        "token (CLOCK_MONOTONIC ns, matched by X-Request-Id).",
        f"- Closed loop, {result['requests_per_stream']} requests per stream per level after "
        f"one warm-up request per stream, {result['repeats']} repetitions, each with a fresh "
        "mock process.",
        "- Error = reported minus true, per request: TTFT (client t_first - t_send) minus "
        "(mock first write - mock read); likewise E2E and TPOT. Positive means the client "
        "reports the server slower than it was. Send lag = mock read - client t_send; first "
        "chunk lag = client arrival - mock write (the two parts of the TTFT error).",
        "- Client CPU = process CPU time / wall time during the measured cell (1.0 = one core); "
        "mock CPU likewise for the mock process over warm-up plus cell.",
        "",
    ]
    for mode in result["modes"]:
        lines += _mode_table(mode)
    if result.get("baseline"):
        lines += _baseline_section(result)
    if result.get("profile"):
        lines += profile_section(result["profile"])
    lines += [
        "## Reference points (from the issue, same kind of machine and mock)",
        "",
        "| streams | vLLM bench client | minimal raw-socket client |",
        "|---:|---:|---:|",
    ]
    for level in LEVELS:
        lines.append(f"| {level} | {VLLM_CLIENT_MS[level]} ms | {RAW_SOCKET_CLIENT_MS[level]} ms |")
    lines += ["", "## Verdict", "", *result["verdict_lines"], "", *NOTES, ""]
    return "\n".join(lines)


def baseline_view(path: str, label: str) -> dict:
    """The per-level rows of an earlier results file, to compare with this run."""
    with open(path, encoding="utf-8") as handle:
        earlier = json.load(handle)
    keys = ("concurrency", "ttft_error_mean_ms", "send_lag_mean_ms", "first_chunk_lag_mean_ms")
    return {
        "label": label,
        "machine": earlier["machine"],
        "modes": [
            {
                "name": mode["name"],
                "load_average_1min_before_each_repeat": mode[
                    "load_average_1min_before_each_repeat"
                ],
                "rows": [{k: row[k] for k in keys} for row in mode["rows"]],
            }
            for mode in earlier["modes"]
        ],
    }


def _baseline_section(result: dict) -> list[str]:
    baseline = result["baseline"]
    lines = [
        "## Compared with an earlier run",
        "",
        f"Earlier run: {baseline['label']}.",
        "",
        "| mode | streams | earlier TTFT err mean (send + first chunk) | this run "
        "(send + first chunk) |",
        "|---|---:|---:|---:|",
    ]
    ours = {mode["name"]: mode for mode in result["modes"]}
    for mode in baseline["modes"]:
        current = ours.get(mode["name"])
        if current is None:
            continue
        loads = ", ".join(f"{v:.2f}" for v in mode["load_average_1min_before_each_repeat"])
        for old, new in zip(mode["rows"], current["rows"]):
            lines.append(
                f"| {mode['name']} | {old['concurrency']} | {_split(old)} | {_split(new)} |"
            )
        lines.append(f"| {mode['name']} | load before each earlier repeat: {loads} | | |")
    return [*lines, ""]


def _split(row: dict) -> str:
    return (
        f"{row['ttft_error_mean_ms']:.2f} ms ({row['send_lag_mean_ms']:.2f} + "
        f"{row['first_chunk_lag_mean_ms']:.2f})"
    )


def _mode_table(mode: dict) -> list[str]:
    lines = [
        f"## Client mode: {mode['name']}",
        "",
        mode["description"],
        "",
        *_conditions_lines(mode),
        "",
        "| streams | requests | TTFT err mean | per repeat | TTFT err p99 (worst) | TPOT err "
        "mean | E2E err mean | send lag | first-chunk lag | client CPU | mock CPU | loop lag p99 "
        "| eff. concurrency | target | verdict |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in mode["rows"]:
        target = TARGETS_MS.get(row["concurrency"])
        repeats = ", ".join(f"{v:.2f}" for v in row["ttft_error_mean_ms_per_repeat"])
        lines.append(
            f"| {row['concurrency']} | {row['requests']} | {row['ttft_error_mean_ms']:.2f} ms "
            f"| {repeats} | {row['ttft_error_p99_ms_worst']:.2f} ms "
            f"| {row['tpot_error_mean_ms']:.3f} ms | {row['e2e_error_mean_ms']:.2f} ms "
            f"| {row['send_lag_mean_ms']:.2f} ms | {row['first_chunk_lag_mean_ms']:.2f} ms "
            f"| {row['client_cpu_fraction']:.2f} | {row['mock_cpu_fraction']:.2f} "
            f"| {row['client_loop_lag_p99_ms']:.2f} ms "
            f"| {row['effective_concurrency']:.1f} | {f'{target:g} ms' if target else '—'} "
            f"| {verdict(row)} |"
        )
    return [*lines, ""]


def _scheduling_line(result: dict) -> str:
    scheduling = result.get("scheduling")
    if not scheduling:
        return "not recorded."
    requested = scheduling["requested"]
    asked = []
    if requested["realtime_fifo_priority"]:
        asked.append(f"SCHED_FIFO priority {requested['realtime_fifo_priority']}")
    if requested["nice_increment"]:
        asked.append(f"nice {requested['nice_increment']:+d}")
    if requested["client_cpus"]:
        asked.append(f"client pinned to CPU {','.join(map(str, requested['client_cpus']))}")
    if requested["mock_cpus"]:
        asked.append(f"mock pinned to CPU {','.join(map(str, requested['mock_cpus']))}")
    if requested.get("busy_poll_client_nice") is not None:
        asked.append(
            f"busy-poll mode: client SCHED_OTHER at nice {requested['busy_poll_client_nice']}"
        )
    first = result["modes"][0]["conditions_per_repeat"][0]["scheduling"]
    return (
        (", ".join(asked) or "default priority, no pinning")
        + f". In force (read back from the OS) in the first repeat: client "
        f"{_sched(first['client'])}; mock {_sched(first['mock'])}; per mode below."
    )


def _sched(view: dict) -> str:
    policy = view.get("policy", "?")
    prio = f" {view['rt_priority']}" if view.get("rt_priority") else ""
    cpus = ",".join(map(str, view.get("cpus", [])))
    return f"{policy}{prio}, nice {view.get('nice')}, CPUs {cpus}"


def _conditions_lines(mode: dict) -> list[str]:
    conditions = mode.get("conditions_per_repeat")
    if not conditions:  # results written before conditions were recorded
        loads = ", ".join(f"{v:.2f}" for v in mode["load_average_1min_before_each_repeat"])
        return [f"Load average (1 min) before each repeat: {loads}."]
    first = conditions[0]["scheduling"]
    lines = [
        f"Scheduling in force (read back from the OS): client {_sched(first['client'])}; "
        f"mock {_sched(first['mock'])}.",
        "",
        "Machine before and during each repeat (anything else running shows up as error):",
        "",
        "| repeat | load average 1/5/15 min before | runnable tasks before | other work's CPU "
        "during (cores) | repeat wall |",
        "|---:|---|---:|---:|---:|",
    ]
    for index, c in enumerate(conditions, 1):
        loads = " / ".join(f"{v:.2f}" for v in c["load_average"])
        other = "—" if c["other_cpu_cores_during"] is None else f"{c['other_cpu_cores_during']:.2f}"
        lines.append(f"| {index} | {loads} | {c['procs_running']} | {other} | {c['wall_s']} s |")
    return lines


def wait_for_quiet(max_wait_s: float, threshold: float = 0.7) -> float:
    """Other work on the machine shows up as client error: wait (bounded) for it to pass."""
    deadline = time.monotonic() + max_wait_s
    while os.getloadavg()[0] > threshold and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def run_mode(busy_poll: bool, repeats: int, args, normal_priority: bool = False) -> dict:
    """All levels, `repeats` times, each with a fresh mock process.

    `normal_priority`: the client and the mock as normal tasks (SCHED_OTHER), as the
    harness runs when nobody gives it a real-time priority.
    """
    runs, conditions = [], []
    mock_scheduling = None
    switched = normal_priority or (busy_poll and args.busy_poll_nice is not None)
    if switched:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    if busy_poll and args.busy_poll_nice is not None:
        # A SCHED_FIFO task that never sleeps is stopped by the kernel's real-time
        # throttling (sched_rt_runtime_us, by default 50 ms in every second), so the
        # busy-polling client runs as a normal task at this niceness; the mock keeps
        # the real-time policy, set explicitly since it no longer inherits it.
        os.setpriority(os.PRIO_PROCESS, 0, args.busy_poll_nice)
        if args.realtime:
            mock_scheduling = (os.SCHED_FIFO, args.realtime)
    for _ in range(repeats):
        wait_for_quiet(args.wait_quiet_s)
        run, condition = measured_repeat(
            lambda: measure_floor(
                LEVELS,
                MOCK,
                requests_per_stream=args.requests_per_stream,
                busy_poll=busy_poll,
                mock_cpus=args.mock_cpus,
                mock_scheduling=mock_scheduling,
            )
        )
        runs.append(run)
        conditions.append(condition | {"scheduling": run["scheduling"]})
    if switched:
        os.setpriority(os.PRIO_PROCESS, 0, args.base_nice)
        if args.realtime:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.realtime))
    if normal_priority:
        name = "default at normal priority"
        description = (
            "The default mode with the client and the mock as normal tasks (SCHED_OTHER), "
            "as the harness runs when nobody gives it a real-time priority: other work on "
            "the machine competes with both."
        )
    elif busy_poll:
        name = "busy-poll (--busy-poll)"
        description = (
            "The client's event loop never sleeps in epoll (its core fully used by the "
            "client); the mock runs as in the default mode."
        )
    else:
        name = "default"
        description = (
            "The harness's default: asyncio on raw sockets, reads into a preallocated "
            "64 KiB buffer, request bytes serialised before the cell, t_send stamped "
            "immediately before the write, SSE parsing after the cell, cyclic GC paused "
            "inside the measured window."
        )
    return {
        "name": name,
        "busy_poll": busy_poll,
        "normal_priority": normal_priority,
        "description": description,
        "load_average_1min_before_each_repeat": [c["load_average"][0] for c in conditions],
        "conditions_per_repeat": conditions,
        "rows": summarise(runs),
    }


def _cpus(text: str) -> set[int]:
    return {int(v) for v in text.split(",") if v.strip()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--requests-per-stream", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one repeat, default mode only")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    parser.add_argument(
        "--wait-quiet-s", type=float, default=0, help="wait up to this long for load < 0.7"
    )
    parser.add_argument("--realtime", type=int, default=0, help="SCHED_FIFO at this priority")
    parser.add_argument("--nice", type=int, default=0, help="niceness increment, e.g. -20")
    parser.add_argument("--client-cpus", type=_cpus, help="pin the client, e.g. 1")
    parser.add_argument("--mock-cpus", type=_cpus, help="pin the mock, e.g. 0")
    parser.add_argument(
        "--busy-poll-nice",
        type=int,
        help="busy-poll mode: the client as a normal task at this niceness (e.g. -20), "
        "the mock still at --realtime; runs after the default mode",
    )
    parser.add_argument("--profile", action="store_true", help="also profile 8 and 256 streams")
    parser.add_argument("--baseline", help="an earlier harness_accuracy.json to compare with")
    parser.add_argument("--baseline-label", default="", help="what the earlier run was")
    parser.add_argument("--render-only", action="store_true", help="rewrite the .md from the .json")
    args = parser.parse_args()
    json_path = os.path.join(args.output_dir, "harness_accuracy.json")
    if args.render_only:
        with open(json_path, encoding="utf-8") as handle:
            result = json.load(handle)
        with open(json_path[:-5] + ".md", "w", encoding="utf-8") as out:
            out.write(markdown(result))
        return
    started = time.monotonic()
    requested = {
        "realtime_fifo_priority": args.realtime or None,
        "nice_increment": args.nice,
        "client_cpus": sorted(args.client_cpus) if args.client_cpus else None,
        "mock_cpus": sorted(args.mock_cpus) if args.mock_cpus else None,
        "busy_poll_client_nice": args.busy_poll_nice,
    }
    client_scheduling = apply_scheduling(args.realtime, args.nice, args.client_cpus)
    args.base_nice = client_scheduling.get("nice", 0)
    repeats = 1 if args.quick else args.repeats
    os.makedirs(args.output_dir, exist_ok=True)
    modes = [run_mode(False, repeats, args)]
    if not args.quick:
        modes.append(run_mode(True, repeats, args))
        if args.realtime:
            modes.append(run_mode(False, repeats, args, normal_priority=True))
    verdict_lines = []
    for mode in modes:
        met = [verdict(r) for r in mode["rows"] if r["concurrency"] in TARGETS_MS]
        summary = "all targets met" if all(v == "met" for v in met) else "some targets NOT met"
        details = "; ".join(
            f"{r['concurrency']} streams {r['ttft_error_mean_ms']:.2f} ms ({verdict(r)})"
            for r in mode["rows"]
        )
        verdict_lines.append(f"- {mode['name']}: {summary} — {details}.")
    result = {
        "machine": machine(),
        "scheduling": {"requested": requested, "client": client_scheduling},
        "mock": {
            "ttft_ms": MOCK.ttft_ms,
            "itl_ms": MOCK.itl_ms,
            "tokens": MOCK.default_output_tokens,
        },
        "levels": list(LEVELS),
        "repeats": 1 if args.quick else args.repeats,
        "requests_per_stream": args.requests_per_stream,
        "targets_ms": TARGETS_MS,
        "modes": modes,
        "verdict_lines": verdict_lines,
        "baseline": baseline_view(args.baseline, args.baseline_label) if args.baseline else None,
        "profile": profile_levels(
            (8, 256), MOCK, args.requests_per_stream, args.mock_cpus, args.output_dir
        )
        if args.profile
        else None,
        "duration_s": round(time.monotonic() - started, 1),
    }
    with open(json_path, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=2)
    with open(os.path.join(args.output_dir, "harness_accuracy.md"), "w", encoding="utf-8") as out:
        out.write(markdown(result))
    print("\n".join(verdict_lines))
    print(f"took {result['duration_s']} s")


if __name__ == "__main__":
    main()

"""Where the client's and the mock's CPU time goes (cProfile), for harness_accuracy.py."""

import cProfile
import os
import pstats
import sys

from diligence_harness.calibrate import MockProcess, compare_to_mock_log, measure_level
from diligence_harness.eventloop import run as run_event_loop


def profile_levels(
    levels: tuple[int, ...], mock_config, requests_per_stream: int, mock_cpus, scratch_dir: str
) -> list[dict]:
    """Where the CPU time goes, client and mock, at these levels (one extra run under cProfile).

    cProfile slows both sides, so these runs' errors are not the results; the
    profiles say which functions the time is spent in.
    """
    out = []
    for concurrency in levels:
        mock_prof = os.path.join(scratch_dir, f".mock-{concurrency}.prof")
        launcher = [sys.executable, "-m", "cProfile", "-o", mock_prof, "-m", "diligence_harness"]
        with MockProcess(mock_config, max_seconds=300, cpus=mock_cpus, launcher=launcher) as mock:
            mock.reset()
            profiler = cProfile.Profile()
            profiler.enable()
            measured = run_event_loop(measure_level(mock, concurrency, requests_per_stream))
            profiler.disable()
            log = mock.fetch_log()
        comparison = compare_to_mock_log(measured["records"], log)
        client_stats = pstats.Stats(profiler)
        mock_stats = pstats.Stats(mock_prof)
        os.remove(mock_prof)
        out.append(
            {
                "concurrency": concurrency,
                "ttft_error_mean_ms_under_profiler": comparison["ttft_error_ms"]["mean"],
                "client": _top_functions(client_stats),
                "mock": _top_functions(mock_stats),
            }
        )
    return out


def _top_functions(stats: pstats.Stats, count: int = 8) -> dict:
    rows = []
    entries = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)
    for (filename, line, function), (_cc, ncalls, tottime, _ct, _callers) in entries[:count]:
        where = function if filename == "~" else f"{os.path.basename(filename)}:{line} {function}"
        rows.append({"function": where, "calls": ncalls, "self_s": round(tottime, 3)})
    return {"total_s": round(stats.total_tt, 3), "top_self_time": rows}


def profile_section(profile: list[dict]) -> list[str]:
    lines = [
        "## Where the CPU time goes (cProfile)",
        "",
        "One extra run per level with both processes under cProfile (which slows them, so "
        "its errors are not results). Self time of the busiest functions over the measured "
        "cell (client) and over the mock's whole life, start-up included (mock). "
        "`select.epoll.poll` is mostly time spent asleep waiting for the next event.",
        "",
    ]
    for level in profile:
        lines.append(
            f"### {level['concurrency']} streams (TTFT error under the profiler: "
            f"{level['ttft_error_mean_ms_under_profiler']:.2f} ms)"
        )
        lines.append("")
        for side in ("client", "mock"):
            top = level[side]
            lines += [
                f"{side} (profiled total {top['total_s']} s):",
                "",
                "| function | calls | self time |",
                "|---|---:|---:|",
            ]
            lines += [
                f"| `{r['function']}` | {r['calls']} | {r['self_s']:.3f} s |"
                for r in top["top_self_time"]
            ]
            lines.append("")
    return lines

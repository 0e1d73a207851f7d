"""The one clock every recorded timestamp comes from.

docs/metrics.md#principles: monotonic nanoseconds. On Linux
`time.perf_counter_ns` reads CLOCK_MONOTONIC, the same clock in every process
on the machine, so the mock server (another process) and the client can be
compared event by event (docs/metrics.md#harness-accuracy).
"""

import datetime
import time

now_ns = time.perf_counter_ns


def utc_now() -> str:
    """RFC 3339 UTC wall-clock time, for humans and for ordering bundles."""
    moment = datetime.datetime.now(datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def clock_description() -> dict:
    info = time.get_clock_info("perf_counter")
    return {
        "function": "time.perf_counter_ns",
        "implementation": info.implementation,
        "monotonic": info.monotonic,
        "resolution_s": info.resolution,
        # A pair read back to back, so a reader can map monotonic ns to wall time.
        "anchor": {"monotonic_ns": now_ns(), "unix_ns": time.time_ns()},
    }

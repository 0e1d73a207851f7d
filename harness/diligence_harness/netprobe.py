"""TCP-connect RTT, jitter and loss to given hosts (docs/metrics.md#network-probe).

A TCP handshake needs no privileges (ICMP ping does) and is what AIPerf times for
its network-latency correction (AIPerf "Network RTT").
Jitter is the mean absolute difference of consecutive RTTs (RFC 3550 style).
Probes are bounded: `count` connects, `interval_s` apart, each with a timeout.
"""

import socket
import statistics
import time

from diligence_harness import metrics
from diligence_harness.clock import now_ns


def parse_target(target: str, default_port: int = 443) -> tuple[str, int]:
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return target, default_port
    return host.strip("[]"), int(port)


def probe(
    host: str, port: int, count: int = 20, interval_s: float = 0.1, timeout_s: float = 2.0
) -> dict:
    rtts: list[float] = []
    errors: dict[str, int] = {}  # how often each error was seen
    for i in range(count):
        start = now_ns()
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                rtts.append((now_ns() - start) / 1e6)
        except OSError as exc:
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
        if i + 1 < count:
            time.sleep(interval_s)
    return {
        "host": host,
        "port": port,
        "method": "tcp_connect",
        "count": count,
        "interval_s": interval_s,
        "timeout_s": timeout_s,
        **rtt_summary(rtts, count),
        "errors": errors,
    }


def rtt_summary(rtts: list[float], count: int) -> dict:
    """The raw round trips, their distribution, jitter (mean absolute difference of
    consecutive round trips) and loss (the share of the `count` attempts without one)."""
    jitter = [abs(b - a) for a, b in zip(rtts, rtts[1:])]
    return {
        "rtt_ms_raw": rtts,
        "rtt_ms": metrics.distribution(rtts),
        "jitter_ms": statistics.fmean(jitter) if jitter else None,
        "loss": (count - len(rtts)) / count if count else None,
    }


def run_netprobe(targets: list[str], count: int) -> list[dict]:
    return [probe(*parse_target(target), count=count) for target in targets]

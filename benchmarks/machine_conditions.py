"""The machine and its load around a measurement, for harness_accuracy.py.

On a shared machine other work is measured as the client's error, so each
repeat records the load before it and the CPU other processes used during it,
and the scheduling actually in force is read back from the OS.
"""

import os
import platform
import re
import time

from diligence_harness.calibrate import process_scheduling

try:
    import resource
except ImportError:  # not on Linux/macOS: other processes' CPU is then not recorded
    resource = None  # type: ignore[assignment]


def machine() -> dict:
    cpuinfo = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpuinfo = handle.read()
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    hypervisor = re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.MULTILINE)
    return {
        "cpu_model": model.group(1).strip() if model else platform.processor(),
        "cores": os.cpu_count(),
        "virtual_machine": bool(hypervisor),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.release()}",
        "load_average_1min_at_start": round(os.getloadavg()[0], 2),
    }


def apply_scheduling(realtime: int, nice: int, client_cpus: set[int] | None) -> dict:
    """Scheduling for this process; the mock child inherits the policy and niceness."""
    if nice:
        os.nice(nice)
    if realtime:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(realtime))
    if client_cpus:
        os.sched_setaffinity(0, client_cpus)
    return process_scheduling()


def _busy_jiffies() -> int | None:
    """Machine-wide busy CPU time (all processes) from /proc/stat, in clock ticks."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
    except OSError:
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal


def _own_cpu_s() -> float | None:
    """CPU seconds of this process plus its finished children (the mock processes)."""
    if resource is None:
        return None
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _procs_running() -> int | None:
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("procs_running"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def measured_repeat(run) -> tuple[dict, dict]:
    """Run one repeat; returns its result and the machine's conditions around it."""
    before = {
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "procs_running": _procs_running(),  # includes this process
    }
    busy_start, own_start, t_start = _busy_jiffies(), _own_cpu_s(), time.monotonic()
    result = run()
    busy_end, own_end, wall_s = _busy_jiffies(), _own_cpu_s(), time.monotonic() - t_start
    other = None
    if None not in (busy_start, busy_end, own_start, own_end):
        busy_s = (busy_end - busy_start) / os.sysconf("SC_CLK_TCK")
        # Includes kernel work not charged to any process (loopback softirqs).
        other = round(max(0.0, busy_s - (own_end - own_start)) / wall_s, 2)
    return result, before | {"other_cpu_cores_during": other, "wall_s": round(wall_s, 1)}

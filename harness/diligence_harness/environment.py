"""Environment: software versions, container, clock sync, limits, CPU, RAM, virtualisation.

docs/metrics.md#environment: everything that can change a result or explain a
difference between two runs.
"""

import ctypes
import ctypes.util
import os
import platform
import re

from diligence_harness.sources import read_text, run_tool
from diligence_harness.torchprobe import load_torch, runtime_versions

try:
    import resource
except ImportError:
    resource = None  # type: ignore[assignment]


def _limit(kind: str) -> dict | None:
    if resource is None or not hasattr(resource, kind):
        return None
    soft, hard = resource.getrlimit(getattr(resource, kind))

    def show(value: int) -> int | str:
        return "unlimited" if value == resource.RLIM_INFINITY else value

    return {"soft": show(soft), "hard": show(hard)}


def ulimits() -> dict:
    # Locked memory matters for pinned host buffers and RDMA (NCCL); open files for
    # many concurrent streams (one socket each).
    return {"open_files": _limit("RLIMIT_NOFILE"), "locked_memory_bytes": _limit("RLIMIT_MEMLOCK")}


def shm_size() -> dict | None:
    try:
        stats = os.statvfs("/dev/shm")  # noqa: S108 - reading its size, not writing there
    except OSError:
        return None
    return {
        "total_bytes": stats.f_blocks * stats.f_frsize,
        "free_bytes": stats.f_bavail * stats.f_frsize,
    }


def cpu_info() -> dict:
    text = read_text("/proc/cpuinfo") or ""
    model = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    flags = re.search(r"^flags\s*:\s*(.+)$", text, re.MULTILINE)
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "model": model.group(1).strip() if model else platform.processor() or None,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": affinity,
        "hypervisor_flag": bool(flags and " hypervisor" in f" {flags.group(1)}"),
        "cgroup_cpu_max": (read_text("/sys/fs/cgroup/cpu.max") or "").strip() or None,
    }


def memory_info() -> dict:
    text = read_text("/proc/meminfo") or ""
    total = re.search(r"^MemTotal:\s+(\d+) kB", text, re.MULTILINE)
    available = re.search(r"^MemAvailable:\s+(\d+) kB", text, re.MULTILINE)
    return {
        "total_bytes": int(total.group(1)) * 1024 if total else None,
        "available_bytes": int(available.group(1)) * 1024 if available else None,
        "cgroup_memory_max": (read_text("/sys/fs/cgroup/memory.max") or "").strip() or None,
    }


def virtualisation() -> dict:
    detect = run_tool(["systemd-detect-virt"], timeout_s=5)
    dmi = {
        name: (read_text(f"/sys/class/dmi/id/{name}") or "").strip() or None
        for name in ("sys_vendor", "product_name", "board_vendor")
    }
    return {
        "systemd_detect_virt": detect["stdout"].strip() or None,
        "dmi": dmi,
        "hypervisor_flag": cpu_info()["hypervisor_flag"],
    }


def container() -> dict:
    cgroup = read_text("/proc/1/cgroup") or ""
    markers = {
        "dockerenv": os.path.exists("/.dockerenv"),
        "containerenv": os.path.exists("/run/.containerenv"),
        "kubernetes": "KUBERNETES_SERVICE_HOST" in os.environ,
        "cgroup_mentions_container": bool(re.search(r"docker|kubepods|containerd|lxc", cgroup)),
    }
    # Inside a container the image digest is not visible from the file system; the
    # common runtimes and CI systems pass it in an environment variable, if at all.
    digest_vars = ("IMAGE_DIGEST", "CONTAINER_IMAGE_DIGEST", "DOCKER_IMAGE_DIGEST")
    digest = next((os.environ[v] for v in digest_vars if os.environ.get(v)), None)
    image = os.environ.get("CONTAINER_IMAGE") or os.environ.get("IMAGE")
    in_container = any(markers.values())
    reason = None
    if in_container and digest is None:
        reason = "image digest not visible inside the container; pass IMAGE_DIGEST to record it"
    return {
        "in_container": in_container,
        "markers": markers,
        "image": image,
        "image_digest": digest,
        "image_digest_reason": reason,
    }


class _Timex(ctypes.Structure):
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long)]
    _fields_ += [("maxerror", ctypes.c_long), ("esterror", ctypes.c_long)]
    _fields_ += [("status", ctypes.c_int), ("padding", ctypes.c_char * 256)]


def clock_sync() -> dict:
    """Kernel NTP state via adjtimex(2) (works in containers), plus timedatectl when present."""
    result: dict = {"adjtimex": None, "timedatectl": None}
    libc_name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(libc_name or "libc.so.6", use_errno=True)
        timex = _Timex()
        state = libc.adjtimex(ctypes.byref(timex))
        sta_unsync = 0x0040
        result["adjtimex"] = {
            "state": state,  # 5 = TIME_ERROR (clock not synchronised)
            "synchronised": state != 5 and not timex.status & sta_unsync,
            "maxerror_us": timex.maxerror,
            "esterror_us": timex.esterror,
        }
    except (OSError, AttributeError) as exc:
        result["adjtimex"] = {"error": str(exc)}
    shown = run_tool(["timedatectl", "show"], timeout_s=5)
    if shown["ok"]:
        fields = dict(line.split("=", 1) for line in shown["stdout"].splitlines() if "=" in line)
        result["timedatectl"] = {
            k: fields.get(k) for k in ("NTP", "NTPSynchronized", "Timezone") if k in fields
        }
    return result


def software() -> dict:
    torch, reason = load_torch()
    versions: dict[str, str | None] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
    }
    if torch is None:
        versions["torch"] = None
        versions["torch_reason"] = reason
    else:
        versions.update(runtime_versions(torch))
    smi = run_tool(["nvidia-smi", "--version"], timeout_s=20)
    versions["nvidia_smi_version"] = smi["stdout"].strip() or smi["reason"]
    return versions


def collect_environment() -> dict:
    return {
        "software": software(),
        "os": {
            "kernel": platform.release(),
            "platform": platform.platform(),
            "os_release": _os_release(),
        },
        "container": container(),
        "clock_sync": clock_sync(),
        "ulimits": ulimits(),
        "dev_shm": shm_size(),
        "cpu": cpu_info(),
        "memory": memory_info(),
        "virtualisation": virtualisation(),
    }


def _os_release() -> dict:
    fields = {}
    for line in (read_text("/etc/os-release") or "").splitlines():
        key, _, value = line.partition("=")
        if key in ("ID", "VERSION_ID", "PRETTY_NAME"):
            fields[key] = value.strip('"')
    return fields

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


# Where a container runtime or CI system passes the image's digest, if at all; the
# container's file system does not show it.
DIGEST_VARS = ("IMAGE_DIGEST", "CONTAINER_IMAGE_DIGEST", "DOCKER_IMAGE_DIGEST", "OCI_IMAGE_DIGEST")
IMAGE_VARS = ("CONTAINER_IMAGE", "IMAGE", "DOCKER_IMAGE")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_CONTAINER_ID = re.compile(r"(?:docker|containerd|crio|libpod)[-/:]([0-9a-f]{64})")


def image_digest_of(text: str | None) -> str | None:
    """The `sha256:…` digest in a digest or an image reference (`repo@sha256:…`)."""
    match = _DIGEST.search((text or "").strip().lower())
    return match.group(0) if match else None


def container(image_digest: str | None = None) -> dict:
    cgroup = read_text("/proc/1/cgroup") or ""
    own_cgroup = read_text("/proc/self/cgroup") or ""
    markers = {
        "dockerenv": os.path.exists("/.dockerenv"),
        "containerenv": os.path.exists("/run/.containerenv"),
        "kubernetes": "KUBERNETES_SERVICE_HOST" in os.environ,
        "cgroup_mentions_container": bool(
            re.search(r"docker|kubepods|containerd|lxc|libpod|crio", cgroup + own_cgroup)
        ),
    }
    mounts = read_text("/proc/self/mountinfo") or ""
    container_id = _CONTAINER_ID.search(own_cgroup + "\n" + mounts)
    digest, source = None, None
    if image_digest:
        digest, source = image_digest_of(image_digest), "--image-digest"
    else:
        for name in DIGEST_VARS:
            if os.environ.get(name):
                digest, source = image_digest_of(os.environ[name]), f"env:{name}"
                break
    image = next((os.environ[v] for v in IMAGE_VARS if os.environ.get(v)), None)
    if digest is None and image_digest_of(image):
        digest, source = image_digest_of(image), "image reference"
    in_container = any(markers.values())
    reason = None
    if source and digest is None:
        reason = f"{source} is not a sha256 digest"
    elif in_container and digest is None:
        reason = (
            "image digest not visible inside the container; pass --image-digest (or "
            "IMAGE_DIGEST) to record it"
        )
    return {
        "in_container": in_container,
        "markers": markers,
        "container_id": container_id.group(1) if container_id else None,
        "image": image,
        "image_digest": digest,
        "image_digest_source": source,
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


# Serving runtimes read by their installed distribution's metadata: importing them
# would take seconds and initialise CUDA.
RUNTIME_DISTRIBUTIONS = {"vllm": ("vllm",), "sglang": ("sglang",)}


def distribution_version(*names: str) -> str | None:
    """The installed version of the first of these distributions, without importing it."""
    from importlib import metadata

    for name in names:
        try:
            found = metadata.version(name)
        except Exception:  # not installed, or a broken install's metadata: as good as none
            found = None
        if found:
            return found
    return None


def nccl_version_code(code: int) -> str:
    """ncclGetVersion's integer as a version: major·10000 + minor·100 + patch since NCCL
    2.9, major·1000 + minor·100 + patch before."""
    if code >= 10000:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def libnccl_version() -> str | None:
    """ncclGetVersion from libnccl, where the library loads (no torch needed)."""
    names = ["libnccl.so.2", "libnccl.so"]
    found = ctypes.util.find_library("nccl")
    if found:
        names.insert(0, found)
    for name in names:
        try:
            library = ctypes.CDLL(name)
            code = ctypes.c_int()
            if library.ncclGetVersion(ctypes.byref(code)) == 0 and code.value > 0:
                return nccl_version_code(code.value)
        except (OSError, AttributeError):
            continue
    return None


def software() -> dict:
    torch, reason = load_torch()
    versions: dict[str, str | None] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
    }
    if torch is None:
        # Installed but not importable (a broken CUDA, say): its version is still known.
        versions["torch"] = distribution_version("torch")
        versions["torch_reason"] = reason
    else:
        versions.update(runtime_versions(torch))
    versions["nccl_source"] = "torch" if versions.get("nccl") else None
    if not versions.get("nccl"):
        versions["nccl"] = libnccl_version()
        versions["nccl_source"] = "libnccl" if versions["nccl"] else None
    for name, distributions in RUNTIME_DISTRIBUTIONS.items():
        versions[name] = distribution_version(*distributions)
    smi = run_tool(["nvidia-smi", "--version"], timeout_s=20)
    versions["nvidia_smi_version"] = smi["stdout"].strip() or smi["reason"]
    return versions


def collect_environment(image_digest: str | None = None) -> dict:
    return {
        "software": software(),
        "os": {
            "kernel": platform.release(),
            "platform": platform.platform(),
            "os_release": _os_release(),
        },
        "container": container(image_digest),
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

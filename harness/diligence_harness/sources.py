"""Reading the machine: tools, sysfs, /proc, library paths and digests.

Each reader returns plain data and never raises for a missing tool or file:
a rented machine may lack lspci, run in a container without /sys, or have no
GPU at all, and the bundle must say so rather than stop.
"""

import glob
import hashlib
import os
import re
import shutil
import subprocess


def run_tool(args: list[str], timeout_s: float = 60.0) -> dict:
    """Run a command; {'ok', 'returncode', 'stdout', 'stderr', 'reason'} whatever happens."""
    if shutil.which(args[0]) is None:
        return {"ok": False, "returncode": None, "stdout": "", "stderr": "", "reason": "not found"}
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"ok": False, "returncode": None, "stdout": "", "stderr": "", "reason": str(exc)}
    return {
        "ok": done.returncode == 0,
        "returncode": done.returncode,
        "stdout": done.stdout,
        "stderr": done.stderr[-2000:],
        "reason": None if done.returncode == 0 else f"exit status {done.returncode}",
    }


def read_text(path: str, limit: int = 1_000_000) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return None


def file_digest(path: str) -> dict:
    """Path, resolved path, size and SHA-256 of a file (e.g. libnvidia-ml, nvidia-smi)."""
    record: dict = {"path": path, "realpath": os.path.realpath(path)}
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        record.update(sha256=digest.hexdigest(), size=os.path.getsize(path))
    except OSError as exc:
        record["error"] = str(exc)
    return record


def _hex_file(path: str) -> str | None:
    text = read_text(path)
    return text.strip().lower() if text else None


def read_sysfs_gpus(root: str = "/sys/bus/pci/devices") -> list[dict]:
    """NVIDIA display/3D controllers in PCI config space as the kernel sees it."""
    devices = []
    for path in sorted(glob.glob(os.path.join(root, "*"))):
        if _hex_file(os.path.join(path, "vendor")) != "0x10de":
            continue
        pci_class = _hex_file(os.path.join(path, "class")) or ""
        if not pci_class.startswith("0x03"):
            continue  # audio functions and bridges of the same board are not GPUs
        devices.append(
            {
                "pci_bus_id": os.path.basename(path).lower(),
                "pci_vendor_id": "0x10de",
                "pci_device_id": _hex_file(os.path.join(path, "device")),
                "pci_subsystem_vendor_id": _hex_file(os.path.join(path, "subsystem_vendor")),
                "pci_subsystem_device_id": _hex_file(os.path.join(path, "subsystem_device")),
                "pci_class": pci_class,
                "numa_node": _hex_file(os.path.join(path, "numa_node")),
                "link_speed_current": _hex_file(os.path.join(path, "current_link_speed")),
                "link_width_current": _hex_file(os.path.join(path, "current_link_width")),
                "link_speed_max": _hex_file(os.path.join(path, "max_link_speed")),
                "link_width_max": _hex_file(os.path.join(path, "max_link_width")),
                "source": "sysfs",
            }
        )
    return devices


_LSPCI_LINE = re.compile(
    r"^(?P<bus>[0-9a-fA-F:.]+)\s+(?P<desc>.*?)\s*\[(?P<cls>[0-9a-fA-F]{4})\]:\s*(?P<name>.*?)"
    r"\s*\[(?P<vendor>[0-9a-fA-F]{4}):(?P<device>[0-9a-fA-F]{4})\]"
)


def parse_lspci(text: str) -> list[dict]:
    """`lspci -nn -D` lines for NVIDIA display/3D controllers."""
    from diligence_harness.nvsmi import normalise_bus_id

    devices = []
    for line in text.splitlines():
        match = _LSPCI_LINE.match(line.strip())
        if not match or match["vendor"].lower() != "10de" or not match["cls"].startswith("03"):
            continue
        devices.append(
            {
                "pci_bus_id": normalise_bus_id(match["bus"]),
                "pci_vendor_id": "0x10de",
                "pci_device_id": "0x" + match["device"].lower(),
                "pci_class": "0x" + match["cls"].lower(),
                "name": match["name"],
                "source": "lspci",
            }
        )
    return devices


def read_proc_driver_gpus(root: str = "/proc/driver/nvidia/gpus") -> list[dict]:
    """The kernel driver's own view (model, UUID, bus) — independent of user-space NVML."""
    gpus = []
    for info_path in sorted(glob.glob(os.path.join(root, "*", "information"))):
        fields = {}
        for line in (read_text(info_path) or "").splitlines():
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
        gpus.append(
            {
                "name": fields.get("Model"),
                "uuid": fields.get("GPU UUID"),
                "pci_bus_id": (fields.get("Bus Location") or "").lower() or None,
                "vbios_version": fields.get("Video BIOS"),
                "source": "proc",
            }
        )
    return gpus


_LIBRARY_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
    "/usr/lib/aarch64-linux-gnu",
)


def nvml_library_paths() -> list[str]:
    """Where libnvidia-ml lives, per the loader cache and the usual directories."""
    paths = set()
    cache = run_tool(["ldconfig", "-p"], timeout_s=10)
    for line in cache["stdout"].splitlines():
        if "libnvidia-ml.so" in line and "=>" in line:
            paths.add(line.split("=>", 1)[1].strip())
    for directory in _LIBRARY_DIRS:
        paths.update(glob.glob(os.path.join(directory, "libnvidia-ml.so*")))
    return sorted(paths)


def shim_report() -> dict:
    """LD_PRELOAD, /etc/ld.so.preload and the NVML / nvidia-smi binaries with digests.

    User-space shims such as HAMi-core/softmig rewrite what NVML reports via
    LD_PRELOAD (docs/metrics.md#inventory-sources), so where these point is evidence.
    """
    preload_text = read_text("/etc/ld.so.preload")
    smi = shutil.which("nvidia-smi")
    return {
        "ld_preload_env": os.environ.get("LD_PRELOAD", ""),
        "ld_so_preload": {
            "present": preload_text is not None,
            "content": preload_text,
            "sha256": hashlib.sha256(preload_text.encode()).hexdigest() if preload_text else None,
        },
        "nvml_libraries": [file_digest(path) for path in nvml_library_paths()],
        "nvidia_smi": file_digest(smi) if smi else None,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "nvidia_visible_devices": os.environ.get("NVIDIA_VISIBLE_DEVICES"),
        "cuda_device_order": os.environ.get("CUDA_DEVICE_ORDER"),
    }


def read_nvml_bindings() -> dict:
    """Name, memory, UUID, bus id and NVLink states through nvidia-ml-py, when installed.

    A second path to NVML besides the nvidia-smi binary: each can be shimmed on
    its own, so both are recorded.
    """
    try:
        import pynvml
    except ImportError:
        return {"status": "skipped", "reason": "nvidia-ml-py is not installed", "gpus": []}
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError has many subclasses; any means "no NVML here"
        return {"status": "skipped", "reason": f"nvmlInit failed: {exc}", "gpus": []}
    try:
        return {"status": "ok", "reason": None, "gpus": _nvml_gpus(pynvml)}
    finally:
        pynvml.nvmlShutdown()


def _nvml_gpus(pynvml) -> list[dict]:
    from diligence_harness.nvsmi import normalise_bus_id

    gpus = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        name = pynvml.nvmlDeviceGetName(handle)
        uuid = pynvml.nvmlDeviceGetUUID(handle)
        pci = pynvml.nvmlDeviceGetPciInfo(handle)
        bus_id = pci.busId.decode() if isinstance(pci.busId, bytes) else pci.busId
        links = []
        for link in range(18):  # NVML_NVLINK_MAX_LINKS on Hopper
            try:
                state = pynvml.nvmlDeviceGetNvLinkState(handle, link)
            except Exception:
                break
            links.append({"link": link, "active": bool(state)})
        gpus.append(
            {
                "nvml_index": index,
                "name": name.decode() if isinstance(name, bytes) else name,
                "uuid": uuid.decode() if isinstance(uuid, bytes) else uuid,
                "pci_bus_id": normalise_bus_id(bus_id),
                "memory_total_mib": pynvml.nvmlDeviceGetMemoryInfo(handle).total // (1 << 20),
                "nvlink": links,
            }
        )
    return gpus

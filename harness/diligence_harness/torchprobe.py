"""Everything that needs torch: the CUDA runtime's device view, the allocate-and-touch
probe and the matmul / memory-bandwidth kernels. torch is optional; callers get a
reason instead of an exception when it is missing.
"""

import threading
from typing import Any

from diligence_harness.clock import now_ns
from diligence_harness.nvsmi import normalise_bus_id

ALLOC_PROBE_SEED = 7
TOUCH_MULTIPLIER = 2654435761  # Knuth's multiplicative hash constant: a cheap, checkable pattern


def load_torch():
    """(torch module or None, reason when None)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    except Exception as exc:  # a broken CUDA install can raise anything on import
        return None, f"import torch failed: {exc}"
    return torch, None


def normalise_uuid(uuid: object) -> str | None:
    if uuid is None:
        return None
    text = str(uuid).strip()
    if not text:
        return None
    if not text.upper().startswith(("GPU-", "MIG-")):
        text = "GPU-" + text
    return text


def runtime_versions(torch) -> dict:
    versions = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda}
    versions["cudnn"] = _safe(lambda: torch.backends.cudnn.version())
    versions["nccl"] = _safe(lambda: ".".join(map(str, torch.cuda.nccl.version())))
    versions["cublas"] = _cublas_version() if torch.version.cuda else None
    versions["hip"] = getattr(torch.version, "hip", None)
    return versions


def _cublas_version() -> str | None:
    """cublasGetProperty(MAJOR/MINOR/PATCH) from the libcublas torch has already loaded."""
    import ctypes

    for name in ("libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"):
        try:
            library = ctypes.CDLL(name)
        except OSError:
            continue
        parts = []
        for kind in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            value = ctypes.c_int()
            if library.cublasGetProperty(kind, ctypes.byref(value)) != 0:
                return None
            parts.append(str(value.value))
        return ".".join(parts)
    return None


def _safe(read):
    try:
        return read()
    except Exception:
        return None


def cuda_devices(torch) -> list[dict]:
    """The CUDA runtime's own answer per device, joined later by UUID / bus id, not index."""
    if not torch.cuda.is_available():
        return []
    devices = []
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        bus = None
        if hasattr(props, "pci_bus_id") and hasattr(props, "pci_domain_id"):
            bus = normalise_bus_id(
                f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
            )
        free, total = _safe(lambda i=index: torch.cuda.mem_get_info(i)) or (None, None)
        devices.append(
            {
                "cuda_index": index,
                "name": props.name,
                "uuid": normalise_uuid(getattr(props, "uuid", None)),
                "pci_bus_id": bus,
                "memory_total_bytes": props.total_memory,
                "memory_total_mib": props.total_memory // (1 << 20),
                "mem_get_info_free_bytes": free,
                "mem_get_info_total_bytes": total,
                "compute_capability": f"{props.major}.{props.minor}",
                "sm_count": props.multi_processor_count,
                "l2_bytes": getattr(props, "L2_cache_size", None),
            }
        )
    return devices


def alloc_touch_probe(torch, index: int, fraction: float, seed: int) -> dict:
    """Allocate `fraction` of free memory in 1 GiB blocks, write a seeded pattern, read it back.

    docs/metrics.md#inventory-sources: catches memory that is not there, oversubscription
    to host memory (UVM or a shim) and memory far slower than HBM (the timings).
    """
    device = torch.device("cuda", index)
    free, total = torch.cuda.mem_get_info(index)
    target = int(free * fraction)
    block_elems = (1 << 30) // 8
    blocks: list[Any] = []  # torch tensors
    written, result = 0, {"device": f"cuda:{index}", "seed": seed}
    result.update(free_bytes=free, total_bytes=total, requested_bytes=target)
    t0 = now_ns()
    try:
        while written + 8 < target:
            elems = min(block_elems, (target - written) // 8)
            block = torch.arange(elems, dtype=torch.int64, device=device)
            block.mul_(TOUCH_MULTIPLIER).add_(seed + len(blocks))
            blocks.append(block)
            written += elems * 8
        torch.cuda.synchronize(device)
        t1 = now_ns()
        mismatched = sum(_block_mismatches(torch, b, seed + i) for i, b in enumerate(blocks))
        torch.cuda.synchronize(device)
        t2 = now_ns()
    except RuntimeError as exc:  # CUDA out-of-memory or a fault while touching
        result.update(ok=False, error=str(exc)[:500], touched_bytes=written)
        return result
    finally:
        del blocks
        torch.cuda.empty_cache()
    result.update(
        ok=mismatched == 0,
        touched_bytes=written,
        mismatched_elements=mismatched,
        write_ns=t1 - t0,
        verify_ns=t2 - t1,
        write_GBps=written / (t1 - t0) if t1 > t0 else None,
    )
    return result


def _block_mismatches(torch, block, offset: int) -> int:
    """Compare in 64 MiB slices so the expected values need little extra memory."""
    step, mismatched = (64 << 20) // 8, 0
    for start in range(0, block.numel(), step):
        end = min(start + step, block.numel())
        expected = torch.arange(start, end, dtype=torch.int64, device=block.device)
        expected.mul_(TOUCH_MULTIPLIER).add_(offset)
        mismatched += int((block[start:end] != expected).sum().item())
    return mismatched


class Timer:
    """Per-iteration timing: CUDA events on a GPU, perf_counter_ns around a sync on the CPU."""

    def __init__(self, torch, device) -> None:
        self.torch, self.device = torch, device
        self.cuda = device.type == "cuda"

    def time(self, work, iterations: int) -> list[int]:
        if not self.cuda:
            times = []
            for _ in range(iterations):
                start = now_ns()
                work()
                times.append(now_ns() - start)
            return times
        events = [
            (self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True))
            for _ in range(iterations)
        ]
        for start, end in events:
            start.record()
            work()
            end.record()
        self.torch.cuda.synchronize(self.device)
        return [int(start.elapsed_time(end) * 1e6) for start, end in events]  # ms -> ns


_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "float8_e4m3fn"}


def make_matmul(torch, device, dtype_name: str, n: int, seed: int):
    """A closure doing one n×n×n matmul; fp32 with TF32 off; fp8 through _scaled_mm."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    # Seeded randn, never zeros: zero inputs draw less power and inflate clocks
    # (docs/metrics.md#microbenchmarks).
    a = torch.randn(n, n, generator=generator).to(device)
    b = torch.randn(n, n, generator=generator).to(device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32, no silent TF32
    if dtype_name == "fp8":
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.to(torch.float8_e4m3fn).t().contiguous().t()  # column-major second operand
        scale = torch.tensor(1.0, device=device)
        return lambda: torch._scaled_mm(
            a8, b8, scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16
        )
    dtype = getattr(torch, _DTYPES[dtype_name])
    a, b = a.to(dtype), b.to(dtype)
    return lambda: torch.matmul(a, b)


def matmul_timings(torch, device, dtype_name: str, n: int, warmup: int, iters: int, seed: int):
    """Per-iteration times (ns) of the matmul above, after `warmup` untimed iterations."""
    work = make_matmul(torch, device, dtype_name, n, seed)
    timer = Timer(torch, device)
    timer.time(work, warmup)
    return timer.time(work, iters)


def bandwidth_timings(torch, device, kernel: str, elems: int, warmup: int, iters: int):
    """Copy (2 arrays touched) or triad a = b + s*c (3 arrays), fp32, per-iteration ns."""
    a = torch.empty(elems, dtype=torch.float32, device=device)
    b = torch.ones(elems, dtype=torch.float32, device=device)
    c = torch.full((elems,), 2.0, dtype=torch.float32, device=device)
    if kernel == "copy":

        def work():
            a.copy_(b)
    else:

        def work():
            torch.add(b, c, alpha=0.4, out=a)

    timer = Timer(torch, device)
    timer.time(work, warmup)
    return timer.time(work, iters)


def run_on_all_devices(devices: list, job) -> list:
    """Run job(device) on every device at once (one thread each) and return results in order."""
    results: list = [None] * len(devices)

    def target(i: int) -> None:
        try:
            results[i] = job(devices[i])
        except Exception as exc:  # one failing GPU must not lose the others' results
            results[i] = exc

    threads = [threading.Thread(target=target, args=(i,)) for i in range(len(devices))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results

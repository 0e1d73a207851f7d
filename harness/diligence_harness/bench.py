"""Micro-benchmarks: matmul TFLOP/s per dtype and device-memory bandwidth.

Method (docs/metrics.md#microbenchmarks): fixed square shapes, seeded
randn inputs (never zeros), warm-up before timing, per-iteration device-event
timings kept raw (`iter_ns`) so the server can recompute any summary, 3 rounds
and their spread; a short burst and a sustained run on all GPUs at once while
clocks, power and clock-event reasons are sampled.

Backends, in order: CUDA via torch; torch on the CPU; a pure-Python fallback
that is clearly labelled as measuring the interpreter, not the hardware. The
CPU backends keep to seconds.
"""

from diligence_harness import metrics
from diligence_harness.benchfallback import python_copy_timings, python_matmul_timings
from diligence_harness.clock import now_ns
from diligence_harness.telemetry import TelemetrySampler
from diligence_harness.torchprobe import (
    Timer,
    bandwidth_timings,
    load_torch,
    make_matmul,
    matmul_timings,
    run_on_all_devices,
)

GPU_SHAPE = 8192  # the community torch.mm reference point (docs/metrics.md#microbenchmarks)
GPU_BW_BYTES = 1 << 30  # 1 GiB per array: well above any L2 (50 MB on H100)
CPU_SHAPE = 512
CPU_BW_BYTES = 64 << 20


def _summary_tflops(iter_ns: list[int], flop: float) -> dict:
    rates = sorted(flop / t / 1e3 for t in iter_ns if t > 0)  # flop/ns = GFLOP/s; /1e3 = TFLOP/s
    return {"median": metrics.percentile_linear(rates, 50), "max": rates[-1], "min": rates[0]}


def _summary_gbps(iter_ns: list[int], moved: int) -> dict:
    rates = sorted(moved / t for t in iter_ns if t > 0)  # bytes/ns = GB/s (decimal)
    return {"median": metrics.percentile_linear(rates, 50), "best": rates[-1]}


def _matmul_record(device_name, dtype, n, regime, round_no, warmup, iter_ns, timing) -> dict:
    flop = 2.0 * n * n * n
    return {
        "device": device_name,
        "dtype": dtype,
        "m": n,
        "n": n,
        "k": n,
        "layout": "NN",
        "regime": regime,
        "round": round_no,
        "warmup_iters": warmup,
        "timed_iters": len(iter_ns),
        "timing": timing,
        "flop_per_iter": flop,
        "iter_ns": iter_ns,
        "tflops": _summary_tflops(iter_ns, flop),
    }


def _bw_record(device_name, kernel, elems, round_no, warmup, iter_ns, timing) -> dict:
    touched = 2 if kernel == "copy" else 3  # BabelStream convention
    moved = touched * elems * 4
    return {
        "device": device_name,
        "kernel": kernel,
        "elem_bytes": 4,
        "array_bytes": elems * 4,
        "bytes_per_iter": moved,
        "round": round_no,
        "warmup_iters": warmup,
        "timed_iters": len(iter_ns),
        "discard_first": True,
        "timing": timing,
        "iter_ns": iter_ns,
        "GBps": _summary_gbps(iter_ns, moved),
    }


def _spread(records: list[dict], key: str, field: str, group: tuple[str, ...]) -> list[dict]:
    groups: dict = {}
    for record in records:
        groups.setdefault(tuple(record[g] for g in group), []).append(record[key][field])
    return [
        dict(zip(group, values)) | {"metric": f"{key}.{field}", **metrics.spread(series)}
        for values, series in sorted(groups.items(), key=lambda item: str(item[0]))
    ]


def run_bench(*, seed: int, rounds: int, sustained_s: float, quick: bool) -> dict:
    torch, reason = load_torch()
    if torch is not None and torch.cuda.is_available():
        return _bench_cuda(torch, seed, rounds, sustained_s, quick)
    if torch is not None:
        result = _bench_torch_cpu(torch, seed, rounds, quick)
        result["backend_note"] = "no CUDA device visible to torch: ran on the CPU"
        return result
    result = _bench_python(seed, rounds)
    result["backend_note"] = (
        f"{reason}: pure-Python fallback; these numbers measure the interpreter, "
        "not the hardware, and only show that the pipeline works"
    )
    return result


def _bench_python(seed: int, rounds: int) -> dict:
    matmul, bandwidth = [], []
    for round_no in range(1, rounds + 1):
        n, warmup, iter_ns = python_matmul_timings(seed, n=40, warmup=1, iters=5)
        matmul.append(
            _matmul_record(
                "cpu", "fp64-python", n, "burst", round_no, warmup, iter_ns, "perf_counter_ns"
            )
        )
        elems, iter_ns = python_copy_timings(CPU_BW_BYTES // 4, warmup=1, iters=5)
        bandwidth.append(_bw_record("cpu", "copy", elems, round_no, 1, iter_ns, "perf_counter_ns"))
    return {
        "backend": "python-fallback",
        "seed": seed,
        "devices": ["cpu"],
        "matmul": matmul,
        "memory_bw": bandwidth,
        "skipped": [
            {"what": "bf16/fp16/fp8/fp32 matmul", "reason": "needs torch"},
            {"what": "triad", "reason": "no vector arithmetic in the standard library"},
            {"what": "sustained run", "reason": "needs a GPU"},
        ],
        "telemetry": [],
        "spread": _spread(matmul, "tflops", "median", ("device", "dtype", "regime"))
        + _spread(bandwidth, "GBps", "median", ("device", "kernel")),
    }


def _bench_torch_cpu(torch, seed: int, rounds: int, quick: bool) -> dict:
    device = torch.device("cpu")
    n = 256 if quick else CPU_SHAPE
    elems = (CPU_BW_BYTES // 4) // (4 if quick else 1)
    matmul, bandwidth, skipped = [], [], []
    for round_no in range(1, rounds + 1):
        for dtype in ("fp32", "bf16"):
            iter_ns = matmul_timings(torch, device, dtype, n, 2, 5, seed)
            matmul.append(
                _matmul_record("cpu", dtype, n, "burst", round_no, 2, iter_ns, "perf_counter_ns")
            )
        for kernel in ("copy", "triad"):
            iter_ns = bandwidth_timings(torch, device, kernel, elems, 1, 5)
            bandwidth.append(
                _bw_record("cpu", kernel, elems, round_no, 1, iter_ns, "perf_counter_ns")
            )
    skipped.append({"what": "fp16/fp8 matmul, sustained run", "reason": "CPU backend"})
    return {
        "backend": "torch-cpu",
        "seed": seed,
        "devices": ["cpu"],
        "torch": torch.__version__,
        "matmul": matmul,
        "memory_bw": bandwidth,
        "skipped": skipped,
        "telemetry": [],
        "spread": _spread(matmul, "tflops", "median", ("device", "dtype", "regime"))
        + _spread(bandwidth, "GBps", "median", ("device", "kernel")),
    }


def _supports_fp8(torch, device) -> str | None:
    """None when fp8 matmul can run here, else the reason (needs sm_89+ and _scaled_mm)."""
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) < (8, 9):
        return f"compute capability {major}.{minor} has no fp8 tensor cores"
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return "this torch has no _scaled_mm / float8_e4m3fn"
    return None


def _bench_cuda(torch, seed: int, rounds: int, sustained_s: float, quick: bool) -> dict:
    devices = [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
    shape = 4096 if quick else GPU_SHAPE
    elems = (GPU_BW_BYTES // 4) // (4 if quick else 1)
    iters = 10 if quick else 50
    matmul, bandwidth, skipped = [], [], []
    dtypes = ["bf16", "fp16", "fp32"]
    fp8_reason = _supports_fp8(torch, devices[0])
    if fp8_reason is None:
        dtypes.append("fp8")
    else:
        skipped.append({"what": "fp8 matmul", "reason": fp8_reason})
    sampler = TelemetrySampler(period_s=0.25)
    sampler.start()
    try:
        for round_no in range(1, rounds + 1):
            for dtype in dtypes:
                matmul += _burst_matmul(
                    torch, devices, dtype, shape, iters, seed, round_no, skipped
                )
            for kernel in ("copy", "triad"):
                bandwidth += _burst_bandwidth(torch, devices, kernel, elems, round_no, skipped)
        matmul += _sustained(torch, devices, shape, seed, sustained_s, skipped)
    finally:
        sampler.stop()
    return {
        "backend": "cuda",
        "backend_note": "CUDA via torch; all GPUs run each kernel at the same time",
        "seed": seed,
        "devices": [str(d) for d in devices],
        "torch": torch.__version__,
        "allow_tf32": False,
        "matmul": matmul,
        "memory_bw": bandwidth,
        "skipped": skipped,
        "telemetry": sampler.samples,
        "telemetry_source": sampler.source,
        "spread": _spread(matmul, "tflops", "median", ("device", "dtype", "regime"))
        + _spread(bandwidth, "GBps", "median", ("device", "kernel")),
    }


def _burst_matmul(torch, devices, dtype, shape, iters, seed, round_no, skipped) -> list[dict]:
    """Every GPU at once, short, after the previous kernel's idle gap (MAMF-like burst)."""
    warmup = 10
    t_start = now_ns()
    results = run_on_all_devices(
        devices, lambda d: matmul_timings(torch, d, dtype, shape, warmup, iters, seed)
    )
    window = {"t_start_ns": t_start, "t_end_ns": now_ns()}
    records = []
    for device, result in _split(results, devices, skipped, f"{dtype} matmul"):
        record = _matmul_record(
            str(device), dtype, shape, "burst", round_no, warmup, result, "cuda_events"
        )
        records.append(record | {"window": window})
    return records


def _burst_bandwidth(torch, devices, kernel, elems, round_no, skipped) -> list[dict]:
    warmup = 3
    t_start = now_ns()
    results = run_on_all_devices(
        devices, lambda d: bandwidth_timings(torch, d, kernel, elems, warmup, 20)
    )
    window = {"t_start_ns": t_start, "t_end_ns": now_ns()}
    records = []
    for device, result in _split(results, devices, skipped, kernel):
        record = _bw_record(str(device), kernel, elems, round_no, warmup, result, "cuda_events")
        records.append(record | {"window": window})
    return records


def _split(results: list, devices: list, skipped: list, what: str) -> list[tuple]:
    """(device, result) pairs that succeeded; failures become `skipped` entries."""
    pairs = []
    for device, result in zip(devices, results):
        if isinstance(result, Exception):
            skipped.append({"what": f"{what} on {device}", "reason": str(result)[:300]})
        else:
            pairs.append((device, result))
    return pairs


def _sustained(torch, devices, n, seed, seconds, skipped) -> list[dict]:
    """bf16 matmul on all GPUs at once for `seconds`, in 20-iteration batches (MSMF-like)."""
    if seconds <= 0:
        skipped.append({"what": "sustained run", "reason": "--sustained-s 0"})
        return []

    def job(device):
        work, timer = make_matmul(torch, device, "bf16", n, seed), Timer(torch, device)
        timer.time(work, 10)
        timings, end = [], now_ns() + int(seconds * 1e9)
        while now_ns() < end:
            timings += timer.time(work, 20)
        return timings

    t_start = now_ns()
    results = run_on_all_devices(devices, job)
    window = {"t_start_ns": t_start, "t_end_ns": now_ns(), "soak_s": seconds}
    return [
        _matmul_record(str(d), "bf16", n, "sustained", 1, 10, r, "cuda_events") | {"window": window}
        for d, r in _split(results, devices, skipped, "sustained bf16")
    ]

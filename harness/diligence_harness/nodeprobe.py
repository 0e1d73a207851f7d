"""Inside the node: copy bandwidth, all-reduce bus bandwidth, repeated matmuls, topology.

Method (docs/metrics.md#inside-the-node):

- host → device and device → host copies per card from pinned host memory, and
  a device → device copy for every ordered pair of cards (peer copies where the
  driver allows them); each repetition timed with the devices synchronised
  before and after, raw bytes and nanoseconds kept;
- all-reduce over every card with torch.distributed (NCCL on GPUs; gloo on the
  CPU, which only shows the pipeline works), one process per rank; each rank's
  time per repetition kept; bus bandwidth as nccl-tests defines it:
  algbw = bytes / time, busbw = algbw · 2(n − 1)/n;
- the same seeded matmul repeated on every card and hashed: repeats on one card
  must be bitwise identical and cards must agree (the result comparison
  gpu-burn uses to catch silent corruption);
- the link between every pair of cards from `nvidia-smi topo -m` (NV#, PIX,
  PXB, PHB, NODE, SYS), parsed from the tool or from a captured file.

torch is optional and imported lazily: without it the step keeps the topology
and records why the rest was not measured.
"""

import datetime
import hashlib
import json
import os
import re
import socket
import tempfile
import time

from diligence_harness.clock import now_ns
from diligence_harness.nvsmi import parse_topology

COPY_BYTES = 256 << 20  # well above any L2; a copy of it takes ~1 ms even over NVLink
ITERATIONS = 10
WARMUP = 3
ALLREDUCE_BYTES = 256 << 20
MATMUL_N = 4096
MATMUL_REPEATS = 10
MATMUL_SEED = 1234
TIMEOUT_S = 300.0
CPU_RANKS = 2
# Cards of one model computing the same product with the same library agree bitwise;
# cards of different models may differ by rounding, never by more than this share of
# the largest value (docs/metrics.md#inside-the-node).
INTEGRITY_REL_TOLERANCE = 1e-4
LINK_KINDS = ("PIX", "PXB", "PHB", "NODE", "SYS")


# --- arithmetic (unit-tested without torch) -----------------------------------------


def rates_gbps(size_bytes: int, iter_ns: list[int]) -> dict:
    """Decimal GB/s of each repetition (bytes / ns), as median and best."""
    rates = sorted(size_bytes / ns for ns in iter_ns if ns and ns > 0)
    if not rates:
        return {}
    middle = len(rates) // 2
    median = rates[middle] if len(rates) % 2 else (rates[middle - 1] + rates[middle]) / 2
    return {"median": median, "best": rates[-1], "n": len(rates)}


def bus_factor(ranks: int) -> float:
    """nccl-tests' all-reduce factor: each rank sends and receives 2(n − 1)/n of the buffer."""
    return 2.0 * (ranks - 1) / ranks if ranks > 0 else 0.0


def bus_bandwidth_gbps(size_bytes: int, seconds: float, ranks: int) -> float:
    """Bus bandwidth of one all-reduce of ``size_bytes`` taking ``seconds`` over ``ranks``."""
    return size_bytes / seconds / 1e9 * bus_factor(ranks)


def allreduce_summary(size_bytes: int, rank_iter_ns: list[list[int]]) -> dict:
    """Per repetition the mean of the ranks' times (nccl-tests' default), then the median."""
    ranks = len(rank_iter_ns)
    repetitions = min((len(times) for times in rank_iter_ns), default=0)
    means = sorted(
        sum(times[i] for times in rank_iter_ns) / ranks for i in range(repetitions)
    )  # fmt: skip
    means = [t for t in means if t > 0]
    if not means:
        return {}
    middle = len(means) // 2
    median_ns = means[middle] if len(means) % 2 else (means[middle - 1] + means[middle]) / 2
    algbw = size_bytes / median_ns  # bytes/ns = GB/s
    return {
        "time_ns_median": median_ns,
        "algbw_GBps": algbw,
        "busbw_GBps": algbw * bus_factor(ranks),
        "bus_factor": bus_factor(ranks),
        "n": len(means),
    }


def link_kind(cell: str) -> tuple[str, int | None]:
    """One cell of the topology matrix: ('nvlink', links) for NV#, else PIX/PXB/PHB/NODE/SYS."""
    text = cell.strip().upper()
    nv = re.fullmatch(r"NV(\d+)", text)
    if nv:
        return "nvlink", int(nv.group(1))
    if text in LINK_KINDS:
        return text, None
    if text == "X":
        return "self", None
    return "other", None


def topology_pairs(parsed: dict) -> dict:
    """The GPUs of a parsed `nvidia-smi topo -m` and the link of every unordered pair."""
    matrix = parsed.get("matrix") or {}
    gpus = sorted((name for name in matrix if re.fullmatch(r"GPU\d+", name)), key=_gpu_index)
    pairs = []
    for i, a in enumerate(gpus):
        for b in gpus[i + 1 :]:
            cell = (matrix.get(a) or {}).get(b) or ""
            kind, links = link_kind(cell)
            pairs.append({"a": a, "b": b, "link": cell.strip(), "kind": kind, "nvlinks": links})
    return {"gpus": gpus, "pairs": pairs}


def _gpu_index(name: str) -> int:
    return int(name[3:])


# --- the step -------------------------------------------------------------------------


def add_artifact_once(evidence, name: str, text: str) -> str:
    """Record ``text`` as an artifact unless the same bytes are already there; the name used."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    for artifact in evidence.artifacts:
        if artifact["name"] == name:
            if artifact["sha256"] == digest:
                return name
            name = "node-" + name
            break
    evidence.artifact(name, text)
    return name


def topology_section(topo_path: str | None, evidence) -> dict:
    """The topology from a captured file (``--topo``) or from `nvidia-smi topo -m`."""
    from diligence_harness.sources import run_tool

    if topo_path:
        with open(topo_path, encoding="utf-8", errors="replace") as handle:
            text, source, name = handle.read(), "file", os.path.basename(topo_path)
    else:
        done = run_tool(["nvidia-smi", "topo", "-m"], timeout_s=60)
        if not done["ok"]:
            return {"source": None, "reason": f"nvidia-smi topo -m: {done['reason']}"}
        text, source, name = done["stdout"], "nvidia-smi topo -m", "nvidia-smi-topo-m.txt"
    artifact = add_artifact_once(evidence, name, text)
    return {"source": source, "artifact": artifact, **topology_pairs(parse_topology(text))}


def run_node(
    *,
    topo_path: str | None,
    evidence,
    copy_bytes: int = COPY_BYTES,
    iterations: int = ITERATIONS,
    allreduce_bytes: int = ALLREDUCE_BYTES,
    matmul_n: int = MATMUL_N,
    matmul_repeats: int = MATMUL_REPEATS,
    timeout_s: float = TIMEOUT_S,
    cpu_ranks: int = CPU_RANKS,
) -> dict:
    """Everything measured inside the node; raises ``Unavailable`` when nothing could be."""
    from diligence_harness.torchprobe import load_torch

    topology = topology_section(topo_path, evidence)
    limits = {
        "copy_bytes": copy_bytes,
        "iterations": iterations,
        "warmup": WARMUP,
        "allreduce_bytes": allreduce_bytes,
        "matmul_n": matmul_n,
        "matmul_repeats": matmul_repeats,
        "timeout_s": timeout_s,
    }
    result: dict = {
        "backend": None,
        "devices": [],
        "topology": topology,
        "host_device": [],
        "peer": [],
        "allreduce": None,
        "integrity": None,
        "limits": limits,
        "skipped": [],
    }
    torch, reason = load_torch()
    if torch is None:
        if topology.get("source") is None:
            raise Unavailable(f"{reason}; and {topology['reason']}")
        result["skipped"].append({"what": "copies, all-reduce, matmul repeats", "reason": reason})
        return result
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        _measure_cuda(torch, result, limits)
    else:
        _measure_cpu(torch, result, limits, cpu_ranks)
    return result


class Unavailable(Exception):
    """Nothing inside the node could be measured here; the message says why."""


def _measure_cuda(torch, result: dict, limits: dict) -> None:
    from diligence_harness.torchprobe import cuda_devices

    count = torch.cuda.device_count()
    devices = [torch.device("cuda", i) for i in range(count)]
    seen = {d["cuda_index"]: d for d in cuda_devices(torch)}
    result["backend"] = "cuda"
    result["devices"] = [
        {"device": str(d)} | {k: seen.get(d.index, {}).get(k) for k in ("uuid", "name")}
        for d in devices
    ]
    size, iters = limits["copy_bytes"], limits["iterations"]
    for device in devices:
        for direction in ("h2d", "d2h"):
            _attempt(
                result,
                f"{direction} copy on {device}",
                lambda d=device, w=direction: result["host_device"].append(
                    _host_copy(torch, d, w, size, iters)
                ),
            )
    for src in devices:
        for dst in devices:
            if src != dst:
                _attempt(
                    result,
                    f"copy {src} → {dst}",
                    lambda s=src, t=dst: result["peer"].append(
                        _peer_copy(torch, s, t, size, iters)
                    ),
                )
    if count > 1:
        _attempt(
            result,
            "all-reduce",
            lambda: result.update(
                allreduce=run_allreduce(
                    "nccl", count, limits["allreduce_bytes"], iters, limits["timeout_s"]
                )
            ),
        )
    else:
        result["skipped"].append({"what": "peer copies and all-reduce", "reason": "one card"})
    _attempt(
        result,
        "matmul repeats",
        lambda: result.update(
            integrity=matmul_integrity(
                torch, devices, limits["matmul_n"], limits["matmul_repeats"], MATMUL_SEED
            )
        ),
    )


def _measure_cpu(torch, result: dict, limits: dict, ranks: int) -> None:
    """No CUDA device: gloo on the CPU shows the pipeline works; it measures the host."""
    result["backend"] = "cpu"
    result["devices"] = [{"device": "cpu", "uuid": None, "name": "cpu"}]
    result["skipped"].append({"what": "host and peer copies", "reason": "no CUDA device"})
    small = min(limits["allreduce_bytes"], 16 << 20)
    _attempt(
        result,
        "all-reduce (gloo)",
        lambda: result.update(
            allreduce=run_allreduce("gloo", ranks, small, limits["iterations"], limits["timeout_s"])
        ),
    )
    _attempt(
        result,
        "matmul repeats",
        lambda: result.update(
            integrity=matmul_integrity(
                torch, [torch.device("cpu")], min(limits["matmul_n"], 512), 3, MATMUL_SEED
            )
        ),
    )


def _attempt(result: dict, what: str, work) -> None:
    """One measurement; a failure is recorded and the others go on."""
    try:
        work()
    except Exception as exc:  # a failing card or link is evidence too
        result["skipped"].append({"what": what, "reason": f"{type(exc).__name__}: {exc}"[:300]})


def _timed(work, sync, warmup: int, iterations: int) -> list[int]:
    """Wall time of each repetition, the devices synchronised before and after."""
    for _ in range(warmup):
        work()
    sync()
    times = []
    for _ in range(iterations):
        sync()
        start = now_ns()
        work()
        sync()
        times.append(now_ns() - start)
    return times


def _host_copy(torch, device, direction: str, size: int, iterations: int) -> dict:
    host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
    card = torch.empty(size, dtype=torch.uint8, device=device)

    def work():
        if direction == "h2d":
            card.copy_(host, non_blocking=True)
        else:
            host.copy_(card, non_blocking=True)

    times = _timed(work, lambda: torch.cuda.synchronize(device), WARMUP, iterations)
    return {
        "device": str(device),
        "direction": direction,
        "pinned": True,
        "bytes": size,
        "warmup_iters": WARMUP,
        "iter_ns": times,
        "GBps": rates_gbps(size, times),
    }


def _peer_copy(torch, src, dst, size: int, iterations: int) -> dict:
    source = torch.randint(0, 255, (size,), dtype=torch.uint8, device=src)
    target = torch.empty(size, dtype=torch.uint8, device=dst)

    def sync():
        torch.cuda.synchronize(src)
        torch.cuda.synchronize(dst)

    times = _timed(lambda: target.copy_(source), sync, WARMUP, iterations)
    return {
        "src": str(src),
        "dst": str(dst),
        "peer_access": bool(torch.cuda.can_device_access_peer(src.index, dst.index)),
        "bytes": size,
        "warmup_iters": WARMUP,
        "iter_ns": times,
        "GBps": rates_gbps(size, times),
    }


def _digest(torch, tensor) -> str:
    """SHA-256 of a tensor's bytes on the host."""
    flat = tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8)
    try:
        raw = flat.numpy().tobytes()
    except Exception:  # torch without numpy
        raw = bytes(flat.tolist())
    return hashlib.sha256(raw).hexdigest()


def matmul_integrity(torch, devices: list, n: int, repeats: int, seed: int) -> dict:
    """The same seeded fp32 matmul (TF32 off) ``repeats`` times on each device, hashed."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randn(n, n, generator=generator)
    b = torch.randn(n, n, generator=generator)
    if any(d.type == "cuda" for d in devices):
        torch.backends.cuda.matmul.allow_tf32 = False
    reference, runs = None, []
    for device in devices:
        left, right = a.to(device), b.to(device)
        digests, first = [], None
        for _ in range(repeats):
            product = torch.matmul(left, right)
            digests.append(_digest(torch, product))
            if first is None:
                first = product.detach().to("cpu")
        if reference is None:
            reference = first
        assert first is not None and reference is not None  # repeats ≥ 1
        scale = float(reference.abs().max()) or 1.0
        difference = float((first - reference).abs().max()) / scale
        runs.append({"device": str(device), "digests": digests, "max_rel_diff": difference})
    return {
        "dtype": "float32",
        "tf32": False,
        "n": n,
        "seed": seed,
        "repeats": repeats,
        "rel_tolerance": INTEGRITY_REL_TOLERANCE,
        "reference_device": str(devices[0]),
        "runs": runs,
    }


# --- all-reduce, one process per rank ---------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_allreduce(backend: str, ranks: int, size: int, iterations: int, timeout_s: float) -> dict:
    """all_reduce of ``size`` bytes of fp32 over ``ranks`` processes; each rank's times."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="diligence-allreduce-") as folder:
        processes = [
            context.Process(
                target=allreduce_worker,
                args=(rank, ranks, backend, port, size, iterations, folder, timeout_s),
                daemon=True,
            )
            for rank in range(ranks)
        ]
        for process in processes:
            process.start()
        deadline = time.monotonic() + timeout_s
        for process in processes:
            process.join(max(deadline - time.monotonic(), 0.1))
        late = [p for p in processes if p.is_alive()]
        for process in late:
            process.terminate()
            process.join(5)
        if late:
            raise TimeoutError(f"all-reduce did not finish in {timeout_s:g} s")
        answers = []
        for rank in range(ranks):
            path = os.path.join(folder, f"rank-{rank}.json")
            with open(path, encoding="utf-8") as handle:
                answers.append(json.load(handle))
    errors = [a["error"] for a in answers if a.get("error")]
    if errors:
        raise RuntimeError(errors[0])
    rank_iter_ns = [a["iter_ns"] for a in answers]
    return {
        "backend": backend,
        "ranks": ranks,
        "dtype": "float32",
        "bytes": (size // 4) * 4,
        "warmup_iters": WARMUP,
        "timing": "perf_counter_ns around all_reduce and a device synchronise, after a barrier",
        "rank_iter_ns": rank_iter_ns,
        **allreduce_summary((size // 4) * 4, rank_iter_ns),
    }


def allreduce_worker(rank, ranks, backend, port, size, iterations, folder, timeout_s) -> None:
    """One rank: init, warm up, then time each all_reduce; writes rank-<r>.json."""
    answer: dict = {"rank": rank}
    try:
        import torch
        import torch.distributed as dist

        dist.init_process_group(
            backend,
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=ranks,
            timeout=datetime.timedelta(seconds=timeout_s),
        )
        cuda = backend == "nccl"
        device = torch.device("cuda", rank) if cuda else torch.device("cpu")
        if cuda:
            torch.cuda.set_device(device)
        tensor = torch.ones(size // 4, dtype=torch.float32, device=device)

        def sync():
            if cuda:
                torch.cuda.synchronize(device)

        for _ in range(WARMUP):
            dist.all_reduce(tensor)
        sync()
        times = []
        for _ in range(iterations):
            tensor.fill_(1.0)  # bounded values whatever the number of repetitions
            sync()
            if cuda:
                dist.barrier(device_ids=[rank])  # NCCL: on this rank's card
            else:
                dist.barrier()
            start = now_ns()
            dist.all_reduce(tensor)
            sync()
            times.append(now_ns() - start)
        answer["iter_ns"] = times
        dist.destroy_process_group()
    except Exception as exc:
        answer["error"] = f"rank {rank}: {type(exc).__name__}: {exc}"[:500]
    with open(os.path.join(folder, f"rank-{rank}.json"), "w", encoding="utf-8") as handle:
        json.dump(answer, handle)

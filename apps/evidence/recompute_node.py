"""Inside the node and the local disk, recomputed from the bundle's raw timings.

The server's own reading (docs/metrics.md#inside-the-node, docs/metrics.md#local-disk):
copy bandwidth from each copy's bytes and nanoseconds, all-reduce bus bandwidth
as nccl-tests defines it, the matmul repeats from their digests, the topology
from the raw `nvidia-smi topo -m` artifact, and the disk's rates from each
block's and each read's nanoseconds. The client's figures are advisory; each
one that disagrees is listed.
"""

import math
import re

from apps.evidence.recompute import Disagreement, _differs, percentile

TOPOLOGY_ARTIFACT = "nvidia-smi-topo-m.txt"  # what the inventory step records
LINKS = ("PIX", "PXB", "PHB", "NODE", "SYS")
MAX_GPUS = 64  # a topology naming more cards than any node holds is not read further


# --- topology ------------------------------------------------------------------------


def link_kind(cell: str) -> tuple[str, int | None]:
    """('nvlink', links) for NV#; PIX, PXB, PHB, NODE or SYS; 'self' or 'other'."""
    text = cell.strip().upper()
    match = re.fullmatch(r"NV(\d{1,3})", text)
    if match:
        return "nvlink", int(match.group(1))
    if text in LINKS:
        return text, None
    return ("self" if text == "X" else "other"), None


def parse_topology(text: str) -> dict | None:
    """The GPUs of `nvidia-smi topo -m` and the link of every pair; None without a matrix.

    The header row lists the columns (GPU0 … then NICs and affinities), each GPU
    row its cells in that order, tab-separated as the tool prints them."""
    lines = [line.rstrip("\n") for line in text.splitlines()]
    header = None
    for index, line in enumerate(lines):
        cells = [c.strip() for c in line.split("\t")]
        if "GPU0" in cells and cells[0] == "":
            header, start = cells, index + 1
            break
    if header is None:
        return None
    gpus: list[str] = []
    matrix: dict[str, dict[str, str]] = {}
    for line in lines[start:]:
        cells = [c.strip() for c in line.split("\t")]
        if not re.fullmatch(r"GPU\d+", cells[0]):
            if cells[0].startswith(("NIC", "mlx")):
                continue
            break
        if len(gpus) >= MAX_GPUS:
            break
        gpus.append(cells[0])
        matrix[cells[0]] = dict(zip(header[1:], cells[1:]))
    pairs = []
    for i, a in enumerate(gpus):
        for b in gpus[i + 1 :]:
            cell = matrix[a].get(b, "")
            kind, links = link_kind(cell)
            pairs.append({"a": a, "b": b, "link": cell, "kind": kind, "nvlinks": links})
    return {"gpus": gpus, "pairs": pairs}


def topology(document: dict, node_result: dict | None, read_artifact) -> dict | None:
    """The topology from the artifact the node step names, else the inventory's capture."""
    named = ((node_result or {}).get("topology") or {}).get("artifact")
    for name in (named, TOPOLOGY_ARTIFACT):
        if not name:
            continue
        raw = read_artifact(name)
        if raw is not None:
            parsed = parse_topology(raw.decode("utf-8", errors="replace"))
            if parsed is not None:
                return parsed | {"artifact": name}
    return None


# --- copies and all-reduce ---------------------------------------------------------------


def copy_rates(size: int, iter_ns) -> dict:
    """Decimal GB/s of each repetition (bytes / ns): median and best, with n."""
    rates = sorted(size / ns for ns in iter_ns or [] if isinstance(ns, int) and ns > 0)
    if not rates or not isinstance(size, int) or size <= 0:
        return {}
    return {"median": percentile(rates, 50), "best": rates[-1], "n": len(rates)}


def bus_factor(ranks: int) -> float:
    """nccl-tests: an all-reduce moves 2(n − 1)/n of the buffer through each rank's links."""
    return 2.0 * (ranks - 1) / ranks if ranks > 0 else 0.0


def allreduce(record: dict | None) -> dict | None:
    """algbw = bytes / time and busbw = algbw · 2(n − 1)/n, the time of each repetition the
    mean over the ranks (nccl-tests' default), the median over the repetitions."""
    if not isinstance(record, dict):
        return None
    per_rank = [r for r in record.get("rank_iter_ns") or [] if isinstance(r, list)]
    size, ranks = record.get("bytes"), len(per_rank)
    repetitions = min((len(r) for r in per_rank), default=0)
    if not ranks or not repetitions or not isinstance(size, int):
        return None
    times = sorted(
        t for t in (math.fsum(r[i] for r in per_rank) / ranks for i in range(repetitions)) if t > 0
    )
    if not times:
        return None
    median_ns = percentile(times, 50)
    algbw = size / median_ns
    return {
        "backend": record.get("backend"),
        "ranks": ranks,
        "bytes": size,
        "n": len(times),
        "time_ms": median_ns / 1e6,
        "algbw_GBps": algbw,
        "busbw_GBps": algbw * bus_factor(ranks),
    }


def integrity(record: dict | None) -> dict | None:
    """Per device: how many different results its repeats gave; the largest difference
    from the reference device."""
    if not isinstance(record, dict):
        return None
    runs = []
    for run in record.get("runs") or []:
        digests = [d for d in run.get("digests") or [] if isinstance(d, str)]
        runs.append(
            {
                "device": str(run.get("device")),
                "repeats": len(digests),
                "distinct": len(set(digests)),
                "first": digests[0] if digests else None,
                "max_rel_diff": run.get("max_rel_diff"),
            }
        )
    return {
        "n": record.get("n"),
        "repeats": record.get("repeats"),
        "rel_tolerance": record.get("rel_tolerance"),
        "runs": runs,
    }


def _compare(where: str, metric: str, client, server, found: list) -> None:
    """A figure the client stated that the raw data do not give (one it left out is none)."""
    if client is not None and _differs(client, server):
        found.append(Disagreement(where, metric, client, server))


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _compare_rates(where: str, record: dict, ours: dict, found: list) -> None:
    theirs = _dict(record.get("GBps"))
    for stat in ("median", "best"):
        _compare(where, f"GBps.{stat}", theirs.get(stat), ours.get(stat), found)


def node(result: dict | None) -> tuple[dict | None, list[Disagreement]]:
    """The step's copies, all-reduce and repeats as the server computes them."""
    if not isinstance(result, dict):
        return None, []
    found: list[Disagreement] = []
    host_device, peer = [], []
    for record in result.get("host_device") or []:
        ours = copy_rates(record.get("bytes"), record.get("iter_ns"))
        where = f"node/{record.get('direction')}/{record.get('device')}"
        _compare_rates(where, record, ours, found)
        host_device.append(
            {"device": record.get("device"), "direction": record.get("direction")} | ours
        )
    for record in result.get("peer") or []:
        ours = copy_rates(record.get("bytes"), record.get("iter_ns"))
        where = f"node/peer/{record.get('src')}→{record.get('dst')}"
        _compare_rates(where, record, ours, found)
        peer.append({"src": record.get("src"), "dst": record.get("dst")} | ours)
    reduced = allreduce(result.get("allreduce"))
    if reduced is not None:
        claimed = result["allreduce"].get("busbw_GBps")
        _compare("node/allreduce", "busbw_GBps", claimed, reduced["busbw_GBps"], found)
    summary = {
        "backend": result.get("backend"),
        "devices": [
            str(d.get("device")) for d in result.get("devices") or [] if isinstance(d, dict)
        ],
        "host_device": host_device,
        "peer": peer,
        "peer_matrix": peer_matrix(peer),
        "allreduce": reduced,
        "integrity": integrity(result.get("integrity")),
        "skipped": [
            {"what": str(s.get("what")), "reason": str(s.get("reason"))}
            for s in result.get("skipped") or []
            if isinstance(s, dict)
        ],
    }
    return summary, found


def peer_matrix(peer: list[dict]) -> dict:
    """The median copy bandwidth from each card (rows) to each other (columns), for reading."""
    devices = sorted({p["src"] for p in peer} | {p["dst"] for p in peer}, key=_device_order)
    cell = {(p["src"], p["dst"]): p.get("median") for p in peer}
    return {
        "devices": devices,
        "rows": [[src, [cell.get((src, dst)) for dst in devices]] for src in devices],
    }


def _device_order(name) -> tuple:
    text = str(name)
    number = re.search(r"(\d+)$", text)
    return (text.rsplit(":", 1)[0], int(number.group(1)) if number else -1)


# --- the local disk ------------------------------------------------------------------


def disk(result: dict | None) -> tuple[dict | None, list[Disagreement]]:
    """Capacity from the raw statvfs fields; each phase's rate from its raw timings."""
    if not isinstance(result, dict):
        return None, []
    found: list[Disagreement] = []
    raw = result.get("capacity") or {}
    frsize = raw.get("f_frsize") or 0
    capacity = {
        "total_bytes": (raw.get("f_blocks") or 0) * frsize,
        "free_bytes": (raw.get("f_bfree") or 0) * frsize,
        "available_bytes": (raw.get("f_bavail") or 0) * frsize,
    }
    for name, value in capacity.items():
        _compare("disk/capacity", name, raw.get(name), value, found)
    capacity |= {  # decimal terabytes, as capacities are declared
        "total_tb": capacity["total_bytes"] / 1e12,
        "available_tb": capacity["available_bytes"] / 1e12,
    }
    phases = {}
    for phase in result.get("phases") or []:
        name = phase.get("phase")
        if name in ("seq_write", "seq_read"):
            ours = sequential(phase)
            _compare(f"disk/{name}", "GBps", phase.get("GBps"), ours.get("GBps"), found)
        elif name == "rand_read":
            ours = random_reads(phase)
            _compare(f"disk/{name}", "iops", phase.get("iops"), ours.get("iops"), found)
        else:
            continue
        phases[name] = ours
    backing = _dict(result.get("backing"))
    device = _dict(backing.get("device"))
    summary = {
        "path": str(result.get("path") or ""),
        "mode": result.get("mode"),
        "fstype": str(backing.get("fstype") or ""),
        "source": str(backing.get("source") or ""),
        "device": str(device.get("disk") or device.get("name") or ""),
        "model": str(device.get("model") or ""),
        "rotational": device.get("rotational"),
        "drives": [str(s) for s in device.get("slaves") or []],
        "capacity": capacity,
        "phases": phases,
    }
    return summary, found


def sequential(phase: dict) -> dict:
    """Bytes = block size × blocks timed; seconds = the blocks' time plus the fsync's."""
    block = phase.get("block_bytes")
    blocks = [ns for ns in phase.get("blocks_ns") or [] if isinstance(ns, int) and ns >= 0]
    if not isinstance(block, int) or block <= 0 or not blocks:
        return {}
    fsync = phase.get("fsync_ns")
    if not isinstance(fsync, int):
        fsync = 0
    seconds = (math.fsum(blocks) + fsync) / 1e9
    moved = block * len(blocks)
    mismatched = phase.get("mismatched_blocks")
    return {
        "bytes": moved,
        "seconds": seconds,
        "GBps": moved / seconds / 1e9 if seconds > 0 else None,
        "blocks": len(blocks),
        "mismatched_blocks": mismatched if isinstance(mismatched, int) else 0,
    }


def random_reads(phase: dict) -> dict:
    """Reads per second at queue depth 1 and the latency percentiles of the reads."""
    ops = sorted(float(ns) for ns in phase.get("ops_ns") or [] if isinstance(ns, int) and ns > 0)
    if not ops:
        return {}
    seconds = math.fsum(ops) / 1e9
    return {
        "ops": len(ops),
        "io_bytes": phase.get("io_bytes"),
        "seconds": seconds,
        "iops": len(ops) / seconds,
        "latency_us_p50": percentile(ops, 50) / 1e3,
        "latency_us_p99": percentile(ops, 99) / 1e3,
    }

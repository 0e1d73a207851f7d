"""Demo: inside the node and the local disk of the leading offer's H200 node, made up.

Built from the offer's declared spec, as the harness's `node` and `disk` steps
would record them: eight cards joined by NVLink (NV18 between every pair, as an
HGX H200 board shows in `nvidia-smi topo -m`), copies between cards at 85 % of
the declared bandwidth each way, identical matmul repeats, and a RAID-0 of NVMe
drives the size of the declared local NVMe. Marked as demo data with the rest of
the demo bundle: nothing here was measured.
"""

import hashlib

from apps.evidence.recompute_node import bus_factor, copy_rates

CARDS = 8
COPY_BYTES = 256 << 20
JITTER = (1.0, 0.99, 1.01, 1.005, 0.995)
DRIVE_TB = 3.84  # one data-centre NVMe drive
BLOCK = 4 << 20
BLOCKS = 256


def topology_text() -> str:
    """`nvidia-smi topo -m` of an eight-card NVLink board, tab-separated as the tool prints."""
    gpus = [f"GPU{i}" for i in range(CARDS)]
    lines = ["\t" + "\t".join([*gpus, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    for i, gpu in enumerate(gpus):
        links = [" X " if i == j else "NV18" for j in range(CARDS)]
        affinity = ("0-55,112-167", "0") if i < CARDS // 2 else ("56-111,168-223", "1")
        lines.append("\t".join([gpu, *links, *affinity, "", "N/A"]))
    lines += ["", "Legend:", "", "  X    = Self"]
    lines.append("  NV#  = Connection traversing a bonded set of # NVLinks")
    return "\n".join(lines) + "\n"


def _times(size: int, gbps: float) -> list[int]:
    return [int(size / (gbps * factor)) for factor in JITTER]


def _copy(size: int, gbps: float, **where) -> dict:
    times = _times(size, gbps)
    return {**where, "bytes": size, "warmup_iters": 3, "iter_ns": times} | {
        "GBps": copy_rates(size, times)
    }


def node_result(spec, uuids: list[str]) -> dict:
    declared = float(spec.intra_node_bandwidth_gbps or 900)
    each_way = declared / 2
    devices = [f"cuda:{i}" for i in range(CARDS)]
    host = [
        _copy(COPY_BYTES, rate, device=d, direction=w, pinned=True)
        for d in devices
        for w, rate in (("h2d", 53.0), ("d2h", 54.5))
    ]
    peer = [
        _copy(COPY_BYTES, each_way * (0.85 - 0.002 * (i + j)), src=a, dst=b, peer_access=True)
        for i, a in enumerate(devices)
        for j, b in enumerate(devices)
        if a != b
    ]
    algbw = each_way * 0.95 / bus_factor(CARDS)
    ranks = [[t + 900 * r for t in _times(COPY_BYTES, algbw)] for r in range(CARDS)]
    digest = hashlib.sha256(b"demo data: fp32 matmul, seed 1234, n 4096").hexdigest()
    return {
        "backend": "cuda",
        "devices": [
            {"device": d, "uuid": uuid, "name": "NVIDIA H200"} for d, uuid in zip(devices, uuids)
        ],
        "topology": {"source": "nvidia-smi topo -m", "artifact": "nvidia-smi-topo-m.txt"},
        "host_device": host,
        "peer": peer,
        "allreduce": {
            "backend": "nccl",
            "ranks": CARDS,
            "dtype": "float32",
            "bytes": COPY_BYTES,
            "warmup_iters": 3,
            "rank_iter_ns": ranks,
        },
        "integrity": {
            "dtype": "float32",
            "tf32": False,
            "n": 4096,
            "seed": 1234,
            "repeats": 10,
            "rel_tolerance": 1e-4,
            "reference_device": devices[0],
            "runs": [{"device": d, "digests": [digest] * 10, "max_rel_diff": 0.0} for d in devices],
        },
        "limits": {"copy_bytes": COPY_BYTES, "iterations": 5, "matmul_n": 4096},
        "skipped": [],
    }


def disk_result(spec) -> dict:
    declared_tb = float(spec.local_nvme_tb or 30.72)
    drives = max(round(declared_tb / DRIVE_TB), 1)
    frsize = 4096
    total = int(declared_tb * 1e12 * 0.983) // frsize  # XFS keeps under 2 % for itself
    free = int(total * 0.97)
    write = [int(BLOCK / 3.5) + (i % 5) * 2000 for i in range(BLOCKS)]
    read = [int(BLOCK / 6.0) + (i % 5) * 2000 for i in range(BLOCKS)]
    ops = [76_000 + (i * 7919) % 12_000 for i in range(1000)]
    return {
        "path": "/mnt/checkpoints",
        "path_given": True,
        "mode": "direct",
        "mode_reason": None,
        "capacity": {"f_frsize": frsize, "f_blocks": total, "f_bfree": free, "f_bavail": free},
        "backing": {
            "mount_point": "/mnt/checkpoints",
            "fstype": "xfs",
            "source": "/dev/md0",
            "device": {
                "name": "md0",
                "disk": "md0",
                "rotational": False,
                "slaves": [f"nvme{i}n1" for i in range(drives)],
            },
        },
        "limits": {"bytes": BLOCK * BLOCKS, "block_bytes": BLOCK, "random_ops": len(ops)},
        "phases": [
            {"phase": "seq_write", "block_bytes": BLOCK, "blocks_ns": write, "fsync_ns": 4_000_000},
            {"phase": "seq_read", "block_bytes": BLOCK, "blocks_ns": read, "mismatched_blocks": 0},
            {"phase": "rand_read", "io_bytes": 4096, "queue_depth": 1, "ops_ns": ops},
        ],
    }

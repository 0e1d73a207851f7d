"""The local disk at the checkpoint path: sequential write and read, random 4 KiB reads.

Method (docs/metrics.md#local-disk), after fio's direct I/O: one file of a
bounded size written in blocks from a page-aligned buffer (mmap) with O_DIRECT
where the filesystem accepts it, then fsync'd; read back sequentially; then
random 4 KiB reads at queue depth 1 from seeded offsets. Each block's and each
read's nanoseconds are kept raw. Where O_DIRECT is refused (tmpfs, some network
filesystems) the probe falls back to buffered I/O, asks the kernel to drop the
file's cached pages (posix_fadvise DONTNEED after fsync) and says so in `mode`.
Also recorded: the filesystem's capacity (statvfs) and, where readable, the
mount and block device behind the path. Standard library only.
"""

import errno
import mmap
import os
import random
import shutil
import struct
import tempfile

from diligence_harness.clock import now_ns
from diligence_harness.sources import read_text

DEFAULT_BYTES = 1 << 30
DEFAULT_BLOCK = 4 << 20
DEFAULT_SECONDS = 30.0  # per phase
DEFAULT_RANDOM_OPS = 5000
RANDOM_IO = 4096
RANDOM_SEED = 4242
ALIGN = 4096  # mmap buffers are page-aligned; O_DIRECT wants the logical block size


class DiskProbeError(Exception):
    """The path cannot be measured; the message says why."""


def parse_size(text: str) -> int:
    """'4MiB', '1GiB', '512M' (binary), '1GB' (decimal) or plain bytes."""
    units = {
        "": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
        "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40,
        "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "B": 1,
    }  # fmt: skip
    cleaned = text.strip().upper().replace(" ", "")
    number = cleaned.rstrip("KMGTIB")
    unit = cleaned[len(number) :]
    try:
        if unit not in units:
            raise ValueError
        value = int(float(number) * units[unit])
    except ValueError:
        raise ValueError(f"not a size: {text!r} (e.g. 64MiB, 1GiB, 4096)") from None
    if value <= 0:
        raise ValueError(f"not a size: {text!r} (e.g. 64MiB, 1GiB, 4096)")
    return value


def capacity(path: str) -> dict:
    """statvfs of the filesystem holding ``path``, raw fields and bytes."""
    stat = os.statvfs(path)
    return {
        "f_frsize": stat.f_frsize,
        "f_blocks": stat.f_blocks,
        "f_bfree": stat.f_bfree,
        "f_bavail": stat.f_bavail,
        "total_bytes": stat.f_blocks * stat.f_frsize,
        "free_bytes": stat.f_bfree * stat.f_frsize,
        "available_bytes": stat.f_bavail * stat.f_frsize,
    }


def mount_of(path: str, mountinfo: str | None = None) -> dict:
    """The mount holding ``path`` (longest mount point prefix in /proc/self/mountinfo)."""
    text = mountinfo if mountinfo is not None else (read_text("/proc/self/mountinfo") or "")
    real = os.path.realpath(path)
    best: dict = {}
    for line in text.splitlines():
        left, _sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        point = fields[4].replace("\\040", " ")
        inside = real == point or real.startswith(point.rstrip("/") + "/") or point == "/"
        if inside and len(point) >= len(best.get("mount_point", "")):
            best = {"mount_point": point, "dev": fields[2], "fstype": tail[0], "source": tail[1]}
    return best


def block_device(major: int, minor: int, sysfs: str = "/sys") -> dict:
    """The block device ``major:minor`` names in sysfs, the disk it is on, and what it is."""
    link = os.path.join(sysfs, "dev", "block", f"{major}:{minor}")
    if not os.path.exists(link):
        return {}
    real = os.path.realpath(link)
    name = os.path.basename(real)
    disk = name
    if os.path.exists(os.path.join(real, "partition")):
        disk = os.path.basename(os.path.dirname(real))
    base = os.path.join(sysfs, "block", disk)

    def read(*parts: str) -> str | None:
        value = read_text(os.path.join(base, *parts))
        return value.strip() if value is not None else None

    slaves_dir = os.path.join(base, "slaves")
    slaves = sorted(os.listdir(slaves_dir)) if os.path.isdir(slaves_dir) else []
    rotational = read("queue", "rotational")
    return {
        "name": name,
        "disk": disk,
        "model": read("device", "model"),
        "rotational": None if rotational is None else rotational == "1",
        "logical_block_bytes": _int(read("queue", "logical_block_size")),
        "size_bytes": (_int(read("size")) or 0) * 512 or None,
        "slaves": slaves,  # the drives under a RAID or device-mapper volume
    }


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def backing(path: str) -> dict:
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    return {"dev": f"{major}:{minor}", **mount_of(path), "device": block_device(major, minor)}


def _aligned(size: int) -> mmap.mmap:
    """A page-aligned, writable buffer of ``size`` bytes (anonymous mmap)."""
    return mmap.mmap(-1, size)


def _fill(buffer: mmap.mmap, seed: int) -> None:
    """Incompressible content: a filesystem that compresses or dedupes must still write it."""
    generator = random.Random(seed)
    buffer[:] = generator.randbytes(len(buffer))


def _stamp(buffer: mmap.mmap, index: int) -> None:
    buffer[:8] = struct.pack("<Q", index)  # a block read from the wrong place is caught


def _open_write(file: str, direct: bool) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if direct:
        flags |= os.O_DIRECT
    return os.open(file, flags, 0o600)


def _drop_cache(fd: int) -> None:
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def _write_phase(file, total, block, deadline_s, direct) -> dict:
    buffer = _aligned(block)
    _fill(buffer, RANDOM_SEED)
    fd = _open_write(file, direct)
    blocks_ns: list[int] = []
    stopped = "size"
    try:
        started = now_ns()
        for index in range(total // block):
            if blocks_ns and now_ns() - started > deadline_s * 1e9:
                stopped = "time"
                break
            _stamp(buffer, index)
            t0 = now_ns()
            written = os.write(fd, buffer)
            blocks_ns.append(now_ns() - t0)
            if written != block:
                raise DiskProbeError(f"short write: {written} of {block} bytes")
        t0 = now_ns()
        os.fsync(fd)
        fsync_ns = now_ns() - t0
        if not direct:
            _drop_cache(fd)
    finally:
        os.close(fd)
        buffer.close()
    return _phase("seq_write", block, blocks_ns, stopped) | {"fsync_ns": fsync_ns}


def _phase(name: str, block: int, blocks_ns: list[int], stopped: str) -> dict:
    moved = block * len(blocks_ns)
    seconds = sum(blocks_ns) / 1e9
    return {
        "phase": name,
        "block_bytes": block,
        "blocks_ns": blocks_ns,
        "bytes": moved,
        "stopped": stopped,
        "seconds": seconds,
    }


def _open_read(file: str, direct: bool) -> int:
    fd = os.open(file, os.O_RDONLY | (os.O_DIRECT if direct else 0))
    if not direct:
        _drop_cache(fd)
    return fd


def _read_phase(file, blocks, block, deadline_s, direct) -> dict:
    buffer, expected = _aligned(block), _aligned(block)
    _fill(expected, RANDOM_SEED)
    fd = _open_read(file, direct)
    blocks_ns: list[int] = []
    mismatched, stopped = 0, "size"
    try:
        started = now_ns()
        for index in range(blocks):
            if blocks_ns and now_ns() - started > deadline_s * 1e9:
                stopped = "time"
                break
            t0 = now_ns()
            read = os.preadv(fd, [buffer], index * block)
            blocks_ns.append(now_ns() - t0)
            _stamp(expected, index)
            if read != block or buffer[:] != expected[:]:
                mismatched += 1
    finally:
        os.close(fd)
        buffer.close()
        expected.close()
    return _phase("seq_read", block, blocks_ns, stopped) | {"mismatched_blocks": mismatched}


def _random_phase(file, size, ops, deadline_s, direct, seed) -> dict:
    buffer = _aligned(RANDOM_IO)
    fd = _open_read(file, direct)
    if not direct and hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead into the cache
    generator = random.Random(seed)
    slots = max(size // RANDOM_IO, 1)
    ops_ns: list[int] = []
    stopped = "count"
    try:
        started = now_ns()
        for _ in range(ops):
            if ops_ns and now_ns() - started > deadline_s * 1e9:
                stopped = "time"
                break
            offset = generator.randrange(slots) * RANDOM_IO
            t0 = now_ns()
            os.preadv(fd, [buffer], offset)
            ops_ns.append(now_ns() - t0)
    finally:
        os.close(fd)
        buffer.close()
    seconds = sum(ops_ns) / 1e9
    return {
        "phase": "rand_read",
        "io_bytes": RANDOM_IO,
        "queue_depth": 1,
        "seed": seed,
        "ops_ns": ops_ns,
        "ops": len(ops_ns),
        "bytes": RANDOM_IO * len(ops_ns),
        "stopped": stopped,
        "seconds": seconds,
    }


def _direct_works(directory: str) -> tuple[bool, str | None]:
    """Whether this filesystem accepts an aligned O_DIRECT write (tmpfs refuses it)."""
    if not hasattr(os, "O_DIRECT"):
        return False, "O_DIRECT is not available on this platform"
    probe = os.path.join(directory, f".diligence-direct-{os.getpid()}")
    buffer = _aligned(ALIGN)
    try:
        fd = _open_write(probe, True)
        try:
            os.write(fd, buffer)
        finally:
            os.close(fd)
    except OSError as error:
        if error.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
            return False, f"O_DIRECT refused: {os.strerror(error.errno)}"
        raise
    finally:
        buffer.close()
        if os.path.exists(probe):
            os.unlink(probe)
    return True, None


def _summaries(phases: list[dict]) -> None:
    """The client's advisory figures beside the raw timings (the server recomputes them)."""
    for phase in phases:
        seconds = phase["seconds"] + (phase.get("fsync_ns") or 0) / 1e9
        if phase["phase"] == "rand_read":
            ordered = sorted(phase["ops_ns"])
            phase["iops"] = phase["ops"] / seconds if seconds else None
            phase["latency_us"] = (
                {"p50": ordered[len(ordered) // 2] / 1e3, "max": ordered[-1] / 1e3}
                if ordered
                else {}
            )
        else:
            phase["GBps"] = phase["bytes"] / seconds / 1e9 if seconds else None


def run_disk(
    path: str | None,
    *,
    total_bytes: int = DEFAULT_BYTES,
    block_bytes: int = DEFAULT_BLOCK,
    seconds: float = DEFAULT_SECONDS,
    random_ops: int = DEFAULT_RANDOM_OPS,
    seed: int = RANDOM_SEED,
) -> dict:
    """Measure the disk under ``path`` (a fresh temporary directory when None)."""
    if block_bytes < ALIGN or block_bytes % ALIGN:
        raise DiskProbeError(f"the block size must be a multiple of {ALIGN} bytes")
    total = max(total_bytes // block_bytes, 1) * block_bytes
    if path is not None and not os.path.isdir(path):
        raise DiskProbeError(f"--disk-path {path} is not a directory")
    directory = tempfile.mkdtemp(prefix="diligence-disk-", dir=path)
    try:
        space = capacity(directory)
        if space["available_bytes"] < total + (64 << 20):
            raise DiskProbeError(
                f"{space['available_bytes']} bytes free at {directory}: too little for "
                f"{total} bytes (lower --disk-bytes)"
            )
        direct, reason = _direct_works(directory)
        file = os.path.join(directory, "probe.bin")
        write = _write_phase(file, total, block_bytes, seconds, direct)
        written = len(write["blocks_ns"])
        read = _read_phase(file, written, block_bytes, seconds, direct)
        rand = _random_phase(file, written * block_bytes, random_ops, seconds, direct, seed)
        phases = [write, read, rand]
        _summaries(phases)
        return {
            "path": path if path is not None else os.path.dirname(directory),
            "path_given": path is not None,
            "mode": "direct" if direct else "buffered",
            "mode_reason": reason,
            "cache_drop": None if direct else "posix_fadvise DONTNEED after fsync",
            "capacity": space,
            "backing": backing(directory),
            "limits": {
                "bytes": total,
                "block_bytes": block_bytes,
                "seconds_per_phase": seconds,
                "random_ops": random_ops,
            },
            "phases": phases,
        }
    finally:
        shutil.rmtree(directory, ignore_errors=True)

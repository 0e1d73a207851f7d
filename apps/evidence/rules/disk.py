"""The local disk at the checkpoint path: its capacity against the declared NVMe and the
checkpoints' need, its throughput against what local NVMe delivers
(docs/rules/evidence.md#local-disk).

The rates are the server's own, from each block's and each read's nanoseconds
(``apps.evidence.recompute_node``), the capacity from the raw statvfs fields.
"""

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

GROUP = "disk"
TB = 10**12  # declared capacities are decimal terabytes
MIB = 1 << 20
# docs/rules/evidence.md#local-disk: a filesystem shows up to 10 % less than its drives
# (metadata, journal, reserved blocks).
CAPACITY_SLACK = 0.10
# Paths in memory say nothing of a disk.
MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})
# docs/rules/evidence.md#local-disk: SATA III's 6 Gbit/s line rate with 8b/10b coding
# carries at most 600 MB/s; a local NVMe drive reads sequentially at 1 GB/s and more.
SATA_CEILING_GBPS = 0.6
SEQ_READ_GBPS = 1.0
SEQ_WRITE_GBPS = 0.5
RANDOM_P50_US = 500.0  # local flash answers a 4 KiB read in about 100 µs
MIN_GRADED_BYTES = 256 * MIB  # below this, caches and start-up costs dominate

# Stored in English and worded for the reader where shown (apps.evidence.wording).
CAPACITY_TITLE = phrase("Disk capacity at the checkpoint path")
CAPACITY_SOURCE = phrase(
    "statvfs of the filesystem at the checkpoint path; the requirement spec sizes the "
    "checkpoints a resume needs"
)
CAPACITY_MEASURED = phrase("%(total)s TB at %(path)s (%(fstype)s on %(device)s), %(free)s TB free")
DECLARED_TB = phrase("≥ %(declared)s TB declared")
NEEDED_TB = phrase("≥ %(need)s TB for the checkpoints (requirement spec)")
NOTHING_TO_HOLD = phrase("no local NVMe declared and no checkpoint need stated")
CAPACITY_TOLERANCE = phrase("the filesystem may show up to %(slack)s less than the declared drives")
SHORT_OF_DECLARED = phrase(
    "%(total)s TB is short of the declared %(declared)s TB by more than %(slack)s: other "
    "drives, or a smaller one, behind this path."
)
SHORT_OF_NEED = phrase(
    "The checkpoints the requirement spec sizes need %(need)s TB per node; the disk holds "
    "%(total)s TB."
)
FULL_NOW = phrase("Only %(free)s TB of the %(need)s TB the checkpoints need is free now.")
NO_DISK = phrase("No disk measurement in the bundle.")
IN_MEMORY = phrase("The path %(path)s is in memory (%(fstype)s), not on a disk.")
NOT_GRADED = phrase("No local NVMe declared and no checkpoint need stated to hold this to.")

THROUGHPUT_TITLE = phrase("Disk throughput at the checkpoint path")
THROUGHPUT_SOURCE = phrase(
    "fio-style direct I/O: O_DIRECT, fsync'd sequential writes, sequential reads and 4 KiB "
    "random reads at queue depth 1, recomputed from the raw timings; SATA III's 6 Gbit/s "
    "line rate carries at most 600 MB/s"
)
THROUGHPUT_MEASURED = phrase(
    "write %(write)s GB/s, read %(read)s GB/s, random 4 KiB reads P50 %(p50)s µs "
    "(%(iops)s/s), over %(mib)s MiB, %(mode)s I/O"
)
MODES = {"direct": phrase("direct"), "buffered": phrase("buffered")}
THROUGHPUT_EXPECTED = phrase(
    "local NVMe: sequential reads ≥ %(read)s GB/s, writes ≥ %(write)s GB/s, random 4 KiB "
    "reads ≤ %(p50)s µs at the median"
)
THROUGHPUT_TOLERANCE = phrase(
    "sequential reads at or below %(sata)s GB/s (what a SATA link carries) fail; below a "
    "floor warns"
)
TOO_SMALL = phrase(
    "Measured over %(mib)s MiB: at least %(least)s MiB are needed to judge a disk's throughput."
)
SATA_SPEED = phrase(
    "Sequential reads of %(read)s GB/s are no faster than a SATA link carries: not NVMe."
)
SLOW_READ = phrase("Sequential reads of %(read)s GB/s are below the %(floor)s GB/s of local NVMe.")
SLOW_WRITE = phrase("Sequential writes of %(write)s GB/s are below %(floor)s GB/s.")
SLOW_RANDOM = phrase(
    "Random 4 KiB reads take %(p50)s µs at the median: slower than local flash (network or "
    "spinning storage?)."
)
BUFFERED = phrase("Direct I/O was refused here: the page cache may have served some reads.")
READ_BACK = phrase("%(blocks)s blocks read back differ from what was written.")
NO_NVME_DECLARED = phrase("No local NVMe declared to hold these figures to.")


def checks(facts: Facts, context: Context) -> list[Check]:
    declared = _number(context.declared.get("local_nvme_tb"))
    need = _number(context.requirement.get("local_nvme_tb"))
    return [check_capacity(facts.disk, declared, need), check_throughput(facts.disk, declared)]


def _number(value) -> float | None:
    try:
        number = float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None
    return number if number and number > 0 else None


def _tb(value: float) -> str:
    return f"{value:,.2f}"


def _in_memory(disk: dict) -> str | None:
    if disk.get("fstype") in MEMORY_FILESYSTEMS:
        return IN_MEMORY % {"path": disk.get("path") or "?", "fstype": disk["fstype"]}
    return None


def check_capacity(disk: dict | None, declared_tb: float | None, need_tb: float | None) -> Check:
    expected = [DECLARED_TB % {"declared": f"{declared_tb:g}"}] if declared_tb else []
    expected += [NEEDED_TB % {"need": f"{need_tb:g}"}] if need_tb else []
    check = Check(
        "disk.capacity",
        GROUP,
        CAPACITY_TITLE,
        NOT_MEASURED,
        expected="; ".join(expected) or NOTHING_TO_HOLD,
        tolerance=CAPACITY_TOLERANCE % {"slack": f"{CAPACITY_SLACK:.0%}"},
        source=CAPACITY_SOURCE,
    )
    if disk is None:
        check.detail = NO_DISK
        return check
    memory = _in_memory(disk)
    if memory:
        check.detail = memory
        return check
    capacity = disk.get("capacity") or {}
    total = (capacity.get("total_bytes") or 0) / TB
    free = (capacity.get("available_bytes") or 0) / TB
    check.measured = CAPACITY_MEASURED % {
        "total": _tb(total),
        "free": _tb(free),
        "path": disk.get("path") or "?",
        "fstype": disk.get("fstype") or "?",
        "device": disk.get("device") or disk.get("source") or "?",
    }
    if not declared_tb and not need_tb:
        check.detail = NOT_GRADED
        return check
    failures, warnings = [], []
    if declared_tb and total < declared_tb * (1 - CAPACITY_SLACK):
        failures.append(
            SHORT_OF_DECLARED
            % {
                "total": _tb(total),
                "declared": f"{declared_tb:g}",
                "slack": f"{CAPACITY_SLACK:.0%}",
            }
        )
    if need_tb and total < need_tb:
        failures.append(SHORT_OF_NEED % {"need": f"{need_tb:g}", "total": _tb(total)})
    elif need_tb and free < need_tb:
        warnings.append(FULL_NOW % {"free": _tb(free), "need": f"{need_tb:g}"})
    check.status = FAIL if failures else WARN if warnings else PASS
    check.detail = " ".join(failures + warnings)
    return check


def _figure(value, digits: int) -> str:
    return f"{value:,.{digits}f}" if isinstance(value, int | float) else "—"


def check_throughput(disk: dict | None, declared_tb: float | None) -> Check:
    check = Check(
        "disk.throughput",
        GROUP,
        THROUGHPUT_TITLE,
        NOT_MEASURED,
        expected=THROUGHPUT_EXPECTED
        % {
            "read": f"{SEQ_READ_GBPS:g}",
            "write": f"{SEQ_WRITE_GBPS:g}",
            "p50": f"{RANDOM_P50_US:g}",
        },
        tolerance=THROUGHPUT_TOLERANCE % {"sata": f"{SATA_CEILING_GBPS:g}"},
        source=THROUGHPUT_SOURCE,
    )
    if disk is None:
        check.detail = NO_DISK
        return check
    memory = _in_memory(disk)
    if memory:
        check.detail = memory
        return check
    phases = disk.get("phases") or {}
    write, read = phases.get("seq_write") or {}, phases.get("seq_read") or {}
    random_reads = phases.get("rand_read") or {}
    if not read.get("GBps"):
        check.detail = NO_DISK
        return check
    mib = min(write.get("bytes") or 0, read.get("bytes") or 0) / MIB
    check.measured = THROUGHPUT_MEASURED % {
        "write": _figure(write.get("GBps"), 2),
        "read": _figure(read.get("GBps"), 2),
        "p50": _figure(random_reads.get("latency_us_p50"), 0),
        "iops": _figure(random_reads.get("iops"), 0),
        "mib": f"{mib:,.0f}",
        "mode": MODES.get(str(disk.get("mode")), str(disk.get("mode"))),
    }
    failures, warnings = [], []
    if read.get("mismatched_blocks"):
        failures.append(READ_BACK % {"blocks": read["mismatched_blocks"]})
    if mib * MIB < MIN_GRADED_BYTES:
        check.status = FAIL if failures else NOT_MEASURED
        too_small = TOO_SMALL % {"mib": f"{mib:,.0f}", "least": MIN_GRADED_BYTES // MIB}
        check.detail = " ".join([*failures, too_small])
        return check
    if not declared_tb:
        check.status = FAIL if failures else NOT_MEASURED
        check.detail = " ".join([*failures, NO_NVME_DECLARED])
        return check
    read_gbps = read["GBps"]
    if read_gbps <= SATA_CEILING_GBPS:
        failures.append(SATA_SPEED % {"read": f"{read_gbps:.2f}"})
    elif read_gbps < SEQ_READ_GBPS:
        warnings.append(SLOW_READ % {"read": f"{read_gbps:.2f}", "floor": f"{SEQ_READ_GBPS:g}"})
    if (write.get("GBps") or 0) < SEQ_WRITE_GBPS:
        warnings.append(
            SLOW_WRITE % {"write": _figure(write.get("GBps"), 2), "floor": f"{SEQ_WRITE_GBPS:g}"}
        )
    p50 = random_reads.get("latency_us_p50")
    if isinstance(p50, int | float) and p50 > RANDOM_P50_US:
        warnings.append(SLOW_RANDOM % {"p50": f"{p50:,.0f}"})
    if disk.get("mode") != "direct":
        warnings.append(BUFFERED)
    check.status = FAIL if failures else WARN if warnings else PASS
    check.detail = " ".join(failures + warnings)
    return check

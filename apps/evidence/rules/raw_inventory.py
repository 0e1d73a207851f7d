"""Inventory checks from the server's own reading of the raw nvidia-smi output.

One check per topic (UUIDs, attached count, product identity, driver and CUDA,
partitioning, memory held without a process); each carries the server's
findings with the client's finding on the same thing beside it. The status
comes from the server's findings alone (``apps.evidence.inventory``).
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.utils.translation import gettext_noop as _noop

from apps.evidence import gpu_tables
from apps.evidence.inventory import MESSAGES, RANK, SmiGpu, SmiLog, compare, findings
from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

# Stored in English and worded for the reader where shown (apps.evidence.wording).
for _message in (*MESSAGES.values(), gpu_tables.PCI_SOURCE, gpu_tables.CUDA_SOURCE):
    phrase(_message)
UUIDS = phrase("%(count)s UUIDs, %(distinct)s distinct")
ATTACHED = phrase("attached %(attached)s, listed %(listed)s")
PRODUCT = phrase("%(name)s [%(pci_id)s] %(memory)s MiB")
NO_PCI_ID = phrase("no PCI id")
VERSIONS = phrase("driver %(driver)s, CUDA %(cuda)s")
PARTITIONING = phrase("MIG %(mig)s, virtualisation %(virtualisation)s")
MEMORY_USE = phrase("%(used)s MiB used, %(processes)s processes")
EXACT = phrase("exact")


def _gpus(logs: list[SmiLog]) -> list[SmiGpu]:
    return [gpu for log in logs for gpu in log.gpus]


def _joined(parts) -> str | None:
    return "; ".join(sorted(set(parts))) or None


def measured_uuids(logs: list[SmiLog]) -> str | None:
    uuids = [gpu.uuid for gpu in _gpus(logs) if gpu.uuid]
    return UUIDS % {"count": len(uuids), "distinct": len(set(uuids))} if uuids else None


def measured_attached(logs: list[SmiLog]) -> str | None:
    return _joined(
        ATTACHED % {"attached": log.attached_gpus, "listed": len(log.gpus)}
        for log in logs
        if log.attached_gpus is not None
    )


def measured_products(logs: list[SmiLog]) -> str | None:
    return _joined(
        PRODUCT
        % {
            "name": gpu.name or "—",
            "pci_id": gpu.pci_device_id or NO_PCI_ID,
            "memory": gpu.memory_total_mib or "—",
        }
        for gpu in _gpus(logs)
    )


def measured_versions(logs: list[SmiLog]) -> str | None:
    return _joined(
        VERSIONS % {"driver": log.driver_version, "cuda": log.cuda_version}
        for log in logs
        if log.driver_version and log.cuda_version
    )


def measured_partitioning(logs: list[SmiLog]) -> str | None:
    return _joined(
        PARTITIONING
        % {"mig": gpu.mig_mode or "—", "virtualisation": gpu.virtualization_mode or "—"}
        for gpu in _gpus(logs)
        if gpu.mig_mode or gpu.virtualization_mode
    )


def measured_memory_use(logs: list[SmiLog]) -> str | None:
    return _joined(
        MEMORY_USE % {"used": gpu.memory_used_mib, "processes": gpu.process_count}
        for gpu in _gpus(logs)
        if gpu.memory_used_mib is not None
    )


@dataclass(frozen=True)
class Topic:
    """One check: the finding codes it judges and what it reads to say it measured."""

    key: str
    title: str
    codes: tuple[str, ...]
    expected: str
    source: str
    measure: Callable[[list[SmiLog]], str | None]


SOURCE_UUID = phrase(
    "NVIDIA nvidia-smi documentation: a UUID identifies one physical GPU; the attached GPU "
    "count is how many GPUs the driver sees"
)
SOURCE_PARTITION = phrase(
    "NVIDIA Multi-Instance GPU and Virtual GPU user guides: a MIG instance or a vGPU is a slice "
    "of a card"
)
SOURCE_PROCESSES = phrase("NVIDIA NVML documentation: processes of other containers are not listed")

# Titles are stored in English, as every check's, and translated where they are shown.
TOPICS = (
    Topic(
        "identity.smi_uuids",
        _noop("Every GPU has its own UUID (raw nvidia-smi output)"),
        ("INV-DUP-UUID",),
        phrase("no UUID listed twice"),
        SOURCE_UUID,
        measured_uuids,
    ),
    Topic(
        "identity.smi_attached",
        _noop("The attached GPU count matches the GPUs listed"),
        ("INV-ATTACHED",),
        phrase("the attached GPU count equals the number of GPUs listed"),
        SOURCE_UUID,
        measured_attached,
    ),
    Topic(
        "identity.smi_product",
        _noop("Name, PCI device id and memory name one card"),
        ("INV-SKU-NAME", "INV-SKU-MEMORY", "INV-SKU-UNCONFIRMED", "INV-SMI-UNREADABLE"),
        phrase("the PCI device id's card, its name and its memory"),
        gpu_tables.PCI_SOURCE,
        measured_products,
    ),
    Topic(
        "versions.smi_driver_cuda",
        _noop("Driver and CUDA versions can exist together"),
        ("INV-DRIVER-CUDA", "INV-CUDA-UNKNOWN"),
        phrase("the driver's branch reports this CUDA version"),
        gpu_tables.CUDA_SOURCE,
        measured_versions,
    ),
    Topic(
        "identity.smi_partitioning",
        _noop("Whole cards: no MIG instance or vGPU unless declared"),
        ("INV-MIG", "INV-VIRT"),
        phrase("MIG off and no vGPU, or slices declared in the offer"),
        SOURCE_PARTITION,
        measured_partitioning,
    ),
    Topic(
        "identity.smi_unlisted_memory",
        _noop("No device memory in use without a listed process"),
        ("INV-UNLISTED-MEMORY",),
        phrase("idle memory, or a process for the memory in use"),
        SOURCE_PROCESSES,
        measured_memory_use,
    ),
)
NO_OUTPUT = phrase("The bundle carries no nvidia-smi -q -x output.")


def checks(facts: Facts, context: Context) -> list[Check]:
    """One check per topic; its status comes from the server's findings alone."""
    logs = facts.raw_smi
    if not logs:
        return [_check(topic, [], None, NO_OUTPUT) for topic in TOPICS]
    rows = compare(findings(logs, context.declared), facts.client_findings)
    readable = [log for log in logs if log.error is None]
    return [
        _check(topic, [r for r in rows if r["code"] in topic.codes], topic.measure(readable))
        for topic in TOPICS
    ]


def _check(topic: Topic, rows: list[dict], measured: str | None, detail: str = "") -> Check:
    severities = [r["severity"] for r in rows if r["severity"]]
    worst = max(severities, key=RANK.__getitem__, default=None)
    status = worst if worst in (FAIL, WARN) else PASS if measured is not None else NOT_MEASURED
    # Stored in English like every check's detail; the evidence page words each finding anew.
    problems = [MESSAGES[r["text"]] % r["params"] for r in rows if r["severity"] in (FAIL, WARN)]
    return Check(
        topic.key,
        topic.key.split(".", 1)[0],
        topic.title,
        status,
        measured=measured,
        expected=topic.expected,
        tolerance=EXACT,
        source=topic.source,
        detail=detail or " ".join(problems),
        findings=rows,
    )

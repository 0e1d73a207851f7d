"""The server's own reading of the raw ``nvidia-smi -q -x`` output and the findings it makes.

The harness records inventory findings of its own, but a bundle comes from the vendor's
machine: the server re-derives each finding from the raw XML the harness captured and
judges with those alone (docs/rules/evidence.md#bundle-handling; the checks are in
``rules/raw_inventory.py``). Where the client's findings disagree, both are kept on the
check and shown on the evidence page; a check's status comes from the server's findings
only, so the same bundle uploaded without the client's findings gets the same verdict.

Pure functions over parsed data. The XML is read with the standard library:
expat bounds entity expansion and ElementTree fetches no external entity, and
entity declarations are refused outright all the same, since the capture comes
from the machine under test (as the harness's own parser does).
"""

import re
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _noop

from apps.evidence import gpu_tables
from apps.evidence.rules import FAIL, WARN

INFO = "info"
RANK = {INFO: 0, WARN: 1, FAIL: 2}

# What nvidia-smi prints where it has no value: read as unknown, never as a value.
_PLACEHOLDER = re.compile(
    r"\[?(n/?a|not found|not supported|not available|unknown( error)?|"
    r"insufficient permissions|redacted)\]?",
    re.IGNORECASE,
)
_VERSION = re.compile(r"\d+(\.\d+)*")
_CUDA = re.compile(r"(\d+)\.(\d+)(\.\d+)?")
_PCI_ID = re.compile(r"(?:0x)?([0-9a-f]{4})([0-9a-f]{4})", re.IGNORECASE)
_BUS_ID = re.compile(r"(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])")
_MIB = re.compile(r"(\d+)\s*MiB")
NVIDIA_VENDOR = "10de"


@dataclass(frozen=True)
class SmiGpu:
    """One ``<gpu>`` element, as printed (units in the names)."""

    uuid: str | None
    bus_id: str | None
    name: str | None
    pci_device_id: str | None  # "0x2684"; None where absent, zero, redacted or not NVIDIA's
    pci_device_id_raw: str | None
    memory_total_mib: int | None
    memory_used_mib: int | None
    process_count: int
    mig_mode: str | None
    mig_instances: int
    virtualization_mode: str | None

    @property
    def subject(self) -> str | None:
        return self.uuid or self.bus_id


@dataclass(frozen=True)
class SmiLog:
    """One ``nvidia-smi -q -x`` artifact; ``error`` says why it could not be read."""

    artifact: str
    driver_version: str | None = None  # as printed, placeholders included
    cuda_version: str | None = None  # None where the element is absent (drivers before 410)
    attached_gpus: int | None = None
    gpus: tuple[SmiGpu, ...] = ()
    error: str | None = None


def bus_id(text: str | None) -> str | None:
    """'00000000:07:00.0' (NVML) -> '0000:07:00.0' (sysfs, lspci), lower case."""
    match = _BUS_ID.fullmatch(text or "")
    if not match:
        return (text or "").strip().lower() or None
    domain, bus, device, function = match.groups()
    return f"{int(domain or '0', 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{function}"


def _printed(element: ET.Element, path: str) -> str | None:
    found = element.find(path)
    text = " ".join((found.text or "").split()) if found is not None else ""
    return text or None


def _value(element: ET.Element, path: str) -> str | None:
    text = _printed(element, path)
    return None if text is None or _PLACEHOLDER.fullmatch(text) else text


def _mib(element: ET.Element, path: str) -> int | None:
    match = _MIB.fullmatch(_value(element, path) or "")
    return int(match[1]) if match else None


def pci_device_id(raw: str | None) -> str | None:
    """NVML packs device and vendor as 0xDDDDVVVV ('268410DE'); returns '0x2684'."""
    match = _PCI_ID.fullmatch(raw or "")
    if not match or match[2].lower() != NVIDIA_VENDOR or match[1] == "0000":
        return None
    return "0x" + match[1].lower()


def _gpu(gpu: ET.Element) -> SmiGpu:
    raw_pci = _printed(gpu, "pci/pci_device_id")
    return SmiGpu(
        uuid=_value(gpu, "uuid"),
        bus_id=bus_id(gpu.get("id") or _value(gpu, "pci/pci_bus_id")),
        name=_value(gpu, "product_name"),
        pci_device_id=pci_device_id(raw_pci),
        pci_device_id_raw=raw_pci,
        memory_total_mib=_mib(gpu, "fb_memory_usage/total"),
        memory_used_mib=_mib(gpu, "fb_memory_usage/used"),
        process_count=len(gpu.findall("processes/process_info")),
        mig_mode=_value(gpu, "mig_mode/current_mig"),
        mig_instances=len(gpu.findall("mig_devices/mig_device")),
        virtualization_mode=_value(gpu, "gpu_virtualization_mode/virtualization_mode"),
    )


def parse(name: str, data: bytes) -> SmiLog | None:
    """One XML artifact; None when it is XML but not an nvidia-smi log."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return SmiLog(name, error="not UTF-8 text")
    if "<!ENTITY" in text:
        return SmiLog(name, error="entity declarations are not allowed")
    try:
        root = ET.fromstring(text)  # noqa: S314 - entities refused above; expat bounds the rest
    except ET.ParseError as error:
        return SmiLog(name, error=f"not XML: {error}")
    if root.tag != "nvidia_smi_log":
        return None
    attached = _value(root, "attached_gpus")
    return SmiLog(
        artifact=name,
        driver_version=_printed(root, "driver_version"),
        cuda_version=_printed(root, "cuda_version"),
        attached_gpus=int(attached) if attached and attached.isdigit() else None,
        gpus=tuple(_gpu(gpu) for gpu in root.findall("gpu")),
    )


def read_artifacts(artifacts: list[tuple[str, bytes]]) -> list[SmiLog]:
    """The nvidia-smi logs among (name, bytes) XML artifacts, readable or not."""
    logs = [parse(name, data) for name, data in artifacts]
    return [log for log in logs if log is not None]


# --- findings ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One thing the server found; ``text`` names its message in ``MESSAGES``."""

    code: str
    severity: str
    subject: str | None
    text: str
    params: dict = field(default_factory=dict)


# Messages are stored by key and worded when shown, in the reader's language.
MESSAGES = {
    "uuid_duplicate": _noop(
        "%(count)s GPUs share the UUID %(uuid)s: a UUID names one physical GPU, so a card is "
        "listed twice."
    ),
    "attached_more": _noop(
        "nvidia-smi reports %(attached)s GPUs attached but lists only %(listed)s: the output was "
        "trimmed, or GPUs are hidden from this view."
    ),
    "attached_fewer": _noop(
        "nvidia-smi lists %(listed)s GPUs but reports only %(attached)s attached: the listing "
        "holds GPUs the driver does not have (repeated or added by hand)."
    ),
    "name_other_product": _noop(
        "The name %(name)s claims %(claimed)s, but PCI device id %(pci_id)s is %(actual)s: a "
        "name alone never identifies a card."
    ),
    "name_not_of_pci": _noop(
        "PCI device id %(pci_id)s is %(actual)s, but the name %(name)s does not name it."
    ),
    "pci_missing": _noop(
        "No usable PCI device id (printed: %(raw)s): the name %(name)s alone does not identify "
        "the card."
    ),
    "pci_unknown": _noop(
        "PCI device id %(pci_id)s is not in the table of known cards: the name %(name)s cannot "
        "be confirmed."
    ),
    "memory_off": _noop(
        "%(memory)s MiB does not fit %(product)s (%(marketed)s GB, %(low)s–%(high)s MiB as the "
        "driver reports it)."
    ),
    "unreadable": _noop(
        "The nvidia-smi output %(artifact)s cannot be read (%(reason)s): the server cannot "
        "confirm the inventory from it."
    ),
    "driver_too_old": _noop(
        "Driver %(driver)s cannot report CUDA %(cuda)s: that CUDA version needs a driver of "
        "branch %(branch)s or newer (%(minimum)s)."
    ),
    "driver_too_new": _noop(
        "Driver %(driver)s cannot report CUDA %(cuda)s: nvidia-smi reports the newest CUDA the "
        "driver supports, and from driver branch %(branch)s that is CUDA %(next)s or newer."
    ),
    "cuda_unknown": _noop(
        "nvidia-smi printed %(value)s as the CUDA version: unknown, not a pass (the driver's CUDA "
        "library may be missing or broken)."
    ),
    "driver_unknown": _noop(
        "nvidia-smi printed %(value)s as the driver version: unknown, not a pass."
    ),
    "mig_whole_declared": _noop(
        "MIG is enabled (%(instances)s instances): the offer declares whole cards, but a process "
        "sees one MIG instance, not the card."
    ),
    "mig_undeclared": _noop(
        "MIG is enabled (%(instances)s instances): a process sees one instance, not the whole card."
    ),
    "mig_declared": _noop("MIG is enabled (%(instances)s instances), as the offer declares."),
    "vgpu_whole_declared": _noop(
        "The GPU is virtualised (mode %(mode)s): a vGPU is a slice of a card shared with others, "
        "and the offer declares whole cards."
    ),
    "vgpu": _noop(
        "The GPU is virtualised (mode %(mode)s): a vGPU is a slice of a card shared with others."
    ),
    "unlisted_memory": _noop(
        "%(used)s MiB of device memory is in use and no process is listed: another container or "
        "tenant is using the card (NVML lists only the processes it can see)."
    ),
}

# Whole card: no virtualisation, or the card passed through whole to a virtual machine.
WHOLE_CARD_MODES = {"none", "pass through", "passthrough"}
# An offer that names MIG profiles, MIG or vGPU in its model declares slices, not cards.
_DECLARED_SLICES = re.compile(r"\bmig\b|\b\d+g\.\d+gb\b|\bvgpu\b|\bgrid\b", re.IGNORECASE)


def declared_partitioning(declared: dict) -> str | None:
    """'whole' or 'slices' as the offer declares them; None without a declaration."""
    model = str(declared.get("accelerator_model") or "")
    if _DECLARED_SLICES.search(model):
        return "slices"
    stated = ("accelerator_model", "cards_per_node", "memory_per_card_gib")
    return "whole" if any(declared.get(k) for k in stated) else None


def _finding(code: str, severity: str, subject: str | None, text: str, **params) -> Finding:
    return Finding(code, severity, subject, text, params)


def document_findings(log: SmiLog) -> list[Finding]:
    uuids = [gpu.uuid for gpu in log.gpus if gpu.uuid]
    found = [
        _finding("INV-DUP-UUID", FAIL, None, "uuid_duplicate", uuid=u, count=uuids.count(u))
        for u in sorted({u for u in uuids if uuids.count(u) > 1})
    ]
    attached, listed = log.attached_gpus, len(log.gpus)
    if attached is not None and attached > listed:
        found.append(
            _finding("INV-ATTACHED", WARN, None, "attached_more", attached=attached, listed=listed)
        )
    elif attached is not None and attached < listed:
        found.append(
            _finding("INV-ATTACHED", FAIL, None, "attached_fewer", attached=attached, listed=listed)
        )
    return found


def product_findings(gpu: SmiGpu) -> list[Finding]:
    """Name, PCI device id and memory must name one card; the name alone never does."""
    found = []
    claim, actual = gpu_tables.claim_of(gpu.name), gpu_tables.by_pci_id(gpu.pci_device_id)
    name, subject, pci_id = gpu.name or "—", gpu.subject, gpu.pci_device_id
    if actual is not None and claim is None and gpu.name:
        found.append(
            _finding(
                "INV-SKU-NAME",
                FAIL,
                subject,
                "name_not_of_pci",
                pci_id=pci_id,
                actual=actual.name,
                name=name,
            )
        )
    elif actual is not None and claim is not None and not claim.allows(actual):
        found.append(
            _finding(
                "INV-SKU-NAME",
                FAIL,
                subject,
                "name_other_product",
                name=name,
                claimed=claim.label,
                pci_id=pci_id,
                actual=actual.name,
            )
        )
    elif actual is None and pci_id is None:
        raw = gpu.pci_device_id_raw or "—"
        found.append(
            _finding("INV-SKU-UNCONFIRMED", WARN, subject, "pci_missing", raw=raw, name=name)
        )
    elif actual is None:
        found.append(
            _finding("INV-SKU-UNCONFIRMED", WARN, subject, "pci_unknown", pci_id=pci_id, name=name)
        )
    # The memory must fit the card the PCI id names; without one, the card the name claims.
    products = (actual,) if actual else _claimed_products(claim)
    label = actual.name if actual else (claim.label if claim else "")
    if products and gpu.memory_total_mib is not None and not _vgpu(gpu):
        found += _memory_findings(gpu.memory_total_mib, products, label, subject)
    return found


def _memory_findings(memory: int, products, label: str, subject: str | None) -> list[Finding]:
    sizes = sorted({size for product in products for size in product.memory_gb})
    windows = [gpu_tables.memory_window_mib(size) for size in sizes]
    if any(low <= memory <= high for low, high in windows):
        return []
    return [
        _finding(
            "INV-SKU-MEMORY", FAIL, subject, "memory_off",
            memory=memory,
            product=label,
            marketed=" / ".join(str(size) for size in sizes),
            low=min(low for low, _high in windows),
            high=max(high for _low, high in windows),
        )
    ]  # fmt: skip


def _claimed_products(claim: gpu_tables.Claim | None) -> tuple:
    if claim is None:
        return ()
    return (claim.product,) if claim.product else gpu_tables.family_products(claim.family)


def _mode(gpu: SmiGpu) -> str:
    return " ".join((gpu.virtualization_mode or "none").lower().replace("-", " ").split())


def _vgpu(gpu: SmiGpu) -> bool:
    return _mode(gpu) not in WHOLE_CARD_MODES or "grid" in (gpu.name or "").lower()


def partition_findings(gpu: SmiGpu, partitioning: str | None) -> list[Finding]:
    found = []
    if (gpu.mig_mode or "").lower() == "enabled":
        text, severity = {
            "whole": ("mig_whole_declared", FAIL),
            "slices": ("mig_declared", INFO),
            None: ("mig_undeclared", WARN),
        }[partitioning]
        found.append(_finding("INV-MIG", severity, gpu.subject, text, instances=gpu.mig_instances))
    if _vgpu(gpu) and partitioning != "slices":
        text, severity = ("vgpu_whole_declared", FAIL) if partitioning else ("vgpu", WARN)
        mode = gpu.virtualization_mode or gpu.name or "—"
        found.append(_finding("INV-VIRT", severity, gpu.subject, text, mode=mode))
    return found


# Idle cards show the driver's own few MiB used; above this, something holds memory.
UNLISTED_MEMORY_MIB, UNLISTED_MEMORY_FRACTION = 256, 0.02


def unlisted_memory_findings(gpu: SmiGpu) -> list[Finding]:
    used, total = gpu.memory_used_mib, gpu.memory_total_mib or 0
    if used is None or gpu.process_count:
        return []
    if used <= max(UNLISTED_MEMORY_MIB, total * UNLISTED_MEMORY_FRACTION):
        return []
    return [_finding("INV-UNLISTED-MEMORY", WARN, gpu.subject, "unlisted_memory", used=used)]


def _version(text: str | None) -> tuple[int, ...] | None:
    return tuple(int(p) for p in text.split(".")) if text and _VERSION.fullmatch(text) else None


def version_findings(log: SmiLog) -> list[Finding]:
    """nvidia-smi's CUDA version is the newest the driver supports, so the driver's branch
    must lie between that version's minimum and the next version's. Betas of a branch come
    before the toolkit's listed minimum and report the same CUDA version: only branches are
    compared."""
    found = []
    driver = _version(log.driver_version)
    if log.driver_version is not None and driver is None:
        found.append(
            _finding("INV-DRIVER-CUDA", WARN, None, "driver_unknown", value=log.driver_version)
        )
    if log.cuda_version is None:
        return found
    cuda_match = _CUDA.fullmatch(log.cuda_version)
    if cuda_match is None:
        unknown = _finding("INV-CUDA-UNKNOWN", WARN, None, "cuda_unknown", value=log.cuda_version)
        return [*found, unknown]
    if driver is None:
        return found
    below, above = gpu_tables.cuda_bounds((int(cuda_match[1]), int(cuda_match[2])))
    pair = {"driver": log.driver_version, "cuda": log.cuda_version}
    if below is not None:
        minimum = gpu_tables.CUDA_MINIMUM_DRIVER[below]
        branch = gpu_tables.driver_branch(minimum)
        if driver[0] < branch:
            found.append(
                _finding(
                    "INV-DRIVER-CUDA", FAIL, None, "driver_too_old",
                    **pair, minimum=minimum, branch=branch,
                )
            )  # fmt: skip
    if above is not None:
        branch = gpu_tables.driver_branch(gpu_tables.CUDA_MINIMUM_DRIVER[above])
        if driver[0] >= branch:
            found.append(
                _finding(
                    "INV-DRIVER-CUDA", FAIL, None, "driver_too_new",
                    **pair, next=f"{above[0]}.{above[1]}", branch=branch,
                )
            )  # fmt: skip
    return found


def findings(logs: list[SmiLog], declared: dict) -> list[Finding]:
    partitioning = declared_partitioning(declared)
    found = []
    for log in logs:
        if log.error is not None:
            params = {"artifact": log.artifact or "—", "reason": log.error}
            found.append(Finding("INV-SMI-UNREADABLE", WARN, None, "unreadable", params))
            continue
        found += document_findings(log) + version_findings(log)
        for gpu in log.gpus:
            found += product_findings(gpu)
            found += partition_findings(gpu, partitioning)
            found += unlisted_memory_findings(gpu)
    return found


# --- the client's findings beside the server's ------------------------------------------------

# The harness's finding ids that mean what the server's do; others are the harness's own.
COMPARED = {
    "INV-DUP-UUID",
    "INV-ATTACHED",
    "INV-SKU-NAME",
    "INV-SKU-MEMORY",
    "INV-MIG",
    "INV-VIRT",
    # The harness's own check of the pair (harness/diligence_harness/driver_cuda.py).
    "INV-DRIVER-CUDA",
    "INV-CUDA-UNKNOWN",
}
CLIENT_MESSAGE_CHARS = 300


def _key(code: str, subject) -> tuple[str, str]:
    return code, str(subject or "").lower()


def compare(server: list[Finding], client: list[dict]) -> list[dict]:
    """Each server finding with the client's finding on the same thing, if any, then the
    client's findings the server did not make. ``severity`` None: the server found nothing."""
    by_key: dict[tuple[str, str], dict] = {}
    for item in client:
        if isinstance(item, dict) and item.get("id") in COMPARED:
            by_key.setdefault(_key(item["id"], item.get("subject")), item)
    rows: list[dict] = []
    matched = set()
    for finding in server:
        key = _key(finding.code, finding.subject)
        theirs = by_key.get(key)
        matched.add(key)
        rows.append(asdict(finding) | {"client": _client(theirs), "compared": key[0] in COMPARED})
    for key, theirs in by_key.items():
        if key not in matched:
            rows.append(
                {
                    "code": key[0],
                    "severity": None,
                    "subject": theirs.get("subject"),
                    "text": "",
                    "params": {},
                    "client": _client(theirs),
                    "compared": True,
                }
            )
    return rows


def _client(item: dict | None) -> dict | None:
    if item is None:
        return None
    message = str(item.get("message") or "")[:CLIENT_MESSAGE_CHARS]
    return {"severity": item.get("severity"), "message": message}


def disagrees(row: dict) -> bool:
    """The client and the server judged the same thing differently."""
    theirs = (row.get("client") or {}).get("severity")
    return bool(row.get("compared")) and theirs != row.get("severity")


def describe(row: dict) -> str:
    """A server finding in the reader's language."""
    template = MESSAGES.get(row.get("text") or "")
    return gettext(template) % row.get("params", {}) if template else ""


def page_rows(checks: list[dict]) -> list[dict]:
    """Every check's findings, worded for the evidence page, disagreements marked."""
    return [
        row | {"message": describe(row), "disagrees": disagrees(row)}
        for check in checks
        for row in check.get("findings") or []
    ]

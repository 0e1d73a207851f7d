"""GPU inventory from independent sources, joined on UUID / PCI bus id, with findings.

Sources (docs/metrics.md#inventory-sources):
- NVML through `nvidia-smi -q -x` (live, or a captured file) and through
  nvidia-ml-py when installed;
- the CUDA runtime through torch.cuda;
- PCI config space through sysfs, `lspci -nn -D` and /proc/driver/nvidia.
Join on UUID, else PCI bus id — never on index: CUDA orders devices
FASTEST_FIRST by default and NVML in PCI order. Every disagreement is a
finding; where they disagree the runtime's answer is what software will see
(docs/rules/evidence.md#identity: the runtime wins).
"""

from diligence_harness import skus
from diligence_harness.driver_cuda import MESSAGES, version_findings
from diligence_harness.findings import finding as make_finding
from diligence_harness.nvsmi import parse_nvlink_status, parse_topology


def finding(check_id: str, severity: str, subject: str | None, message: str, **evidence) -> dict:
    return make_finding(check_id, severity, subject, message, step="inventory", **evidence)


def _key(device: dict) -> tuple:
    return ((device.get("uuid") or "").lower(), device.get("pci_bus_id") or "")


def join_devices(nvml: list[dict], cuda: list[dict], pci: list[dict]) -> list[dict]:
    """One row per physical GPU with each source's record (or None)."""
    rows: list[dict] = []

    def find_row(device: dict) -> dict | None:
        uuid, bus = _key(device)
        for row in rows:
            if uuid and row["uuid"] and row["uuid"].lower() == uuid:
                return row
        for row in rows:
            if bus and row["pci_bus_id"] == bus:
                return row
        return None

    for source, devices in (("nvml", nvml), ("cuda", cuda), ("pci", pci)):
        for device in devices:
            row = find_row(device)
            if row is None or row[source] is not None:
                row = {"uuid": None, "pci_bus_id": None, "nvml": None, "cuda": None, "pci": None}
                rows.append(row)
            row[source] = device
            row["uuid"] = row["uuid"] or device.get("uuid")
            row["pci_bus_id"] = row["pci_bus_id"] or device.get("pci_bus_id")
    return rows


def _check_counts(nvml, cuda, pci, shims, available: dict) -> list[dict]:
    counts = {"nvml": len(nvml), "cuda": len(cuda), "pci": len(pci)}
    present = {name: n for name, n in counts.items() if available.get(name)}
    if len(set(present.values())) > 1:
        return [
            finding(
                "INV-COUNT",
                "warn",
                None,
                "sources report different GPU counts",
                counts=present,
                cuda_visible_devices=(shims or {}).get("cuda_visible_devices"),
            )
        ]
    return []


def _check_row(row: dict, available: dict) -> list[dict]:
    found, subject = [], row["uuid"] or row["pci_bus_id"]
    nvml, cuda, pci = row["nvml"], row["cuda"], row["pci"]
    for source in ("nvml", "cuda", "pci"):
        if available.get(source) and row[source] is None:
            others = [s for s in ("nvml", "cuda", "pci") if row[s] is not None]
            found.append(
                finding(
                    "INV-UNMATCHED",
                    "warn",
                    subject,
                    f"GPU seen by {', '.join(others)} but not by {source}",
                    missing_from=source,
                )
            )
    if nvml and cuda:
        found += _compare_nvml_cuda(subject, nvml, cuda)
    if nvml and pci:
        for field in ("pci_device_id", "pci_subsystem_device_id", "pci_subsystem_vendor_id"):
            if nvml.get(field) and pci.get(field) and nvml[field] != pci[field]:
                found.append(
                    finding(
                        "INV-PCI-ID",
                        "fail",
                        subject,
                        f"NVML {field} differs from PCI config space",
                        field=field,
                        nvml=nvml[field],
                        pci=pci[field],
                    )
                )
    if nvml:
        found += _check_nvml_record(subject, nvml)
    return found


def _compare_nvml_cuda(subject: str, nvml: dict, cuda: dict) -> list[dict]:
    found = []
    if nvml.get("name") and cuda.get("name") and nvml["name"] != cuda["name"]:
        found.append(
            finding(
                "INV-NAME",
                "fail",
                subject,
                "NVML and the CUDA runtime name the GPU differently",
                nvml=nvml["name"],
                cuda=cuda["name"],
            )
        )
    nvml_mib, cuda_mib = nvml.get("memory_total_mib"), cuda.get("memory_total_mib")
    if nvml_mib and cuda_mib:
        # The runtime sees total minus the driver's reservation; more than NVML claims,
        # or much less than NVML minus its reservation, means one of them is not honest.
        reserved = nvml.get("memory_reserved_mib") or 0
        low, high = (nvml_mib - reserved) * 0.97, nvml_mib * (1 + skus.MEMORY_TOLERANCE)
        if not low <= cuda_mib <= high:
            found.append(
                finding(
                    "INV-MEMORY",
                    "fail",
                    subject,
                    "NVML and the CUDA runtime report different memory sizes",
                    nvml_mib=nvml_mib,
                    cuda_mib=cuda_mib,
                    nvml_reserved_mib=reserved,
                )
            )
    return found


def _usable_pci_id(nvml: dict) -> str | None:
    """The device id, unless absent, zero or not NVIDIA's (some VMs print 000000DE)."""
    pci = nvml.get("pci_device_id")
    if not pci or pci == "0x0000" or nvml.get("pci_vendor_id") not in (None, "0x10de"):
        return None
    return pci


def _check_nvml_record(subject: str, nvml: dict) -> list[dict]:
    found = []
    pci = _usable_pci_id(nvml)
    sku = skus.lookup(pci)
    named = skus.ids_named(nvml.get("name"))
    # A name alone never identifies a card: the PCI id must be one of the card the name
    # claims (a renamed L4 claiming H200), and a known PCI id's card must be the one named.
    if nvml.get("name") and pci and (sku or named) and pci not in named:
        claimed = sorted({s["family"] for s in named.values()})
        found.append(
            finding(
                "INV-SKU-NAME",
                "fail",
                subject,
                "the name does not fit the PCI device id",
                name=nvml["name"],
                pci_device_id=pci,
                expected_family=sku["family"] if sku else None,
                name_claims=claimed,
            )
        )
    expected = sku["memory_mib"] if sku else None
    actual = nvml.get("memory_total_mib")
    off = expected and actual and abs(actual - expected) > expected * skus.MEMORY_TOLERANCE
    if off and nvml.get("mig_mode_current") != "Enabled":
        assert sku is not None  # the expected size came from it
        found.append(
            finding(
                "INV-SKU-MEMORY",
                "fail",
                subject,
                "memory size does not fit the PCI device id",
                memory_total_mib=actual,
                expected_mib=expected,
                expected_family=sku["family"],
            )
        )
    found += _mode_findings(subject, nvml)
    return found


def _mode_findings(subject: str, nvml: dict) -> list[dict]:
    found = []
    if nvml.get("mig_mode_current") == "Enabled":
        found.append(
            finding(
                "INV-MIG",
                "info",
                subject,
                "MIG is enabled: a process sees one instance, not the whole GPU",
                mig_devices=len(nvml.get("mig_devices") or []),
            )
        )
    virt = nvml.get("virtualization_mode") or ""
    # nvidia-smi prints "Pass-Through": the whole card handed to a VM, which is not a vGPU.
    mode = virt.upper().replace("-", "_").replace(" ", "_")
    if mode not in ("", "NONE", "PASS_THROUGH", "PASSTHROUGH") or "GRID" in (
        nvml.get("name") or ""
    ):
        found.append(finding("INV-VIRT", "warn", subject, "GPU is virtualised (vGPU)", mode=virt))
    power = nvml.get("power") or {}
    limit, default = power.get("enforced_limit_w"), power.get("default_limit_w")
    if limit and default and limit < default * 0.98:
        found.append(
            finding(
                "INV-POWER-CAP",
                "warn",
                subject,
                "power limit is below the board default (a capped rental)",
                enforced_limit_w=limit,
                default_limit_w=default,
            )
        )
    if nvml.get("process_count"):
        found.append(
            finding(
                "INV-BUSY",
                "info",
                subject,
                "processes were already running on the GPU",
                process_count=nvml["process_count"],
            )
        )
    return found


def _check_nvml_document(doc: dict) -> list[dict]:
    found = []
    uuids = [g["uuid"] for g in doc["gpus"] if g.get("uuid")]
    duplicates = sorted({u for u in uuids if uuids.count(u) > 1})
    if duplicates:
        found.append(
            finding("INV-DUP-UUID", "fail", None, "several GPUs share a UUID", uuids=duplicates)
        )
    printed = doc.get("printed") or {}
    for check_id, severity, key, params in version_findings(
        printed.get("driver_version"), printed.get("cuda_version")
    ):
        found.append(finding(check_id, severity, None, MESSAGES[key] % params, **params))
    if doc.get("attached_gpus") is not None and doc["attached_gpus"] != len(doc["gpus"]):
        found.append(
            finding(
                "INV-ATTACHED",
                "warn",
                None,
                "attached_gpus differs from the GPUs listed (trimmed capture or hidden GPUs)",
                attached_gpus=doc["attached_gpus"],
                listed=len(doc["gpus"]),
            )
        )
    return found


def _check_shims(shims: dict | None) -> list[dict]:
    if not shims:
        return []
    found = []
    if shims.get("ld_preload_env"):
        found.append(
            finding(
                "INV-LD-PRELOAD",
                "warn",
                None,
                "LD_PRELOAD is set: a shim can rewrite what NVML and CUDA report",
                ld_preload=shims["ld_preload_env"],
            )
        )
    if ((shims.get("ld_so_preload") or {}).get("content") or "").strip():
        found.append(
            finding(
                "INV-LD-SO-PRELOAD",
                "warn",
                None,
                "/etc/ld.so.preload is not empty",
                sha256=shims["ld_so_preload"]["sha256"],
            )
        )
    return found


def build_inventory(
    *,
    nvml_doc: dict | None,
    cuda: list[dict] | None,
    pci: list[dict] | None,
    shims: dict | None = None,
    topology_text: str | None = None,
    nvlink_text: str | None = None,
) -> tuple[dict, list[dict]]:
    """Pure join-and-check over already collected sources; None means the source was absent."""
    nvml_gpus = (nvml_doc or {}).get("gpus", [])
    available = {"nvml": nvml_doc is not None, "cuda": cuda is not None, "pci": bool(pci)}
    rows = join_devices(nvml_gpus, cuda or [], pci or [])
    findings = _check_counts(nvml_gpus, cuda or [], pci or [], shims, available)
    findings += _check_nvml_document(nvml_doc) if nvml_doc else []
    for row in rows:
        findings += _check_row(row, available)
    findings += _check_shims(shims)
    if not rows:
        findings.append(finding("INV-NO-GPU", "info", None, "no GPU was seen by any source"))
    inventory = {
        "driver": {
            "driver_version": (nvml_doc or {}).get("driver_version"),
            "cuda_driver_version": (nvml_doc or {}).get("cuda_version"),
            "nvidia_smi_dtd": (nvml_doc or {}).get("dtd_version"),
            "attached_gpus": (nvml_doc or {}).get("attached_gpus"),
        },
        "gpu_count": {"nvml": len(nvml_gpus), "cuda": len(cuda or []), "pci": len(pci or [])},
        "gpus": rows,
        "topology": parse_topology(topology_text) if topology_text else None,
        "nvlink": parse_nvlink_status(nvlink_text) if nvlink_text else None,
        "shims": shims,
    }
    return inventory, findings

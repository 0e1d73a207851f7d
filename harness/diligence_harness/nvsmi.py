"""Parsers for captured `nvidia-smi` output: `-q -x` XML, `topo -m`, `nvlink -s`.

The XML schema changed across driver generations (DTD v9..v13 in the test
fixtures): `power_readings` became `gpu_power_readings`, `power_limit` became
`current_power_limit`, `clocks_throttle_reasons` became `clocks_event_reasons`,
`cuda_version` is missing before driver ~410, `product_architecture` before
470. Every field is therefore optional and read from each known spelling.
"""

import re
import xml.etree.ElementTree as ET
from typing import Any

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# What nvidia-smi prints where it has no value ("N/A", "Not Found" for the CUDA version when
# the driver's CUDA library is missing, ...): the server's list. No value, never a value.
PLACEHOLDER = re.compile(
    r"\[?(n/?a|not found|not supported|not available|unknown( error)?|"
    r"insufficient permissions|redacted)\]?",
    re.IGNORECASE,
)


def normalise_bus_id(bus_id: str | None) -> str | None:
    """'00000000:07:00.0' (NVML, 8-digit domain) -> '0000:07:00.0' (sysfs, lspci), lower case."""
    if not bus_id:
        return None
    match = re.fullmatch(
        r"(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])", bus_id
    )
    if not match:
        return bus_id.strip().lower()
    domain, bus, device, function = match.groups()
    return f"{int(domain or '0', 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{function}"


def _printed(element: ET.Element, path: str) -> str | None:
    """The text as printed, placeholders included; None where absent or empty."""
    found = element.find(path)
    if found is None:
        return None
    return " ".join((found.text or "").split()) or None


def _text(element: ET.Element | None, *paths: str) -> str | None:
    """First text among the given paths that is a value: not empty, not a placeholder."""
    if element is None:
        return None
    for path in paths:
        value = _printed(element, path)
        if value is not None and not PLACEHOLDER.fullmatch(value):
            return value
    return None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    match = _NUMBER.search(text)
    return float(match.group()) if match else None


def _int(text: str | None) -> int | None:
    value = _number(text)
    return None if value is None else int(value)


def split_pci_id(combined: str | None) -> tuple[str | None, str | None]:
    """NVML packs device and vendor as 0xDDDDVVVV ('20B210DE'); returns ('0x20b2', '0x10de')."""
    if not combined or not re.fullmatch(r"(0x)?[0-9a-fA-F]{8}", combined):
        return None, None
    digits = combined.lower().removeprefix("0x")
    return "0x" + digits[:4], "0x" + digits[4:]


def _power(gpu: ET.Element) -> dict:
    readings = gpu.find("gpu_power_readings")
    if readings is None:
        readings = gpu.find("power_readings")
    return {
        "draw_w": _number(
            _text(readings, "instant_power_draw", "power_draw", "average_power_draw")
        ),
        "current_limit_w": _number(_text(readings, "current_power_limit", "power_limit")),
        "enforced_limit_w": _number(
            _text(readings, "enforced_power_limit", "current_power_limit", "power_limit")
        ),
        "default_limit_w": _number(_text(readings, "default_power_limit")),
        "min_limit_w": _number(_text(readings, "min_power_limit")),
        "max_limit_w": _number(_text(readings, "max_power_limit")),
    }


def _clocks(gpu: ET.Element, section: str) -> dict:
    node = gpu.find(section)
    return {
        "graphics_mhz": _int(_text(node, "graphics_clock")),
        "sm_mhz": _int(_text(node, "sm_clock")),
        "mem_mhz": _int(_text(node, "mem_clock", "memory_clock")),
    }


def _clock_event_reasons(gpu: ET.Element) -> list[str]:
    node = gpu.find("clocks_event_reasons")
    if node is None:
        node = gpu.find("clocks_throttle_reasons")
    if node is None:
        return []
    active = []
    for child in node:
        if (child.text or "").strip() == "Active":
            active.append(re.sub(r"^clocks_(event|throttle)_reason_", "", child.tag))
    return active


def _pcie(gpu: ET.Element) -> dict:
    link = gpu.find("pci/pci_gpu_link_info")
    return {
        "gen_max": _int(_text(link, "pcie_gen/max_link_gen")),
        "gen_current": _int(_text(link, "pcie_gen/current_link_gen")),
        "width_max": _int(_text(link, "link_widths/max_link_width")),
        "width_current": _int(_text(link, "link_widths/current_link_width")),
    }


def _mig_devices(gpu: ET.Element) -> list[dict]:
    devices = []
    for mig in gpu.findall("mig_devices/mig_device"):
        devices.append(
            {
                "index": _int(_text(mig, "index")),
                "gpu_instance_id": _int(_text(mig, "gpu_instance_id")),
                "compute_instance_id": _int(_text(mig, "compute_instance_id")),
                "sm_count": _int(_text(mig, "device_attributes/shared/multiprocessor_count")),
                "memory_total_mib": _int(_text(mig, "fb_memory_usage/total")),
            }
        )
    return devices


def _health(gpu: ET.Element) -> dict:
    return {
        "volatile_dbe": _int(_text(gpu, "ecc_errors/volatile/double_bit/total")),
        "aggregate_dbe": _int(_text(gpu, "ecc_errors/aggregate/double_bit/total")),
        "retired_pages_dbe": _int(_text(gpu, "retired_pages/double_bit_retirement/retired_count")),
        "retired_pages_pending": _text(gpu, "retired_pages/pending_retirement"),
        "remapped_rows_uncorrectable": _int(_text(gpu, "remapped_rows/remapped_row_unc")),
        "remapped_rows_pending": _text(gpu, "remapped_rows/remapped_row_pending"),
        "remapped_rows_failure": _text(gpu, "remapped_rows/remapped_row_failure"),
    }


def parse_gpu(gpu: ET.Element) -> dict:
    """One `<gpu>` element as the harness's NVML-source record (units in the field names)."""
    device_id, vendor_id = split_pci_id(_text(gpu, "pci/pci_device_id"))
    subsystem_device, subsystem_vendor = split_pci_id(_text(gpu, "pci/pci_sub_system_id"))
    return {
        "uuid": _text(gpu, "uuid"),
        "pci_bus_id": normalise_bus_id(_text(gpu, "pci/pci_bus_id") or gpu.get("id")),
        "minor_number": _int(_text(gpu, "minor_number")),
        "name": _text(gpu, "product_name"),
        "brand": _text(gpu, "product_brand"),
        "architecture": _text(gpu, "product_architecture"),
        "serial": _text(gpu, "serial"),
        "vbios_version": _text(gpu, "vbios_version"),
        "board_part_number": _text(gpu, "board_part_number"),
        "pci_device_id": device_id,
        "pci_vendor_id": vendor_id,
        "pci_subsystem_device_id": subsystem_device,
        "pci_subsystem_vendor_id": subsystem_vendor,
        "pci_device_id_raw": _text(gpu, "pci/pci_device_id"),
        "pci_subsystem_id_raw": _text(gpu, "pci/pci_sub_system_id"),
        "memory_total_mib": _int(_text(gpu, "fb_memory_usage/total")),
        "memory_reserved_mib": _int(_text(gpu, "fb_memory_usage/reserved")),
        "memory_used_mib": _int(_text(gpu, "fb_memory_usage/used")),
        "ecc_mode_current": _text(gpu, "ecc_mode/current_ecc"),
        "mig_mode_current": _text(gpu, "mig_mode/current_mig"),
        "mig_devices": _mig_devices(gpu),
        "compute_mode": _text(gpu, "compute_mode"),
        "persistence_mode": _text(gpu, "persistence_mode"),
        "virtualization_mode": _text(gpu, "gpu_virtualization_mode/virtualization_mode"),
        "performance_state": _text(gpu, "performance_state"),
        "power": _power(gpu),
        "clocks_current": _clocks(gpu, "clocks"),
        "clocks_max": _clocks(gpu, "max_clocks"),
        "clocks_applications": _clocks(gpu, "applications_clocks"),
        "clock_event_reasons_active": _clock_event_reasons(gpu),
        "pcie": _pcie(gpu),
        "temperature_c": _int(_text(gpu, "temperature/gpu_temp")),
        "fabric_state": _text(gpu, "fabric/state"),
        "health": _health(gpu),
        "process_count": len(gpu.findall("processes/process_info")),
    }


def parse_nvidia_smi_xml(text: str) -> dict:
    """Parse `nvidia-smi -q -x`; raises ValueError on something that is not such a document."""
    if "<!ENTITY" in text:
        # The capture comes from the machine under test, i.e. from the vendor: refuse
        # entity declarations outright (no expansion tricks), as defusedxml would.
        raise ValueError("entity declarations are not allowed in nvidia-smi output")
    try:
        root = ET.fromstring(text)  # noqa: S314 - entities refused above; stdlib only
    except ET.ParseError as exc:
        raise ValueError(f"not XML: {exc}") from exc
    if root.tag != "nvidia_smi_log":
        raise ValueError(f"not an nvidia-smi log (root <{root.tag}>)")
    dtd = re.search(r"nvsmi_device_(v\d+)\.dtd", text)
    return {
        "timestamp": _text(root, "timestamp"),
        "driver_version": _text(root, "driver_version"),
        "cuda_version": _text(root, "cuda_version"),
        # As printed, for the driver and CUDA check (driver_cuda.py), placeholders included.
        "printed": {
            "driver_version": _printed(root, "driver_version"),
            "cuda_version": _printed(root, "cuda_version"),
        },
        "attached_gpus": _int(_text(root, "attached_gpus")),
        "dtd_version": dtd.group(1) if dtd else None,
        "gpus": [parse_gpu(gpu) for gpu in root.findall("gpu")],
    }


def parse_topology(text: str) -> dict:
    """`nvidia-smi topo -m`: the GPU-to-GPU link matrix and each GPU's CPU/NUMA affinity."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    header_index = next((i for i, line in enumerate(lines) if re.match(r"^\s+GPU0\b", line)), None)
    if header_index is None:
        return {"matrix": {}, "affinity": {}, "nvlink_peers": {}}
    header = [cell.strip() for cell in re.split(r"\t+|\s{2,}", lines[header_index].strip())]
    matrix, affinity = {}, {}
    for line in lines[header_index + 1 :]:
        if not re.match(r"^(GPU|NIC|mlx)\w*\s", line):
            break
        cells = [cell.strip() for cell in re.split(r"\t", line)]
        if len(cells) < 2:
            cells = re.split(r"\s+", line.strip())
        row, values = cells[0], cells[1:]
        named = dict(zip(header, values))
        matrix[row] = {k: v for k, v in named.items() if re.match(r"^(GPU|NIC)\d+$", k)}
        affinity[row] = {k: v for k, v in named.items() if "Affinity" in k or "NUMA" in k}
    peers = {
        row: {peer: link for peer, link in links.items() if link.startswith("NV")}
        for row, links in matrix.items()
        if row.startswith("GPU")
    }
    return {"matrix": matrix, "affinity": affinity, "nvlink_peers": peers}


def parse_nvlink_status(text: str) -> list[dict]:
    """`nvidia-smi nvlink -s`: per GPU (by UUID) each link's speed or inactive state."""
    gpus: list[dict] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        header = re.match(r"^GPU (\d+): (.*?) \(UUID: (\S+)\)", line)
        if header:
            current = {
                "index": int(header.group(1)),
                "name": header.group(2),
                "uuid": header.group(3),
            }
            current["links"] = []
            gpus.append(current)
            continue
        link = re.match(r"^\s+Link (\d+): (.*)$", line)
        if link and current is not None:
            state = link.group(2).strip()
            speed = _number(state) if "GB/s" in state else None
            current["links"].append(
                {"link": int(link.group(1)), "state": state, "speed_GBps": speed}
            )
    return gpus

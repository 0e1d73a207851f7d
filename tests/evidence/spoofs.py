"""Spoofed `nvidia-smi -q -x` outputs, each a real capture with one edit, and bundles carrying them.

The real captures are the harness's fixtures (harness/tests/fixtures/nvidia-smi,
SOURCES.md gives their provenance); every edit below asserts that what it
replaces is there, so a spoof is exactly the capture plus the lie.
"""

import copy
import hashlib
import re

from diligence_harness.inventory import build_inventory
from diligence_harness.nvsmi import parse_nvidia_smi_xml

from tests.evidence.conftest import FIXTURES


def real(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def replaced(text: str, old: str, new: str, count: int = 1) -> str:
    assert old in text, old
    return text.replace(old, new, count)


def element(text: str, tag: str, value: str, count: int = 1) -> str:
    """Every ``<tag>…</tag>`` (the first ``count``) now says ``value``."""
    pattern = re.compile(rf"<{tag}>[^<]*</{tag}>")
    assert pattern.search(text), tag
    return pattern.sub(f"<{tag}>{value}</{tag}>", text, count=count)


def renamed(text: str, name: str) -> str:
    return element(text, "product_name", name, count=0)


def l4(name: str = "NVIDIA L4") -> str:
    """An L4 (AD104, PCI 27B8, 23034 MiB) made from the real capture of its AD104 sibling,
    the RTX 4000 SFF Ada: no real L4 capture is among the fixtures."""
    text = real("rtx-4000-sff-ada-1x-v13.xml")
    text = pci_id(
        replaced(text, "<total>20475 MiB</total>", "<total>23034 MiB</total>"), "27B810DE"
    )
    return renamed(text, name)


def duplicated_uuid(text: str) -> str:
    """The second GPU's UUID made the first's."""
    uuids = re.findall(r"<uuid>([^<]*)</uuid>", text)
    assert len(uuids) >= 2
    return replaced(text, f"<uuid>{uuids[1]}</uuid>", f"<uuid>{uuids[0]}</uuid>")


def attached(text: str, count: int) -> str:
    return element(text, "attached_gpus", str(count))


def versions(text: str, *, driver: str | None = None, cuda: str | None = None) -> str:
    if driver is not None:
        text = element(text, "driver_version", driver)
    if cuda is not None:
        text = element(text, "cuda_version", cuda)
    return text


def virtualisation(text: str, mode: str) -> str:
    return element(text, "virtualization_mode", mode, count=0)


def without_processes(text: str) -> str:
    stripped = re.sub(r"<process_info>.*?</process_info>\s*", "", text, flags=re.DOTALL)
    assert stripped != text
    return stripped


def memory(text: str, total_mib: int) -> str:
    return element(text, "total", f"{total_mib} MiB")  # the first <total> is fb_memory_usage


def pci_id(text: str, combined: str) -> str:
    return element(text, "pci_device_id", combined, count=0)


def with_nvidia_smi(document: dict, xml_text: str, *, client_findings="harness") -> dict:
    """The bundle as the harness writes it on a machine whose nvidia-smi printed ``xml_text``:
    the raw artifact, and the inventory the harness derives from it.

    ``client_findings``: "harness" for the findings the harness makes of this output,
    a list for findings edited by hand, or None for a bundle carrying no findings at all."""
    doc = copy.deepcopy(document)
    data = xml_text.encode("utf-8")
    [index] = [i for i, a in enumerate(doc["artifacts"]) if a["media_type"] == "application/xml"]
    artifact = doc["artifacts"][index]
    artifact.update(content=xml_text, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    for entry in doc["manifest"]["artifacts"]:
        if entry["name"] == artifact["name"]:
            entry.update(size=artifact["size"], sha256=artifact["sha256"])
    nvml = parse_nvidia_smi_xml(xml_text)
    inventory, found = build_inventory(nvml_doc=nvml, cuda=None, pci=None)
    result = doc["steps"]["inventory"]["result"]
    result.update({k: inventory[k] for k in ("driver", "gpu_count", "gpus")})
    others = [f for f in doc["findings"] if f["step"] != "inventory"]
    if client_findings == "harness":
        doc["findings"] = others + found
    elif client_findings is None:
        doc["findings"] = []
    else:
        doc["findings"] = others + list(client_findings)
    return doc

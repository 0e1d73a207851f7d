"""A small table of known GPU SKUs keyed on PCI device id (docs/rules/evidence.md#datasheet).

Used only to raise findings (a name or memory size that does not fit the PCI id); the
server holds the authoritative tables and re-derives every finding from the raw
nvidia-smi output. `memory_mib` is what `nvidia-smi` reports as fb total where a real
capture was seen; None where the reference marks it unverified. Sources: the datasheet
figures of docs/rules/evidence.md#datasheet, the PCI ID Repository (pci.ids) and the
real captures in the test fixtures (SOURCES.md).
"""

import re
from typing import TypedDict


class Sku(TypedDict):
    family: str
    name_hint: str
    memory_mib: int | None


KNOWN_SKUS: dict[str, Sku] = {
    "0x2330": {"family": "H100", "name_hint": "H100", "memory_mib": 81559},
    "0x2331": {"family": "H100 PCIe", "name_hint": "H100", "memory_mib": None},
    "0x2321": {"family": "H100 NVL", "name_hint": "H100", "memory_mib": None},
    "0x2335": {"family": "H200", "name_hint": "H200", "memory_mib": 143771},
    "0x233b": {"family": "H200 NVL", "name_hint": "H200", "memory_mib": None},
    "0x20b2": {"family": "A100-SXM4-80GB", "name_hint": "A100", "memory_mib": 81920},
    "0x20b5": {"family": "A100 80GB PCIe", "name_hint": "A100", "memory_mib": None},
    "0x20b0": {"family": "A100-SXM4-40GB", "name_hint": "A100", "memory_mib": None},
    "0x20f1": {"family": "A100 PCIe 40GB", "name_hint": "A100", "memory_mib": None},
    "0x2324": {"family": "H800", "name_hint": "H800", "memory_mib": None},
    "0x2322": {"family": "H800 PCIe", "name_hint": "H800", "memory_mib": None},
    "0x2329": {"family": "H20", "name_hint": "H20", "memory_mib": None},
    "0x2901": {"family": "B200", "name_hint": "B200", "memory_mib": None},
    "0x20b7": {"family": "A30", "name_hint": "A30", "memory_mib": None},
    "0x2235": {"family": "A40", "name_hint": "A40", "memory_mib": None},
    "0x2236": {"family": "A10", "name_hint": "A10", "memory_mib": None},
    "0x2237": {"family": "A10G", "name_hint": "A10G", "memory_mib": 23028},
    "0x27b8": {"family": "L4", "name_hint": "L4", "memory_mib": None},
    "0x26b9": {"family": "L40S", "name_hint": "L40S", "memory_mib": 46068},
    "0x26b5": {"family": "L40", "name_hint": "L40", "memory_mib": None},
    "0x2684": {"family": "RTX 4090", "name_hint": "4090", "memory_mib": 24564},
    "0x2685": {"family": "RTX 4090 D", "name_hint": "4090 D", "memory_mib": None},
    "0x1db8": {"family": "V100-SXM3-32GB", "name_hint": "V100", "memory_mib": 32480},
    "0x1db6": {"family": "V100-PCIE-32GB", "name_hint": "V100", "memory_mib": None},
    "0x1df6": {"family": "V100S-PCIE-32GB", "name_hint": "V100S", "memory_mib": 32510},
    "0x1eb8": {"family": "Tesla T4", "name_hint": "T4", "memory_mib": 15360},
    "0x15f8": {"family": "P100-PCIE-16GB", "name_hint": "P100", "memory_mib": 16384},
}

# Memory sizes differ a little between driver versions and ECC settings; beyond this
# fraction the difference is a finding (docs/rules/evidence.md#memory-check: ±0.5 %).
MEMORY_TOLERANCE = 0.005


def lookup(pci_device_id: str | None) -> Sku | None:
    return KNOWN_SKUS.get((pci_device_id or "").lower())


def _words(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


def _names(hint: str, name: str) -> bool:
    # Whole words: "H20" is not "H200", "L4" not "L40S", "V100" not "V100S".
    return re.search(rf"(?<![a-z0-9]){re.escape(_words(hint))}(?![a-z0-9])", name) is not None


def ids_named(name: str | None) -> dict[str, Sku]:
    """The SKUs a name claims, by PCI device id: those of the longest name hint it uses
    ("RTX 4090 D" claims the 4090 D, not the 4090); empty when it names none of them."""
    words = _words(name or "")
    hints = [sku["name_hint"] for sku in KNOWN_SKUS.values() if _names(sku["name_hint"], words)]
    if not hints:
        return {}
    longest = max(hints, key=len)
    return {pci: sku for pci, sku in KNOWN_SKUS.items() if sku["name_hint"] == longest}

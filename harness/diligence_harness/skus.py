"""A small table of known GPU SKUs keyed on PCI device id (harness-anchors §3.3, §4.1).

Used only to raise findings (a name or memory size that does not fit the PCI
id); the server holds the authoritative spec database. `memory_mib` is what
`nvidia-smi` reports as fb total where a real capture was seen; None where the
reference marks it unverified. Sources: harness-anchors §4.1 table and the
real captures in the test fixtures (SOURCES.md).
"""

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
    "0x26b9": {"family": "L40S", "name_hint": "L40S", "memory_mib": 46068},
    "0x26b5": {"family": "L40", "name_hint": "L40", "memory_mib": None},
    "0x2684": {"family": "RTX 4090", "name_hint": "4090", "memory_mib": 24564},
    "0x1db8": {"family": "V100-SXM3-32GB", "name_hint": "V100", "memory_mib": 32480},
    "0x1df6": {"family": "V100S-PCIE-32GB", "name_hint": "V100S", "memory_mib": 32510},
    "0x1eb8": {"family": "Tesla T4", "name_hint": "T4", "memory_mib": 15360},
    "0x15f8": {"family": "P100-PCIE-16GB", "name_hint": "P100", "memory_mib": 16384},
}

# Memory sizes differ a little between driver versions and ECC settings; beyond this
# fraction the difference is a finding (the §4.3 proposal is ±0.5 %).
MEMORY_TOLERANCE = 0.005


def lookup(pci_device_id: str | None) -> Sku | None:
    return KNOWN_SKUS.get((pci_device_id or "").lower())

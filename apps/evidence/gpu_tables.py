"""What a card's name, PCI device id and memory must agree on, and which driver reports which CUDA.

Two tables the server judges the raw ``nvidia-smi -q -x`` output with
(``apps.evidence.inventory``):

- ``PRODUCTS``: each card's PCI device ids (vendor 0x10de) as the PCI ID
  Repository lists them, and its memory as NVIDIA's product datasheets market
  it. The harness's own table (``harness/diligence_harness/skus.py``) and
  ``datasheet.py`` hold subsets; a test keeps them consistent with this one.
  Ids for the cards of the real captures in the test fixtures were read there.
- ``CUDA_MINIMUM_DRIVER``: the Linux x86_64 driver each CUDA major.minor needs,
  from the table "CUDA Toolkit and Corresponding Driver Versions" in NVIDIA's
  CUDA Toolkit release notes (the GA release of each minor version).
"""

import re
from dataclasses import dataclass

PCI_SOURCE = "the PCI ID Repository (pci.ids) for device ids; NVIDIA product datasheets for memory"
CUDA_SOURCE = (
    "NVIDIA CUDA Toolkit release notes, table “CUDA Toolkit and Corresponding Driver Versions” "
    "(Linux x86_64)"
)


@dataclass(frozen=True)
class Product:
    """One card as the PCI ID Repository names it, with the memory NVIDIA markets for it."""

    key: str
    name: str
    family: str  # what a bare name such as "NVIDIA H200" claims
    aliases: tuple[str, ...]  # normalised names (lower case, words) of this very product
    pci_device_ids: tuple[str, ...]
    memory_gb: tuple[int, ...]  # marketed sizes; some cards ship in more than one


# Aliases that name a family only; a name matching one claims any product of that family.
FAMILIES: dict[str, tuple[str, ...]] = {
    "H100": ("h100",),
    "H200": ("h200",),
    "H800": ("h800",),
    "H20": ("h20",),
    "B200": ("b200",),
    "A100": ("a100",),
    "A30": ("a30",),
    "A40": ("a40",),
    "A10": ("a10",),
    "A10G": ("a10g",),
    "L4": ("l4",),
    "L40": ("l40",),
    "L40S": ("l40s",),
    "T4": ("t4",),
    "V100": ("v100",),
    "V100S": ("v100s",),
    "P100": ("p100",),
    "RTX 4090": ("rtx 4090",),
    "RTX 4090 D": ("rtx 4090 d", "rtx 4090d"),
    "RTX 3090": ("rtx 3090",),
    "RTX 3090 Ti": ("rtx 3090 ti",),
    "RTX 3060": ("rtx 3060",),
    "RTX 2070": ("rtx 2070",),
    "GTX 1070": ("gtx 1070",),
    "RTX 4000 SFF Ada": ("rtx 4000 sff ada",),
    "RTX PRO 6000 Blackwell": ("rtx pro 6000 blackwell",),
}


def _p(key, name, family, ids, memory_gb, *aliases) -> Product:
    return Product(key, name, family, tuple(aliases), tuple(ids), tuple(memory_gb))


PRODUCTS: tuple[Product, ...] = (
    # Hopper and Blackwell data-centre cards
    _p("h100-sxm", "NVIDIA H100 SXM5 80GB", "H100", ["0x2330"], [80], "h100 sxm", "h100 sxm5",
       "h100 80gb hbm3"),
    _p("h100-pcie", "NVIDIA H100 PCIe", "H100", ["0x2331"], [80], "h100 pcie"),
    _p("h100-nvl", "NVIDIA H100 NVL", "H100", ["0x2321"], [94], "h100 nvl"),
    _p("h200-sxm", "NVIDIA H200 SXM 141GB", "H200", ["0x2335"], [141], "h200 sxm"),
    _p("h200-nvl", "NVIDIA H200 NVL", "H200", ["0x233b"], [141], "h200 nvl"),
    _p("h800", "NVIDIA H800", "H800", ["0x2324"], [80], "h800 sxm", "h800 80gb hbm3"),
    _p("h800-pcie", "NVIDIA H800 PCIe", "H800", ["0x2322"], [80], "h800 pcie"),
    _p("h20", "NVIDIA H20", "H20", ["0x2329"], [96]),
    _p("b200", "NVIDIA B200", "B200", ["0x2901"], [180]),
    # Ampere
    _p("a100-sxm4-40gb", "NVIDIA A100 SXM4 40GB", "A100", ["0x20b0"], [40], "a100 sxm4 40gb"),
    _p("a100-pcie-40gb", "NVIDIA A100 PCIe 40GB", "A100", ["0x20f1"], [40], "a100 pcie 40gb"),
    _p("a100-sxm4-80gb", "NVIDIA A100 SXM4 80GB", "A100", ["0x20b2"], [80], "a100 sxm4 80gb"),
    _p("a100-pcie-80gb", "NVIDIA A100 PCIe 80GB", "A100", ["0x20b5"], [80], "a100 80gb pcie",
       "a100 pcie 80gb"),
    _p("a30", "NVIDIA A30", "A30", ["0x20b7"], [24]),
    _p("a40", "NVIDIA A40", "A40", ["0x2235"], [48]),
    _p("a10", "NVIDIA A10", "A10", ["0x2236"], [24]),
    _p("a10g", "NVIDIA A10G", "A10G", ["0x2237"], [24]),
    # Ada Lovelace
    _p("l4", "NVIDIA L4", "L4", ["0x27b8"], [24]),
    _p("l40", "NVIDIA L40", "L40", ["0x26b5"], [48]),
    _p("l40s", "NVIDIA L40S", "L40S", ["0x26b9"], [48]),
    _p("rtx-4000-sff-ada", "NVIDIA RTX 4000 SFF Ada Generation", "RTX 4000 SFF Ada", ["0x27b0"],
       [20]),
    _p("rtx-4090", "NVIDIA GeForce RTX 4090", "RTX 4090", ["0x2684"], [24]),
    _p("rtx-4090-d", "NVIDIA GeForce RTX 4090 D", "RTX 4090 D", ["0x2685"], [24]),
    _p("rtx-pro-6000-blackwell-max-q", "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
       "RTX PRO 6000 Blackwell", ["0x2bb4"], [96], "rtx pro 6000 blackwell max q"),
    # Older generations seen in the real captures
    _p("rtx-3090", "NVIDIA GeForce RTX 3090", "RTX 3090", ["0x2204"], [24]),
    _p("rtx-3090-ti", "NVIDIA GeForce RTX 3090 Ti", "RTX 3090 Ti", ["0x2203"], [24]),
    _p("rtx-3060", "NVIDIA GeForce RTX 3060", "RTX 3060", ["0x2487"], [12, 8]),
    _p("rtx-2070", "NVIDIA GeForce RTX 2070", "RTX 2070", ["0x1f02"], [8]),
    _p("gtx-1070", "NVIDIA GeForce GTX 1070", "GTX 1070", ["0x1b81"], [8]),
    _p("t4", "NVIDIA Tesla T4", "T4", ["0x1eb8"], [16]),
    _p("v100-pcie-32gb", "NVIDIA Tesla V100 PCIe 32GB", "V100", ["0x1db6"], [32], "v100 pcie 32gb"),
    _p("v100-sxm3-32gb", "NVIDIA Tesla V100 SXM3 32GB", "V100", ["0x1db8"], [32], "v100 sxm3 32gb"),
    _p("v100s-pcie-32gb", "NVIDIA Tesla V100S PCIe 32GB", "V100S", ["0x1df6"], [32]),
    _p("p100-pcie-16gb", "NVIDIA Tesla P100 PCIe 16GB", "P100", ["0x15f8"], [16], "p100 pcie 16gb"),
)  # fmt: skip

# The driver reports memory in MiB: HBM parts about 0.5 % under the marketed size read as
# GiB (H200 "141 GB" = 143771 MiB), GDDR parts with ECC on 1/16 under it (L40S 46068 MiB of
# 48 GB). Within these fractions of the marketed size a card's memory fits it.
MEMORY_LOW, MEMORY_HIGH = 0.92, 1.02


def memory_window_mib(memory_gb: int) -> tuple[int, int]:
    marketed = memory_gb * 1024
    return int(marketed * MEMORY_LOW), int(marketed * MEMORY_HIGH)


_BY_PCI = {pci: product for product in PRODUCTS for pci in product.pci_device_ids}


def by_pci_id(device_id: str | None) -> Product | None:
    return _BY_PCI.get((device_id or "").lower())


def family_products(family: str) -> tuple[Product, ...]:
    return tuple(p for p in PRODUCTS if p.family == family)


def normalise(name: str) -> str:
    return " ".join(name.lower().replace("-", " ").replace("_", " ").split())


def _matches(alias: str, name: str) -> bool:
    # Whole words only: "h20" is not "h200", "l4" not "l40s", "v100" not "v100s".
    return re.search(rf"(?<![a-z0-9]){re.escape(alias)}(?![a-z0-9])", name) is not None


@dataclass(frozen=True)
class Claim:
    """What a name claims: one product, or any product of a family."""

    family: str
    product: Product | None

    @property
    def label(self) -> str:
        return self.product.name if self.product else self.family

    def allows(self, product: Product) -> bool:
        return product == self.product if self.product else product.family == self.family


def claim_of(name: str | None) -> Claim | None:
    """The longest alias wins, so "RTX 4090 D" is not read as "RTX 4090" nor "H200 NVL" as
    any H200."""
    if not name:
        return None
    text = normalise(name)
    best, best_len = None, 0
    for product in PRODUCTS:
        for alias in product.aliases:
            if len(alias) > best_len and _matches(alias, text):
                best, best_len = Claim(product.family, product), len(alias)
    for family, aliases in FAMILIES.items():
        for alias in aliases:
            if len(alias) > best_len and _matches(alias, text):
                best, best_len = Claim(family, None), len(alias)
    return best


# CUDA major.minor -> the minimum Linux x86_64 driver of its GA release.
CUDA_MINIMUM_DRIVER: dict[tuple[int, int], str] = {
    (9, 0): "384.81",
    (9, 1): "390.46",
    (9, 2): "396.26",
    (10, 0): "410.48",
    (10, 1): "418.39",
    (10, 2): "440.33",
    (11, 0): "450.36.06",
    (11, 1): "455.23",
    (11, 2): "460.27.03",
    (11, 3): "465.19.01",
    (11, 4): "470.42.01",
    (11, 5): "495.29.05",
    (11, 6): "510.39.01",
    (11, 7): "515.43.04",
    (11, 8): "520.61.05",
    (12, 0): "525.60.13",
    (12, 1): "530.30.02",
    (12, 2): "535.54.03",
    (12, 3): "545.23.06",
    (12, 4): "550.54.14",
    (12, 5): "555.42.02",
    (12, 6): "560.28.03",
    # No CUDA 12.7 toolkit shipped, but the R565 drivers report 12.7 (public nvidia-smi
    # outputs of 565.57.01); the table has no row for it, so the bound is the branch.
    (12, 7): "565",
    (12, 8): "570.26",
    (12, 9): "575.51.03",
    (13, 0): "580.65.06",
    (13, 1): "590.44.01",
    (13, 2): "595.45.04",
}


def cuda_bounds(cuda: tuple[int, int]) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The table's CUDA version at or below ``cuda`` and the next one above it."""
    known = sorted(CUDA_MINIMUM_DRIVER)
    below = [v for v in known if v <= cuda]
    above = [v for v in known if v > cuda]
    return (below[-1] if below else None), (above[0] if above else None)


def driver_branch(version: str) -> int:
    return int(version.split(".", 1)[0])

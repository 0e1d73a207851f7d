"""Accelerator datasheet figures, shipped as data, every field with its source and date.

TFLOP/s are **dense** (datasheets headline the sparse figure, exactly 2×;
ml-engineering #100). Memory bandwidth is decimal GB/s. ``memory_total_mib``
is what the driver reports as ``memory.total`` (``nvidia-smi``), not the
marketed size; None where no capture was seen, and the check then falls back
to the marketed size with a wider tolerance. ``healthy_fraction`` is the BF16
``torch.matmul`` fraction of dense peak a healthy machine reaches
(docs/rules/evidence.md#datasheet). Look-alikes (H800, H20, 4090D) share a die with
their siblings: the PCI device id is what tells them apart
(docs/rules/evidence.md#identity).
"""

import re
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

V = TypeVar("V")

# Where each figure comes from, with the date the figure was read.
SOURCES = {
    "anchors-4.1": (
        "NVIDIA product pages and datasheets, as tabulated in Stas Bekman's "
        "Machine Learning Engineering (accelerators chapter)",
        "2026-11-30",
    ),
    "anchors-4.2": (
        "published measured reference points (maximum achievable matmul FLOPS, torch.mm)",
        "2026-11-30",
    ),
    "anchors-3.3": (
        "the PCI ID repository (pci.ids) and NVIDIA mig-parted configurations",
        "2026-11-30",
    ),
    "pci-ids": ("pci.ids device names (GH100 [H800], GH100 [H20], AD102 [4090 D]…)", "2026-11-30"),
    "fixture": (
        "real nvidia-smi -q -x captures of these cards",
        "2026-11-30",
    ),
    "capture": ("public `nvidia-smi` outputs (B200 183359 MiB, H20 97871 MiB)", "2026-11-30"),
    "derived": ("derived here from the sibling SKU (core count or ECC share)", "2026-11-30"),
    "unverified": ("reference marks the figure unverified; calibrate on a known-good box", ""),
}


@dataclass(frozen=True)
class Fact(Generic[V]):
    """One datasheet value and the key of its source in ``SOURCES``."""

    value: V
    source: str

    @property
    def citation(self) -> str:
        text, date = SOURCES[self.source]
        return f"{text} ({date})" if date else text


@dataclass(frozen=True)
class Sku:
    """One accelerator model as the datasheet describes it."""

    key: str
    name: str
    names: tuple[str, ...]  # NVML name strings (lower case substrings) that mean this SKU
    pci_device_ids: Fact[tuple[str, ...]]
    marketed_memory_gb: Fact[int]
    # ECC on, or the only value where ECC makes no difference
    memory_total_mib: Fact[int | None]
    memory_bandwidth_gbps: Fact[float]
    dense_tflops: Fact[dict[str, float]]  # {dtype: TFLOP/s}
    accumulate: str  # accumulate precision the TFLOP/s figure assumes
    nvlink: Fact[dict[str, float] | None]  # {"links": n, "per_link_gbps": x, "total_gbps": y}
    power_w: Fact[tuple[int | None, int]]  # (min, max)
    healthy_fraction: Fact[float]  # BF16 sustained matmul / dense peak on a healthy box
    band: str  # which acceptance band (BANDS) its matmul is graded with
    pci_subsystem_ids: Fact[tuple[str, ...]] = field(
        default_factory=lambda: Fact((), "anchors-3.3")
    )
    memory_total_mib_ecc_off: Fact[int | None] = field(
        default_factory=lambda: Fact(None, "anchors-4.1")
    )


def _f(value: Any, source: str = "anchors-4.1") -> Fact[Any]:
    return Fact(value, source)


def _hopper(tf: float, fp8: float) -> dict:
    return {"bf16": tf, "fp16": tf, "fp8": fp8}


def _ampere() -> dict:
    return {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0}


SKUS: tuple[Sku, ...] = (
    Sku(
        "a100-sxm4-40gb",
        "NVIDIA A100 SXM4 40GB",
        ("a100 sxm4 40gb", "a100 40gb"),
        _f(("0x20b0",), "unverified"),
        _f(40),
        _f(None),
        _f(1555.0),
        _f(_ampere()),
        "fp32",
        _f({"links": 12, "per_link_gbps": 25.0, "total_gbps": 600.0}),
        _f((250, 400)),
        _f(0.85, "anchors-4.2"),
        "datacenter",
    ),
    Sku(
        "a100-sxm4-80gb",
        "NVIDIA A100 SXM4 80GB",
        ("a100 sxm4 80gb", "a100 80gb"),
        _f(("0x20b2",), "anchors-3.3"),
        _f(80),
        _f(81920, "fixture"),
        _f(2039.0),
        _f(_ampere()),
        "fp32",
        _f({"links": 12, "per_link_gbps": 25.0, "total_gbps": 600.0}),
        _f((250, 500)),
        _f(0.85, "anchors-4.2"),
        "datacenter",
    ),
    Sku(
        "a100-pcie-40gb",
        "NVIDIA A100 PCIe 40GB",
        ("a100 pcie 40gb", "a100 40gb pcie"),
        _f(("0x20f1",), "pci-ids"),
        _f(40),
        _f(None),
        _f(1555.0),
        _f(_ampere()),
        "fp32",
        _f({"links": 3, "per_link_gbps": 200.0, "total_gbps": 600.0}),
        _f((150, 250)),
        _f(0.85, "anchors-4.2"),
        "datacenter",
    ),
    Sku(
        "a100-pcie-80gb",
        "NVIDIA A100 PCIe 80GB",
        ("a100 80gb pcie", "a100 pcie 80gb"),
        _f(("0x20b5",), "anchors-3.3"),
        _f(80),
        _f(None),
        _f(1935.0),
        _f(_ampere()),
        "fp32",
        _f({"links": 3, "per_link_gbps": 200.0, "total_gbps": 600.0}),
        _f((150, 300)),
        _f(0.85, "anchors-4.2"),
        "datacenter",
    ),
    Sku(
        "h100-sxm",
        "NVIDIA H100 SXM5 80GB",
        ("h100 80gb hbm3", "h100 sxm", "h100 sxm5", "h100"),
        _f(("0x2330",), "anchors-3.3"),
        _f(80),
        _f(81559),
        _f(3350.0),
        _f(_hopper(989, 1979)),
        "fp32",
        _f({"links": 18, "per_link_gbps": 26.562, "total_gbps": 900.0}),
        _f((200, 700)),
        _f(0.80, "anchors-4.2"),
        "datacenter",
    ),
    Sku(
        "h100-pcie",
        "NVIDIA H100 PCIe 80GB",
        ("h100 pcie",),
        _f(("0x2331",), "anchors-3.3"),
        _f(80),
        _f(None, "unverified"),
        _f(2000.0),
        _f(_hopper(756, 1513)),
        "fp32",
        _f({"links": 3, "per_link_gbps": 200.0, "total_gbps": 600.0}),
        _f((300, 350)),
        _f(0.80, "unverified"),
        "datacenter",
    ),
    Sku(
        "h100-nvl",
        "NVIDIA H100 NVL 94GB",
        ("h100 nvl",),
        _f(("0x2321",), "anchors-3.3"),
        _f(94),
        _f(None),
        _f(3900.0),
        _f(_hopper(835, 1671)),
        "fp32",
        _f({"links": 3, "per_link_gbps": 200.0, "total_gbps": 600.0}),
        _f((350, 400)),
        _f(0.80, "unverified"),
        "datacenter",
    ),
    Sku(
        "h200-sxm",
        "NVIDIA H200 SXM 141GB",
        ("h200 sxm", "h200"),
        _f(("0x2335",), "anchors-3.3"),
        _f(141),
        _f(143771),
        _f(4800.0),
        _f(_hopper(989, 1979)),
        "fp32",
        _f({"links": 18, "per_link_gbps": 26.562, "total_gbps": 900.0}),
        _f((200, 700)),
        _f(0.80, "anchors-4.2"),
        "datacenter",
        pci_subsystem_ids=_f(("0x18be", "0x18bf"), "anchors-3.3"),
    ),
    Sku(
        "h200-nvl",
        "NVIDIA H200 NVL 141GB",
        ("h200 nvl",),
        _f(("0x233b",), "anchors-3.3"),
        _f(141),
        _f(None),
        _f(4800.0),
        _f(_hopper(835, 1671)),
        "fp32",
        _f({"links": 3, "per_link_gbps": 300.0, "total_gbps": 900.0}),
        _f((300, 600)),
        _f(0.80, "unverified"),
        "datacenter",
        pci_subsystem_ids=_f(("0x1996",), "anchors-3.3"),
    ),
    Sku(
        "h800-sxm",
        "NVIDIA H800 SXM5 80GB",
        ("h800",),
        _f(("0x2324", "0x2322"), "pci-ids"),
        _f(80),
        _f(None),
        _f(3350.0),
        _f(_hopper(989, 1979)),
        "fp32",
        _f({"links": 8, "per_link_gbps": 25.0, "total_gbps": 400.0}),
        _f((200, 700)),
        _f(0.80, "unverified"),
        "datacenter",
    ),
    Sku(
        "h20",
        "NVIDIA H20 96GB",
        ("h20",),
        _f(("0x2329",), "pci-ids"),
        _f(96),
        _f(97871, "capture"),
        _f(4000.0, "unverified"),
        _f(_hopper(148, 296), "unverified"),
        "fp32",
        _f({"links": 18, "per_link_gbps": 26.562, "total_gbps": 900.0}, "unverified"),
        _f((None, 500), "capture"),
        _f(0.96, "unverified"),
        "datacenter",
    ),
    Sku(
        "b200",
        "NVIDIA B200 180GB",
        ("b200",),
        _f(("0x2901",), "pci-ids"),
        _f(180),
        _f(183359, "capture"),
        _f(8000.0),
        _f({"bf16": 2250.0, "fp16": 2250.0, "fp8": 4500.0}),
        "fp32",
        _f({"links": 18, "per_link_gbps": 50.0, "total_gbps": 1800.0}),
        _f((None, 1000)),
        _f(0.776, "anchors-4.2"),
        "datacenter",
    ),
    Sku(
        "l40s",
        "NVIDIA L40S 48GB",
        ("l40s",),
        _f(("0x26b9",), "anchors-3.3"),
        _f(48),
        _f(46068),
        _f(864.0),
        _f({"bf16": 362.0, "fp16": 362.0, "fp8": 733.0}),
        "fp32",
        _f(None),
        _f((None, 350)),
        _f(0.74, "anchors-4.2"),
        "l40s",
        memory_total_mib_ecc_off=_f(49152, "derived"),
    ),
    Sku(
        "l40",
        "NVIDIA L40 48GB",
        ("l40",),
        _f(("0x26b5",), "anchors-3.3"),
        _f(48),
        _f(None),
        _f(864.0),
        _f({"bf16": 181.0, "fp16": 181.0, "fp8": 362.0}),
        "fp32",
        _f(None),
        _f((None, 300)),
        _f(0.74, "unverified"),
        "l40s",
    ),
    Sku(
        "rtx-4090",
        "NVIDIA GeForce RTX 4090 24GB",
        ("rtx 4090",),
        _f(("0x2684",), "fixture"),
        _f(24),
        _f(24564, "fixture"),
        _f(1008.0),
        _f({"bf16": 165.2, "fp16": 165.2, "fp8": 330.3}),
        "fp32 (half rate on GeForce)",
        _f(None),
        _f((None, 450)),
        _f(1.0, "anchors-4.2"),
        "geforce",
    ),
    Sku(
        "rtx-4090d",
        "NVIDIA GeForce RTX 4090 D 24GB",
        ("rtx 4090 d", "rtx 4090d", "4090d"),
        _f(("0x2685",), "pci-ids"),
        _f(24),
        _f(24564, "derived"),
        _f(1008.0, "derived"),
        # 14,592 of the 4090's 16,384 CUDA cores at similar clocks
        # (docs/rules/evidence.md#datasheet).
        _f({"bf16": 147.1, "fp16": 147.1, "fp8": 294.2}, "derived"),
        "fp32 (half rate)",
        _f(None),
        _f((None, 425), "unverified"),
        _f(1.0, "anchors-4.2"),
        "geforce",
    ),
)

# docs/rules/evidence.md#performance acceptance bands (a proposal to calibrate): BF16 sustained
# fraction of dense peak — pass at or above the first figure, warn down to the
# second, fail below. Overridable with settings.EVIDENCE_MATMUL_BANDS.
BANDS = {
    "datacenter": (0.72, 0.62),
    "l40s": (0.66, 0.56),
    "geforce": (0.88, 0.78),
}
BANDWIDTH_BAND = (0.80, 0.70)
# Memory: exact MiB within ±0.5 % of the driver-reported figure
# (docs/rules/evidence.md#memory-check); against the
# marketed size (GB read as GiB, as vendors print it) only a coarse ±4 %.
MEMORY_TOLERANCE = 0.005
MARKETED_MEMORY_TOLERANCE = 0.04
BAND_SOURCE = "the vendor's datasheet figures; pass bands to be calibrated on known-good machines"

_BY_KEY = {sku.key: sku for sku in SKUS}


def by_key(key: str | None) -> Sku | None:
    return _BY_KEY.get(key or "")


def by_pci_id(device_id: str | None) -> Sku | None:
    wanted = (device_id or "").lower()
    if wanted and not wanted.startswith("0x"):
        wanted = "0x" + wanted
    for sku in SKUS:
        if wanted in sku.pci_device_ids.value:
            return sku
    return None


def _normalise(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


def _matches(alias: str, name: str) -> bool:
    # Whole tokens only: "h20" must not match "h200", nor "l40" match "l40s".
    return re.search(rf"(?<![a-z0-9]){re.escape(alias)}(?![a-z0-9])", name) is not None


def by_name(text: str | None) -> Sku | None:
    """The SKU a name string means: NVML names and offers' free text alike.

    The longest matching alias wins, so "RTX 4090 D" is not read as "RTX 4090"
    and "H200 NVL" not as H200 SXM; a bare "H100" or "H200" means the SXM part,
    the common rental form.
    """
    if not text:
        return None
    name = _normalise(text)
    best, best_len = None, 0
    for sku in SKUS:
        for alias in sku.names:
            if len(alias) > best_len and _matches(alias, name):
                best, best_len = sku, len(alias)
    return best


def expected_memory_mib(
    sku: Sku, *, ecc_enabled: bool | None
) -> tuple[int | None, Fact[int | None]]:
    """The driver-reported MiB for the SKU; ECC off only where it changes the figure."""
    off = sku.memory_total_mib_ecc_off
    if ecc_enabled is False and off.value is not None:
        return off.value, off
    return sku.memory_total_mib.value, sku.memory_total_mib


def matmul_band(sku: Sku, overrides: dict | None = None) -> tuple[float, float]:
    return tuple((overrides or {}).get(sku.band, BANDS[sku.band]))

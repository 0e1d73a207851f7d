"""Inventory parsing on every real `nvidia-smi -q -x` capture, the join on UUID / bus id,
and the findings for disagreements and spoof-ish inventories."""

import re

import pytest
from conftest import fixture_path
from diligence_harness.inventory import build_inventory, join_devices
from diligence_harness.nvsmi import (
    normalise_bus_id,
    parse_nvidia_smi_xml,
    parse_nvlink_status,
    parse_topology,
)
from diligence_harness.sources import parse_lspci


def _read(*parts: str) -> str:
    with open(fixture_path(*parts), encoding="utf-8") as handle:
        return handle.read()


def _doc(name: str) -> dict:
    return parse_nvidia_smi_xml(_read("nvidia-smi", name))


# file, <gpu>s, attached, driver, cuda, dtd, name of the first GPU, fb MiB of the first GPU
# (the SOURCES.md table beside the fixtures)
CAPTURES = [
    ("a100-sxm4-80gb-mig-1x-v12.xml", 1, 4, "535.54.03", "12.2", "v12", "NVIDIA A100-SXM4-80GB", 81920),  # noqa: E501
    ("a10g-1x-v11.xml", 1, 1, "515.105.01", "11.7", "v11", "NVIDIA A10G", 23028),
    ("tesla-t4-1x-v11.xml", 1, 1, "515.105.01", "11.7", "v11", "Tesla T4", 15360),
    ("rtx-3090-1x-v12.xml", 1, 1, "525.147.05", "12.0", "v12", "NVIDIA GeForce RTX 3090", 24576),
    ("rtx-4090-1x-v12.xml", 1, 1, "535.86.05", "12.2", "v12", "NVIDIA GeForce RTX 4090", 24564),
    ("tesla-v100s-pcie-32gb-8x-v11.xml", 8, 8, "460.73.01", "11.2", "v11", "Tesla V100S-PCIE-32GB", 32510),  # noqa: E501
    ("rtx-2070-2x-v13.xml", 2, 2, "590.44.01", "13.1", "v13", "NVIDIA GeForce RTX 2070", 8192),
    ("rtx-pro-6000-blackwell-maxq-1x-v13.xml", 1, 1, "590.44.01", "13.1", "v13",
     "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 97887),
    ("tesla-v100-sxm3-32gb-1x-v10.xml", 1, 16, "410.104", "10.0", "v10", "Tesla V100-SXM3-32GB", 32480),  # noqa: E501
    ("gtx-1070-2x-v9.xml", 2, 6, "384.66", None, "v9", "GeForce GTX 1070", 8112),
    ("rtx-4000-sff-ada-1x-v13.xml", 1, 1, "595.84", "13.2", "v13", "NVIDIA RTX 4000 SFF Ada Generation", 20475),  # noqa: E501
    ("tesla-p100-pcie-16gb-1x-v11.xml", 1, 1, "510.47.03", "11.6", "v11", "Tesla P100-PCIE-16GB", 16384),  # noqa: E501
    ("rtx-3060-1x-v12.xml", 1, 1, "570.124.04", "12.8", "v12", "NVIDIA GeForce RTX 3060", 12288),
]  # fmt: skip


def test_every_capture_in_the_fixtures_is_covered(fixtures_dir):
    import os

    captured = sorted(
        f for f in os.listdir(os.path.join(fixtures_dir, "nvidia-smi")) if f.endswith(".xml")
    )
    assert captured == sorted(row[0] for row in CAPTURES)
    assert len(captured) == 13


@pytest.mark.parametrize("name,gpus,attached,driver,cuda,dtd,first_name,fb_mib", CAPTURES)
def test_parses_real_capture(name, gpus, attached, driver, cuda, dtd, first_name, fb_mib):
    doc = _doc(name)
    assert len(doc["gpus"]) == gpus
    assert doc["attached_gpus"] == attached
    assert (doc["driver_version"], doc["cuda_version"], doc["dtd_version"]) == (driver, cuda, dtd)
    first = doc["gpus"][0]
    assert first["name"] == first_name
    assert first["memory_total_mib"] == fb_mib
    assert first["uuid"].startswith("GPU-")
    assert first["pci_bus_id"].count(":") == 2 and len(first["pci_bus_id"]) == 12
    assert first["power"]["max_limit_w"] > 0
    assert first["clocks_max"]["sm_mhz"] > 0
    # Every real capture yields an inventory, and the only document-level findings are
    # the ones the capture itself explains (trimmed: attached_gpus > listed).
    inventory, findings = build_inventory(nvml_doc=doc, cuda=None, pci=None)
    assert inventory["gpu_count"]["nvml"] == gpus
    assert ("INV-ATTACHED" in {f["id"] for f in findings}) == (attached != gpus)
    assert not {f["id"] for f in findings} & {"INV-DUP-UUID", "INV-SKU-NAME", "INV-SKU-MEMORY"}


def test_mig_a100_lists_its_instances():
    gpu = _doc("a100-sxm4-80gb-mig-1x-v12.xml")["gpus"][0]
    assert gpu["mig_mode_current"] == "Enabled"
    assert [m["gpu_instance_id"] for m in gpu["mig_devices"]] == [3, 4, 5, 6]
    assert {m["memory_total_mib"] for m in gpu["mig_devices"]} == {19968}
    assert (gpu["pci_device_id"], gpu["pci_subsystem_device_id"]) == ("0x20b2", "0x147f")
    _inventory, findings = build_inventory(
        nvml_doc=_doc("a100-sxm4-80gb-mig-1x-v12.xml"), cuda=None, pci=None
    )
    assert "INV-MIG" in {f["id"] for f in findings}


def test_eight_v100s_have_distinct_ids_and_join_out_of_order():
    doc = _doc("tesla-v100s-pcie-32gb-8x-v11.xml")
    uuids = [g["uuid"] for g in doc["gpus"]]
    assert len(set(uuids)) == 8
    assert len({g["pci_bus_id"] for g in doc["gpus"]}) == 8
    # The runtime enumerates in another order (CUDA FASTEST_FIRST): join must not use index.
    cuda = [
        {"cuda_index": i, "uuid": g["uuid"], "name": g["name"], "memory_total_mib": 32510 - 300}
        for i, g in enumerate(reversed(doc["gpus"]))
    ]
    inventory, findings = build_inventory(nvml_doc=doc, cuda=cuda, pci=None)
    assert len(inventory["gpus"]) == 8
    for row in inventory["gpus"]:
        assert row["nvml"]["uuid"] == row["cuda"]["uuid"]
    assert not [f for f in findings if f["id"] in ("INV-NAME", "INV-MEMORY", "INV-UNMATCHED")]


def test_runtime_disagreeing_with_nvml_for_the_same_uuid_is_a_finding():
    doc = _doc("a100-sxm4-80gb-mig-1x-v12.xml")
    gpu = doc["gpus"][0]
    cuda = [
        {
            "cuda_index": 0,
            "uuid": gpu["uuid"],
            "name": "NVIDIA A100-SXM4-40GB",
            "memory_total_mib": 40536,
        }
    ]
    _inventory, findings = build_inventory(nvml_doc=doc, cuda=cuda, pci=None)
    by_id = {f["id"]: f for f in findings}
    assert by_id["INV-NAME"]["severity"] == "fail"
    assert by_id["INV-NAME"]["evidence"] == {
        "nvml": "NVIDIA A100-SXM4-80GB",
        "cuda": "NVIDIA A100-SXM4-40GB",
    }
    assert by_id["INV-MEMORY"]["evidence"]["cuda_mib"] == 40536
    assert by_id["INV-MEMORY"]["subject"] == gpu["uuid"]


def test_join_falls_back_to_bus_id_and_reports_unmatched_devices():
    nvml = [
        {"uuid": "GPU-a", "pci_bus_id": "0000:07:00.0"},
        {"uuid": "GPU-b", "pci_bus_id": "0000:0f:00.0"},
    ]
    cuda = [{"uuid": None, "pci_bus_id": "0000:0f:00.0"}]
    rows = join_devices(nvml, cuda, [])
    assert rows[1]["cuda"] is cuda[0] and rows[0]["cuda"] is None
    _inventory, findings = build_inventory(nvml_doc={"gpus": nvml}, cuda=cuda, pci=None)
    assert {(f["id"], f["subject"]) for f in findings} >= {
        ("INV-UNMATCHED", "GPU-a"),
        ("INV-COUNT", None),
    }


def _spoofed(name: str = None, device_id: str = None, memory: str = None) -> dict:
    text = _read("nvidia-smi", "rtx-4090-1x-v12.xml")
    if name:
        text = text.replace(
            "<product_name>NVIDIA GeForce RTX 4090</product_name>",
            f"<product_name>{name}</product_name>",
        )
    if device_id:
        text = text.replace(
            "<pci_device_id>268410DE</pci_device_id>", f"<pci_device_id>{device_id}</pci_device_id>"
        )
    if memory:
        text = text.replace("<total>24564 MiB</total>", f"<total>{memory}</total>", 1)
    return parse_nvidia_smi_xml(text)


def test_spoofish_inventory_raises_findings():
    # A 4090 (PCI 0x2684) renamed to H100 by a user-space shim.
    _inv, findings = build_inventory(
        nvml_doc=_spoofed(name="NVIDIA H100 80GB HBM3"), cuda=None, pci=None
    )
    assert "INV-SKU-NAME" in {f["id"] for f in findings}
    # An L40S (0x26B9) whose NVML memory was rewritten to 16384 MiB (softmig,
    # docs/metrics.md#inventory-sources).
    doc = _spoofed(name="NVIDIA L40S", device_id="26B910DE", memory="16384 MiB")
    pci = [
        {
            "pci_bus_id": "0000:84:00.0",
            "pci_device_id": "0x2684",
            "pci_subsystem_device_id": "0x40bf",
            "pci_subsystem_vendor_id": "0x1458",
        }
    ]
    shims = {"ld_preload_env": "/usr/lib/libvgpu.so", "ld_so_preload": {"content": None}}
    _inv, findings = build_inventory(nvml_doc=doc, cuda=None, pci=pci, shims=shims)
    ids = {f["id"] for f in findings}
    assert {"INV-SKU-MEMORY", "INV-PCI-ID", "INV-LD-PRELOAD"} <= ids
    pci_finding = next(f for f in findings if f["id"] == "INV-PCI-ID")
    assert pci_finding["evidence"] == {"field": "pci_device_id", "nvml": "0x26b9", "pci": "0x2684"}


def test_power_capped_board_is_a_finding():
    _inv, findings = build_inventory(nvml_doc=_doc("rtx-3090-1x-v12.xml"), cuda=None, pci=None)
    cap = next(f for f in findings if f["id"] == "INV-POWER-CAP")
    assert cap["evidence"] == {"enforced_limit_w": 200.0, "default_limit_w": 350.0}


def test_bus_ids_normalise_across_tools():
    assert normalise_bus_id("00000000:00:1E.0") == "0000:00:1e.0"
    assert normalise_bus_id("00000000:84:00.0") == "0000:84:00.0"
    assert normalise_bus_id("84:00.0") == "0000:84:00.0"


def test_topology_lspci_and_nvlink_parsers():
    topo = parse_topology(_read("constructed", "topo-m-4x-a100.txt"))
    assert topo["matrix"]["GPU0"]["GPU3"] == "NV12"
    assert topo["nvlink_peers"]["GPU2"] == {"GPU0": "NV12", "GPU1": "NV12", "GPU3": "NV12"}
    assert topo["affinity"]["GPU2"]["CPU Affinity"] == "32-63"
    devices = parse_lspci(_read("constructed", "lspci-nn-D.txt"))
    assert [(d["pci_bus_id"], d["pci_device_id"]) for d in devices] == [
        ("0000:07:00.0", "0x2330"),
        ("0000:0f:00.0", "0x2330"),
    ]
    links = parse_nvlink_status(_read("constructed", "nvlink-s-2x.txt"))
    assert [link["speed_GBps"] for link in links[0]["links"]] == [26.562, 1.562, None]
    assert links[1]["uuid"].startswith("GPU-bbbbbbbb")


def test_entity_declarations_are_refused():
    with pytest.raises(ValueError):
        parse_nvidia_smi_xml('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><nvidia_smi_log/>')


def _l4_from_its_sibling(name: str = "NVIDIA L4") -> dict:
    """An L4 (AD104, PCI 27B8, 23034 MiB) built from the real capture of its AD104 sibling,
    the RTX 4000 SFF Ada (no real L4 capture is among the fixtures; SOURCES.md)."""
    text = _read("nvidia-smi", "rtx-4000-sff-ada-1x-v13.xml")
    for old, new in (
        (
            "<product_name>NVIDIA RTX 4000 SFF Ada Generation</product_name>",
            f"<product_name>{name}</product_name>",
        ),
        ("<pci_device_id>27B010DE</pci_device_id>", "<pci_device_id>27B810DE</pci_device_id>"),
        ("<total>20475 MiB</total>", "<total>23034 MiB</total>"),
    ):
        assert old in text
        text = text.replace(old, new, 1)
    return parse_nvidia_smi_xml(text)


@pytest.mark.parametrize(
    "name,renamed",
    [
        ("NVIDIA L4", False),
        ("NVIDIA H200", True),  # the renamed L4 claiming H200
        ("NVIDIA H200 NVL", True),
        ("NVIDIA L40S", True),
        ("NVIDIA L40", True),
        ("Tesla T4", True),
    ],
)
def test_a_renamed_card_is_caught_by_its_pci_id(name, renamed):
    _inv, findings = build_inventory(nvml_doc=_l4_from_its_sibling(name), cuda=None, pci=None)
    flagged = [f for f in findings if f["id"] == "INV-SKU-NAME"]
    assert bool(flagged) == renamed
    if renamed:
        assert flagged[0]["severity"] == "fail"
        assert flagged[0]["evidence"]["pci_device_id"] == "0x27b8"
        assert flagged[0]["evidence"]["expected_family"] == "L4"


def test_a_name_claiming_a_known_card_on_an_unknown_pci_id_is_caught():
    # An RTX 2070 (PCI 1F02, not in the harness's table) renamed H200: the name alone
    # does not make it one.
    text = _read("nvidia-smi", "rtx-2070-2x-v13.xml").replace(
        "NVIDIA GeForce RTX 2070", "NVIDIA H200"
    )
    _inv, findings = build_inventory(nvml_doc=parse_nvidia_smi_xml(text), cuda=None, pci=None)
    flagged = [f for f in findings if f["id"] == "INV-SKU-NAME"]
    assert len(flagged) == 2
    assert flagged[0]["evidence"]["name_claims"] == ["H200", "H200 NVL"]
    assert flagged[0]["evidence"]["expected_family"] is None


def test_a_4090_named_as_its_look_alike_is_caught():
    _inv, findings = build_inventory(
        nvml_doc=_spoofed(name="NVIDIA GeForce RTX 4090 D"), cuda=None, pci=None
    )
    assert "INV-SKU-NAME" in {f["id"] for f in findings}


@pytest.mark.parametrize("fixture", ["tesla-t4-1x-v11.xml", "a10g-1x-v11.xml"])
def test_pass_through_is_a_whole_card_not_a_vgpu(fixture):
    doc = _doc(fixture)
    assert doc["gpus"][0]["virtualization_mode"] == "Pass-Through"
    _inv, findings = build_inventory(nvml_doc=doc, cuda=None, pci=None)
    assert "INV-VIRT" not in {f["id"] for f in findings}
    text = _read("nvidia-smi", fixture).replace(
        "<virtualization_mode>Pass-Through</virtualization_mode>",
        "<virtualization_mode>VGPU</virtualization_mode>",
    )
    _inv, findings = build_inventory(nvml_doc=parse_nvidia_smi_xml(text), cuda=None, pci=None)
    assert "INV-VIRT" in {f["id"] for f in findings}


def _versions(name: str, *, driver: str | None = None, cuda: str | None = None) -> str:
    text = _read("nvidia-smi", name)
    for tag, value in (("driver_version", driver), ("cuda_version", cuda)):
        if value is not None:
            text, n = re.subn(rf"<{tag}>[^<]*</{tag}>", f"<{tag}>{value}</{tag}>", text, count=1)
            assert n == 1
    return text


def _version_findings(text: str) -> list[tuple[str, str, str]]:
    _inventory, found = build_inventory(nvml_doc=parse_nvidia_smi_xml(text), cuda=None, pci=None)
    return [
        (f["id"], f["severity"], f["message"])
        for f in found
        if f["id"] in ("INV-DRIVER-CUDA", "INV-CUDA-UNKNOWN")
    ]


@pytest.mark.parametrize("name", [row[0] for row in CAPTURES])
def test_every_real_capture_has_a_possible_driver_and_cuda_pair(name):
    assert _version_findings(_read("nvidia-smi", name)) == []


@pytest.mark.parametrize(
    "printed", ["Not Found", "N/A", "[N/A]", "Not Supported", "Unknown Error", "12", "twelve"]
)
def test_a_cuda_placeholder_is_recorded_as_absent_and_flagged(printed):
    """nvidia-smi prints "Not Found" where the driver's CUDA library is missing: no version."""
    text = _versions("rtx-4090-1x-v12.xml", cuda=printed)
    doc = parse_nvidia_smi_xml(text)
    inventory, _found = build_inventory(nvml_doc=doc, cuda=None, pci=None)
    placeholder = printed not in ("12", "twelve")
    assert (doc["cuda_version"] is None) is placeholder
    assert (inventory["driver"]["cuda_driver_version"] is None) is placeholder
    assert inventory["driver"]["driver_version"] == "535.86.05"
    assert _version_findings(text) == [
        (
            "INV-CUDA-UNKNOWN",
            "warn",
            f"nvidia-smi printed {printed} as the CUDA version: unknown, not a pass (the "
            "driver's CUDA library may be missing or broken).",
        )
    ]


def test_a_driver_placeholder_is_recorded_as_absent_and_flagged():
    text = _versions("tesla-t4-1x-v11.xml", driver="N/A")
    inventory, _found = build_inventory(nvml_doc=parse_nvidia_smi_xml(text), cuda=None, pci=None)
    assert inventory["driver"]["driver_version"] is None
    assert _version_findings(text) == [
        (
            "INV-DRIVER-CUDA",
            "warn",
            "nvidia-smi printed N/A as the driver version: unknown, not a pass.",
        )
    ]


# (driver, CUDA as nvidia-smi printed them, the finding's message or None): a driver reports
# the newest CUDA it supports, so its branch lies between that version's minimum driver and
# the next version's (the minimums: NVIDIA's "CUDA Toolkit and Corresponding Driver Versions").
PAIRS = [
    ("535.54.03", "12.2", None),
    ("535.216.01", "12.2", None),  # the long-term branch stays on 12.2
    ("550.40.07", "12.4", None),  # a 550 beta, before the 12.4 toolkit's 550.54.14
    ("565.57.01", "12.7", None),  # no 12.7 toolkit shipped; R565 reports it
    ("600.10", "13.3", None),  # newer than the table: only the minimum is known
    (
        "530.30.02",
        "12.2",
        "Driver 530.30.02 cannot report CUDA 12.2: that CUDA version needs a driver of branch "
        "535 or newer (535.54.03).",
    ),
    (
        "550.54.14",
        "12.2",
        "Driver 550.54.14 cannot report CUDA 12.2: nvidia-smi reports the newest CUDA the "
        "driver supports, and from driver branch 545 that is CUDA 12.3 or newer.",
    ),
    (
        "470.82.01",
        "13.0",
        "Driver 470.82.01 cannot report CUDA 13.0: that CUDA version needs a driver of branch "
        "580 or newer (580.65.06).",
    ),
]


@pytest.mark.parametrize("driver,cuda,message", PAIRS)
def test_an_impossible_driver_and_cuda_pair_is_flagged(driver, cuda, message):
    text = _versions("rtx-4090-1x-v12.xml", driver=driver, cuda=cuda)
    expected = [("INV-DRIVER-CUDA", "fail", message)] if message else []
    assert _version_findings(text) == expected

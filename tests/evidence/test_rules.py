"""Verification rules, table-tested on inventories built from real `nvidia-smi -q -x` captures."""

from decimal import Decimal

import pytest
from diligence_harness.inventory import build_inventory
from diligence_harness.nvsmi import parse_nvidia_smi_xml

from apps.evidence import datasheet
from apps.evidence.bundle import raw_xml_gpus
from apps.evidence.rules import (
    Check,
    Context,
    Facts,
    identity,
    network,
    performance,
    service,
    verdict,
    verify,
    versions,
)
from tests.evidence.conftest import FIXTURES

SLO = {"p95_ttft_ms": 1500, "error_rate_pct": Decimal("0.5"), "peak_memory_pct": 90}


def facts_from(xml_name: str, *, edit=lambda text: text, cuda=None) -> Facts:
    """Facts as the server reads them: the inventory plus the raw XML artifact."""
    text = edit((FIXTURES / xml_name).read_text())
    inventory, _ = build_inventory(nvml_doc=parse_nvidia_smi_xml(text), cuda=cuda, pci=None)
    artifact = {"media_type": "application/xml", "encoding": "utf-8", "content": text}
    return Facts(
        gpus=inventory["gpus"],
        gpu_count=inventory["gpu_count"],
        sources={"nvml": {"status": "ok"}},
        driver=inventory["driver"],
        raw_xml_gpus=raw_xml_gpus({"artifacts": [artifact]}),
    )


def declared(model, count, gib=None, **more):
    return Context(
        declared={
            "accelerator_model": model,
            "accelerator_count": count,
            "cards_per_node": count,
            "memory_per_card_gib": gib,
            **more,
        },
        slo=SLO,
    )


def by_key(checks: list[Check]) -> dict:
    return {c.key: c for c in checks}


# (fixture, XML edit, declared model, cards, GiB) → expected status of count, sku, memory
IDENTITY_TABLE = [
    ("rtx-4090-1x-v12.xml", None, "NVIDIA GeForce RTX 4090", 1, 24, ("pass", "pass", "pass")),
    ("rtx-4090-1x-v12.xml", None, "NVIDIA H200 SXM 141GB", 8, 140.4, ("fail", "fail", "fail")),
    (  # spoofed: the name says H200, the PCI id and memory are a 4090's
        "rtx-4090-1x-v12.xml",
        ("NVIDIA GeForce RTX 4090", "NVIDIA H200"),
        "NVIDIA H200 SXM 141GB",
        1,
        None,
        ("pass", "fail", "fail"),
    ),
    (  # spoofed: name and PCI id say H200, the memory is an 80 GB A100's
        "a100-sxm4-80gb-mig-1x-v12.xml",
        ("NVIDIA A100-SXM4-80GB", "NVIDIA H200", "20B210DE", "233510DE"),
        "NVIDIA H200",
        1,
        None,
        ("pass", "pass", "fail"),
    ),
    ("a100-sxm4-80gb-mig-1x-v12.xml", None, "A100 80GB", 1, 80, ("pass", "pass", "warn")),
    (
        "tesla-v100s-pcie-32gb-8x-v11.xml",
        None,
        "Tesla V100S",
        8,
        32,
        ("pass", "warn", "not_measured"),
    ),
    ("tesla-t4-1x-v11.xml", None, "Tesla T4", 2, 16, ("fail", "warn", "warn")),
]


def _edit(pairs):
    if not pairs:
        return lambda text: text

    def apply(text):
        for old, new in zip(pairs[::2], pairs[1::2]):
            assert old in text
            text = text.replace(old, new)
        return text

    return apply


@pytest.mark.parametrize("xml,edit,model,cards,gib,expected", IDENTITY_TABLE)
def test_identity_on_real_captures(xml, edit, model, cards, gib, expected):
    checks = by_key(identity.checks(facts_from(xml, edit=_edit(edit)), declared(model, cards, gib)))
    statuses = tuple(
        checks[k].status for k in ("identity.device_count", "identity.sku", "identity.memory")
    )
    assert statuses == expected, {k: checks[k].detail for k in checks}


def test_spoofed_name_is_explained():
    edit = _edit(("NVIDIA GeForce RTX 4090", "NVIDIA H200"))
    sku = identity.check_sku(facts_from("rtx-4090-1x-v12.xml", edit=edit), declared("H200", 1))
    assert "the name says NVIDIA H200 SXM 141GB but PCI id 0x2684" in sku.detail
    assert sku.causes == []  # causes are added by verify(), via the troubleshooting table
    annotated = by_key(verify(facts_from("rtx-4090-1x-v12.xml", edit=edit), declared("H200", 1)))
    assert any("look-alike" in cause for cause in annotated["identity.sku"].causes)


def test_inventory_edited_against_the_raw_xml_fails():
    facts = facts_from("rtx-4090-1x-v12.xml")
    facts.gpus[0]["nvml"]["name"] = "NVIDIA H200"
    facts.gpus[0]["nvml"]["memory_total_mib"] = 143771
    check = identity.check_sources_agree(facts)
    assert check.status == "fail" and "raw XML" in check.detail


def test_runtime_disagreeing_with_nvml_fails():
    cuda = [
        {
            "pci_bus_id": "0000:84:00.0",
            "name": "NVIDIA GeForce RTX 4090",
            "memory_total_mib": 16384,
            "uuid": "GPU-71d1acc2-662d-2166-bf9f-65272d2fc437",
        }
    ]
    facts = facts_from("rtx-4090-1x-v12.xml", cuda=cuda)
    facts.sources["cuda_runtime"] = {"status": "ok"}
    assert identity.check_sources_agree(facts).status == "fail"  # softmig-style 16384 MiB


@pytest.mark.parametrize(
    "shims,status",
    [
        ({"ld_preload_env": "", "ld_so_preload": {"content": None}}, "pass"),
        ({"ld_preload_env": "/opt/libvgpu.so", "ld_so_preload": {}}, "fail"),
        ({"ld_preload_env": "", "ld_so_preload": {"content": "/lib/x.so\n"}}, "fail"),
        (None, "not_measured"),
    ],
)
def test_interposer(shims, status):
    assert identity.check_interposer(Facts(shims=shims)).status == status


@pytest.mark.parametrize(
    "probes,status",
    [
        ([{"device": "cuda:0", "ok": True, "touched_bytes": 2**34}], "pass"),
        ([{"device": "cuda:0", "ok": False, "error": "CUDA out of memory"}], "fail"),
        ([{"device": None, "skipped": "--no-alloc-probe"}], "not_measured"),
    ],
)
def test_alloc_probe(probes, status):
    assert identity.check_alloc_probe(Facts(alloc_probe=probes)).status == status


@pytest.mark.parametrize(
    "measured,declared_version,status",
    [
        ("550.127.05", "550.127.05", "pass"),
        ("550.127.05", "550", "pass"),
        ("550.54.14", "550.127.05", "warn"),
        ("535.86.05", "550.127.05", "fail"),
        (None, "550", "not_measured"),
        ("550.1", "", "not_measured"),
    ],
)
def test_version_comparison(measured, declared_version, status):
    assert versions.compare_versions(measured, declared_version) == status


def test_environment_items():
    env = {
        "dev_shm": {"total_bytes": 64 * 2**20},
        "ulimits": {"open_files": {"soft": 1024}, "locked_memory_bytes": {"soft": 8 << 20}},
        "clock_sync": {"adjtimex": {"synchronised": False}},
    }
    checks = by_key(
        versions.checks(
            Facts(environment=env), declared("H100", 8, inter_node_network="infiniband")
        )
    )
    assert checks["versions.shm"].status == "warn"
    assert checks["versions.ulimits"].status == "warn"
    assert "locked memory" in checks["versions.ulimits"].detail
    assert checks["versions.clock_sync"].status == "warn"


def _bench(bf16_by_device, regime="sustained", burst=None, bw=None):
    matmul = [
        {"device": device, "dtype": "bf16", "regime": regime, "round": r + 1, "median": value}
        for device, values in bf16_by_device.items()
        for r, value in enumerate(values)
    ]
    if burst:
        matmul += [
            {"device": "cuda:0", "dtype": "bf16", "regime": "burst", "round": 1, "median": burst}
        ]
    memory = (
        [{"device": "cuda:0", "kernel": "copy", "round": 1, "best": bw, "median": bw}] if bw else []
    )
    return {"backend": "cuda", "matmul": matmul, "memory_bw": memory}


def _h100_facts(bench):
    return Facts(
        gpus=[{"nvml": {"name": "NVIDIA H100 80GB HBM3", "pci_device_id": "0x2330"}}], bench=bench
    )


@pytest.mark.parametrize(
    "tflops,status", [(795.0, "pass"), (720.0, "pass"), (650.0, "warn"), (520.0, "fail")]
)
def test_matmul_bands_for_h100(tflops, status):
    checks = by_key(
        performance.checks(_h100_facts(_bench({"cuda:0": [tflops]})), declared("H100", 1))
    )
    assert checks["performance.matmul.bf16"].status == status


def test_bands_are_configurable():
    context = declared("H100", 1)
    context.matmul_bands = {"datacenter": (0.85, 0.75)}
    checks = by_key(performance.checks(_h100_facts(_bench({"cuda:0": [795.0]})), context))
    assert checks["performance.matmul.bf16"].status == "warn"


def test_geforce_band_uses_the_fp32_accumulate_peak():
    facts = Facts(
        gpus=[{"nvml": {"name": "NVIDIA GeForce RTX 4090", "pci_device_id": "0x2684"}}],
        bench=_bench({"cuda:0": [160.0]}),
    )
    check = by_key(performance.checks(facts, declared("RTX 4090", 1)))["performance.matmul.bf16"]
    assert check.status == "pass" and "165.2" in check.measured


def test_burst_sustained_slowest_gpu_bandwidth_and_spread():
    bench = _bench(
        {"cuda:0": [790, 640], "cuda:1": [795, 800], "cuda:2": [600, 610]}, burst=900.0, bw=2500.0
    )
    checks = by_key(performance.checks(_h100_facts(bench), declared("H100", 3)))
    assert checks["performance.burst_vs_sustained"].status == "fail"
    assert checks["performance.slowest_gpu"].status == "fail"
    assert checks["performance.slowest_gpu"].measured.startswith("cuda:2")
    assert checks["performance.bandwidth"].status == "warn"  # 2500 of 3350 GB/s = 0.75
    assert checks["performance.round_cv"].status == "warn"  # cuda:0 790 vs 640


def test_cpu_backend_is_not_measured():
    checks = performance.checks(Facts(bench={"backend": "python-fallback"}), declared("H100", 1))
    assert [c.status for c in checks] == ["not_measured"]


def _level(c, n, p95, errors=0, tok=(100.0, 101.0)):
    from apps.evidence.recompute import spread

    insufficient = [] if n >= 130 else ["p95"]
    return {
        "concurrency": c,
        "n": n,
        "errors": errors,
        "error_rate": errors / n,
        "ttft_ms": {"n": n - errors, "p50": p95 / 2, "p95": p95, "insufficient": insufficient},
        "tpot_ms": {"n": n},
        "output_tok_s": spread(list(tok)),
        "effective_concurrency": [c * 0.99],
    }


def test_service_levels_only_graded_with_enough_samples():
    levels = [
        _level(1, 200, 300.0),
        _level(8, 200, 1400.0),
        _level(16, 200, 2100.0),
        _level(32, 40, 3000.0),
    ]
    checks = by_key(service.checks(Facts(levels=levels), declared("H100", 8)))
    assert checks["service.ttft_p95.c1"].status == "pass"
    assert checks["service.ttft_p95.c16"].status == "fail"
    assert checks["service.ttft_p95.c32"].status == "not_measured"
    assert checks["service.ttft_p95.c32"].detail == (
        "Not measured: too few completed requests for a P95 "
        "(40 requests; a P95 needs at least 130: send 90 more)."
    )
    assert checks["service.max_concurrency"].measured == 8
    assert checks["service.peak_memory"].status == "not_measured"


@pytest.mark.parametrize(
    "completed,status,shortfall",
    [
        (0, "not_measured", "0 requests; a P95 needs at least 130: send 130 more"),
        (12, "not_measured", "12 requests; a P95 needs at least 130: send 118 more"),
        (129, "not_measured", "129 requests; a P95 needs at least 130: send 1 more"),
        (130, "fail", ""),  # P95 over the SLO: with enough samples it is graded
    ],
)
def test_a_level_below_the_p95_minimum_is_not_measured_never_passed_or_failed(
    completed, status, shortfall
):
    level = _level(4, completed + 1, 9000.0, errors=1)  # errors have no first token
    checks = by_key(service.checks(Facts(levels=[level]), declared("H100", 8)))
    check = checks["service.ttft_p95.c4"]
    assert check.status == status
    if shortfall:
        assert shortfall in check.detail
        assert checks["service.max_concurrency"].status == "not_measured"
        assert f"concurrency 4: {shortfall}" in checks["service.max_concurrency"].detail
    else:
        assert checks["service.max_concurrency"].status == "fail"


@pytest.mark.parametrize(
    "n,missing,text",
    [
        (0, 130, "0 requests; a P95 needs at least 130: send 130 more"),
        (1, 129, "1 request; a P95 needs at least 130: send 129 more"),
        (129, 1, "129 requests; a P95 needs at least 130: send 1 more"),
        (130, 0, ""),
        (1000, 0, ""),
    ],
)
def test_samples_shortfall(n, missing, text):
    from apps.evidence.recompute import P95_MIN_SAMPLES, samples_missing, samples_shortfall

    assert P95_MIN_SAMPLES == 130
    assert samples_missing(n) == missing
    assert samples_shortfall(n) == text


@pytest.mark.parametrize(
    "peaks_mib,status,measured",
    [
        # H100 80 GB: memory.total 81,559 MiB; the SLO is < 90 %
        # (docs/rules/evidence.md#service-levels).
        ({"GPU-a": 70_000, "GPU-b": 60_000}, "pass", "85.8 % on GPU-a"),
        ({"GPU-a": 70_000, "GPU-b": 75_000}, "fail", "92.0 % on GPU-b"),
        ({}, "not_measured", None),
    ],
)
def test_peak_device_memory_against_the_slo(peaks_mib, status, measured):
    gpus = [
        {"uuid": "GPU-a", "nvml": {"memory_total_mib": 81_559}},
        {"uuid": "GPU-b", "nvml": {"memory_total_mib": 81_559}},
    ]
    cells = [{"concurrency": 8, "gpu_memory_peak_mib": peaks_mib}]
    facts = Facts(gpus=gpus, cells=cells, levels=[_level(8, 200, 300.0)])
    check = by_key(service.checks(facts, declared("H100", 2)))["service.peak_memory"]
    assert check.status == status
    assert check.measured == measured


def test_error_rate_and_round_spread():
    levels = [_level(4, 200, 300.0, errors=2, tok=(100.0, 140.0))]
    checks = by_key(service.checks(Facts(levels=levels), declared("H100", 8)))
    assert checks["service.error_rate.c4"].status == "fail"  # 1 % ≥ 0.5 %
    assert checks["service.round_cv"].status == "warn"
    annotated = by_key(verify(Facts(levels=levels), declared("H100", 8)))
    assert any("batching" in cause for cause in annotated["service.max_concurrency"].causes)


@pytest.mark.parametrize(
    "rtt,target,status",
    [
        (20.0, 100.0, "pass"),
        (60.0, 100.0, "warn"),
        (50.0, 100.0, "pass"),
        (60.0, None, "not_measured"),
    ],
)
def test_rtt_against_the_latency_budget(rtt, target, status):
    probes = [{"host": "api:443", "rtt_ms": {"n": 20, "p50": rtt}, "loss": 0.0}]
    check = network.check_rtt(probes, target)
    assert check.status == status
    if status == "warn":
        assert "closer to the users" in check.detail
    assert check.measured.startswith(f"{rtt:.1f} ms")


@pytest.mark.parametrize(
    "statuses,expected",
    [
        (
            {
                "identity.device_count": "pass",
                "identity.sku": "pass",
                "identity.memory": "pass",
                "performance.matmul.bf16": "pass",
            },
            "verified",
        ),
        (
            {
                "identity.device_count": "pass",
                "identity.sku": "pass",
                "identity.memory": "pass",
                "performance.matmul.bf16": "warn",
            },
            "findings",
        ),
        (
            {
                "identity.device_count": "fail",
                "identity.sku": "pass",
                "identity.memory": "pass",
                "performance.matmul.bf16": "pass",
            },
            "failed",
        ),
        (
            {
                "identity.device_count": "pass",
                "identity.sku": "pass",
                "identity.memory": "pass",
                "performance.matmul": "not_measured",
            },
            "insufficient",
        ),
    ],
)
def test_verdict(statuses, expected):
    checks = [Check(key, key.split(".")[0], key, status) for key, status in statuses.items()]
    assert verdict(checks) == expected


REQUIRED_SKUS = [
    "a100-sxm4-40gb",
    "a100-sxm4-80gb",
    "a100-pcie-40gb",
    "a100-pcie-80gb",
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h200-sxm",
    "h200-nvl",
    "h800-sxm",
    "h20",
    "b200",
    "l40s",
    "l40",
    "rtx-4090",
    "rtx-4090d",
]


def test_datasheet_covers_the_required_skus_with_sources():
    assert {s.key for s in datasheet.SKUS} >= set(REQUIRED_SKUS)
    for sku in datasheet.SKUS:
        for value in vars(sku).values():
            if isinstance(value, datasheet.Fact):
                assert value.source in datasheet.SOURCES
        assert sku.dense_tflops.value["bf16"] > 0 and sku.memory_bandwidth_gbps.value > 0


@pytest.mark.parametrize(
    "pci,key",
    [
        ("0x2330", "h100-sxm"),
        ("0x2335", "h200-sxm"),
        ("233b", "h200-nvl"),
        ("0x2324", "h800-sxm"),
        ("0x2329", "h20"),
        ("0x2685", "rtx-4090d"),
        ("0x1eb8", None),
    ],
)
def test_sku_by_pci_id(pci, key):
    sku = datasheet.by_pci_id(pci)
    assert (sku.key if sku else None) == key


@pytest.mark.parametrize(
    "name,key",
    [
        ("NVIDIA H200", "h200-sxm"),
        ("NVIDIA H200 NVL", "h200-nvl"),
        ("NVIDIA H20", "h20"),
        ("NVIDIA GeForce RTX 4090 D", "rtx-4090d"),
        ("NVIDIA L40", "l40"),
        ("NVIDIA L40S", "l40s"),
        ("Tesla T4", None),
    ],
)
def test_sku_by_name(name, key):
    sku = datasheet.by_name(name)
    assert (sku.key if sku else None) == key

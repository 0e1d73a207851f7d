"""Demo: an evidence bundle for the leading offer, received through the real upload service.

No real ``nvidia-smi -q -x`` capture of an H200 node is held, so the bundle is
built here from the datasheet values the server checks against
(``apps.evidence.gpu_tables`` and ``apps.evidence.datasheet``): eight cards with
the H200 SXM's PCI device id and driver-reported memory, matmul and memory
bandwidth at the healthy fraction of the datasheet peak. It is then uploaded
with a harness token and verified like any bundle, and marked as demo data so
that every page and packet chapter showing it says the numbers were not
measured. The load test was not run, so its checks read "not measured"; the
environment states the declared runtime versions, and the rented machine's probe and the
between-nodes run are the made-up ones of ``apps.evidence.demo_network``.
"""

import hashlib
import json
import uuid
from datetime import timedelta

from django.utils import timezone

from apps.evidence import datasheet, demo_network, demo_node, demo_train, gpu_tables
from apps.evidence.models import EvidenceBundle
from apps.evidence.recompute import bandwidth_gbps, matmul_tflops
from apps.evidence.services import bundle_mark_demo, bundle_receive, harness_token_create
from apps.offers.models import Offer

DEMO_VENDOR = "Aurora Compute Pte. Ltd."
DEMO_SKU = "h200-sxm"
DEMO_NOTE = (
    "Demo data: built from the H200 SXM datasheet values (PCI device id, memory, peak "
    "throughput), made-up network round trips and made-up endpoint answers, not measured on "
    "the vendor's machines."
)
DEMO_NOTE += " The copies between cards and the disk timings are made up from the declared spec."
TOKEN_LABEL = "Demo evidence (datasheet values)"
GPUS = 8
ROUNDS = 3
MATMUL_SIZE = 8192
BANDWIDTH_BYTES = 4 * 2**30


def _xml(sku, product, driver: str, cuda: str) -> str:
    """An ``nvidia-smi -q -x`` log of one node, only the elements the server reads."""
    gpus = []
    for index in range(GPUS):
        device_raw = product.pci_device_ids[0][2:].upper() + "10DE"
        gpus.append(
            f'<gpu id="00000000:{0x18 + index * 0x10:02X}:00.0">'
            f"<product_name>NVIDIA H200</product_name>"
            f"<uuid>GPU-de000000-0000-4000-8000-{index:012d}</uuid>"
            f"<pci><pci_device_id>{device_raw}</pci_device_id></pci>"
            f"<fb_memory_usage><total>{sku.memory_total_mib.value} MiB</total>"
            f"<used>1 MiB</used></fb_memory_usage>"
            f"<mig_mode><current_mig>Disabled</current_mig></mig_mode>"
            f"<gpu_virtualization_mode><virtualization_mode>None</virtualization_mode>"
            f"</gpu_virtualization_mode><processes></processes></gpu>"
        )
    return (
        '<?xml version="1.0" ?><nvidia_smi_log>'
        f"<driver_version>{driver}</driver_version><cuda_version>{cuda}</cuda_version>"
        f"<attached_gpus>{GPUS}</attached_gpus>{''.join(gpus)}</nvidia_smi_log>"
    )


def _nvml(sku, product, index: int, driver: str) -> dict:
    device = product.pci_device_ids[0]
    return {
        "name": "NVIDIA H200",
        "uuid": f"GPU-de000000-0000-4000-8000-{index:012d}",
        "pci_bus_id": f"0000:{0x18 + index * 0x10:02x}:00.0",
        "pci_device_id": device,
        "pci_device_id_raw": device[2:].upper() + "10DE",
        "pci_vendor_id": "0x10de",
        "memory_total_mib": sku.memory_total_mib.value,
        "memory_reserved_mib": 512,
        "memory_used_mib": 1,
        "ecc_mode_current": "Enabled",
        "mig_mode_current": "Disabled",
        "virtualization_mode": "None",
        "minor_number": index,
        "process_count": 0,
    }


def _times(rate_per_ns: float, amount: float, spread: tuple[float, ...]) -> list[int]:
    return [int(amount / (rate_per_ns * factor)) for factor in spread]


def _bench(sku) -> dict:
    """bf16 matmul at the healthy fraction of dense peak; copy bandwidth at 85 % of spec."""
    peak = sku.dense_tflops.value["bf16"]
    fraction = max(sku.healthy_fraction.value, datasheet.matmul_band(sku)[0] + 0.02)
    flop = 2 * MATMUL_SIZE**3
    matmul, memory = [], []
    for device in range(GPUS):
        for round_ in range(1, ROUNDS + 1):
            for regime, drop in (("burst", 1.0), ("sustained", 0.985)):
                tflops = peak * fraction * drop * (1 - 0.004 * device)
                record = {
                    "device": f"cuda:{device}",
                    "dtype": "bf16",
                    "m": MATMUL_SIZE,
                    "n": MATMUL_SIZE,
                    "k": MATMUL_SIZE,
                    "layout": "NN",
                    "regime": regime,
                    "round": round_,
                    "warmup_iters": 5,
                    "timed_iters": 5,
                    "timing": "cuda_events",
                    "flop_per_iter": float(flop),
                    "iter_ns": _times(tflops * 1e3, flop, (0.99, 1.0, 1.005, 0.998, 1.002)),
                }
                record["tflops"] = matmul_tflops(record)
                matmul.append(record)
            gbps = sku.memory_bandwidth_gbps.value * 0.85
            record = {
                "device": f"cuda:{device}",
                "kernel": "copy",
                "round": round_,
                "array_bytes": BANDWIDTH_BYTES,
                "bytes_per_iter": 2 * BANDWIDTH_BYTES,
                "elem_bytes": 2,
                "discard_first": True,
                "warmup_iters": 2,
                "timed_iters": 5,
                "timing": "cuda_events",
                "iter_ns": _times(gbps, 2 * BANDWIDTH_BYTES, (0.99, 1.0, 1.003, 0.997, 1.001)),
            }
            record["GBps"] = bandwidth_gbps(record)
            memory.append(record)
    return {
        "backend": "cuda",
        "backend_note": DEMO_NOTE,
        "seed": 42,
        "devices": [f"cuda:{i}" for i in range(GPUS)],
        "matmul": matmul,
        "memory_bw": memory,
        "skipped": [{"what": "fp16/fp8 matmul", "reason": "demo data"}],
        "telemetry": [],
        "spread": [],
    }


def _step(result, started, *, reason=None) -> dict:
    if result is None:
        return {
            "status": "skipped",
            "reason": reason,
            "result": None,
            "started_utc": None,
            "finished_utc": None,
            "duration_s": None,
        }
    stamp = started.isoformat().replace("+00:00", "Z")
    return {
        "status": "ok",
        "reason": None,
        "result": result,
        "started_utc": stamp,
        "finished_utc": stamp,
        "duration_s": 1.0,
    }


def _artifact(name: str, content: str, media_type: str = "application/xml") -> dict:
    data = content.encode("utf-8")
    return {
        "name": name,
        "media_type": media_type,
        "encoding": "utf-8",
        "content": content,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }


def demo_bundle(offer, *, nonce: str, when) -> dict:
    """The bundle document for ``offer``'s declared H200 node, as the harness would write it."""
    sku, product = datasheet.by_key(DEMO_SKU), gpu_tables.by_pci_id("0x2335")
    assert sku is not None and product is not None and sku.memory_total_mib.value is not None
    runtime_mib = sku.memory_total_mib.value - 512
    spec = offer.declared_spec
    driver, cuda = spec.driver_version, spec.cuda_version
    gpus = [
        {
            "uuid": f"GPU-de000000-0000-4000-8000-{i:012d}",
            "pci_bus_id": f"0000:{0x18 + i * 0x10:02x}:00.0",
            "nvml": _nvml(sku, product, i, driver),
            "cuda": {"name": "NVIDIA H200", "memory_total_mib": runtime_mib},
            "pci": None,
        }
        for i in range(GPUS)
    ]
    inventory = {
        "driver": {
            "driver_version": driver,
            "cuda_driver_version": cuda,
            "attached_gpus": GPUS,
            "nvidia_smi_dtd": "v12",
        },
        "gpu_count": {"cuda": GPUS, "nvml": GPUS, "pci": 0},
        "gpus": gpus,
        "shims": {"ld_preload_env": "", "ld_so_preload": {"content": ""}},
        "sources": {
            "cuda_runtime": {"status": "ok", "method": "demo"},
            "nvml": {"status": "ok", "method": "demo"},
            "pci": {"status": "skipped", "method": None, "reason": "demo data"},
        },
        "alloc_probe": [{"device": None, "skipped": "demo data"}],
        "nvlink": None,
        "topology": None,
    }
    artifact = _artifact("nvidia-smi-q-x-demo.xml", _xml(sku, product, driver, cuda))
    topology = _artifact("nvidia-smi-topo-m.txt", demo_node.topology_text(), "text/plain")
    stamp = when.isoformat().replace("+00:00", "Z")
    not_run = "demo data: not run"
    return {
        **envelope(offer, nonce, stamp, f"diligence-demo/{offer.pk}"),
        "command_line": ["demo"],
        "seeds": {"bench": 42},
        "host_id": "sha256:" + hashlib.sha256(f"diligence-demo-{offer.pk}".encode()).hexdigest(),
        "host": {"hostname": "demo-node", "host_id_basis": "demo"},
        "clock": {
            "function": "time.perf_counter_ns",
            "monotonic": True,
            "anchor": {"monotonic_ns": 0, "unix_ns": int(when.timestamp() * 1e9)},
        },
        "steps": {
            "inventory": _step(inventory, when),
            "environment": _step(_environment(spec), when),
            "bench": _step(_bench(sku), when),
            "loadtest": _step(None, when, reason=not_run),
            "calibrate": _step(None, when, reason=not_run),
            "netprobe": _step(demo_network.netprobe_result(offer), when),
            "authprobe": _step(_authprobe(), when),
            # Inside the node and the local disk, made up from the declared spec.
            "node": _step(demo_node.node_result(spec, [str(g["uuid"]) for g in gpus]), when),
            "disk": _step(demo_node.disk_result(spec), when),
            "netpeer": _step(demo_network.netpeer_result(offer), when),
            # The reference training step on the eight cards, made up.
            "train": _step(demo_train.train_result([str(g["uuid"]) for g in gpus]), when),
        },
        "findings": [],
        "artifacts": [artifact, topology],
        "manifest": {
            "algorithm": "sha256",
            "artifacts": [
                {"name": a["name"], "sha256": a["sha256"], "size": a["size"]}
                for a in (artifact, topology)
            ],
        },
    }


def _environment(spec) -> dict:
    """The environment step's answer on the demo node: the runtime versions the vendor
    declares, a large /dev/shm, raised limits and a synchronised clock (demo data)."""
    return {
        "software": {
            "python": "3.11.9",
            "implementation": "CPython",
            "torch": "2.5.1+cu124",
            "cuda_runtime": spec.cuda_version or None,
            "cudnn": "90100",
            "nccl": "2.21.5",
            "nccl_source": "torch",
            "vllm": "0.6.4",
            "sglang": None,
        },
        "container": {
            "in_container": True,
            "markers": {"dockerenv": True},
            "image": "registry.demo.example/serving/vllm:0.6.4",
            "image_digest": "sha256:" + hashlib.sha256(b"demo-serving-image").hexdigest(),
            "image_digest_source": "--image-digest",
            "image_digest_reason": None,
        },
        "dev_shm": {"total_bytes": 512 * 2**30, "free_bytes": 511 * 2**30},
        "ulimits": {
            "open_files": {"soft": 1048576, "hard": 1048576},
            "locked_memory_bytes": {"soft": "unlimited", "hard": "unlimited"},
        },
        "clock_sync": {"adjtimex": {"state": 0, "synchronised": True}, "timedatectl": None},
    }


def envelope(offer, nonce: str, stamp: str, name: str) -> dict:
    """The fields every demo bundle opens with: format, identity, times, case and harness."""
    return {
        "format_version": "diligence-evidence/1",
        "metric_definitions_version": "diligence-metrics/1",
        "metric_definitions": {},
        "bundle_id": str(uuid.uuid5(uuid.NAMESPACE_URL, name)),
        "created_utc": stamp,
        "started_utc": stamp,
        "finished_utc": stamp,
        "case": str(offer.case_id),
        "nonce": nonce,
        "harness": {
            "name": "diligence-harness",
            "version": "demo",
            "python": "—",
            "packaging": "source",
            "source_sha256": "0" * 64,
        },
    }


def _authprobe() -> dict:
    """Demo answers of an endpoint that refuses what it must (demo data: nothing was sent)."""
    sent = "demo data: not sent to a real endpoint"
    burst = {"declared_rps": 2.0, "requests": 9, "status_counts": {"200": 3, "429": 6}}
    return {
        "url_path": "/v1/models",
        "statuses": {"no_token": 401, "wrong_token": 401, "valid_token": 200},
        "rate_limit": burst,
        "probes": [
            {"probe": "no_token", "ran": True, "sent": sent, "status": 401, "expected": 401},
            {"probe": "wrong_token", "ran": True, "sent": sent, "status": 401, "expected": 401},
            {"probe": "forbidden_token", "ran": True, "sent": sent, "status": 403, "expected": 403},
            {"probe": "rate_limit", "ran": True, "sent": sent, "status": 429, "expected": 429}
            | burst,
        ],
    }


def seed(*, case, users) -> None:
    offer = (
        Offer.objects.filter(case=case, vendor__name=DEMO_VENDOR)
        .select_related("declared_spec")
        .first()
    )
    if offer is None or EvidenceBundle.objects.filter(offer=offer).exists():
        return
    tariq = users["tariq"]
    issued = harness_token_create(actor=tariq, case=case, offer=offer, label=TOKEN_LABEL)
    document = demo_bundle(
        offer, nonce=issued.record.nonce, when=timezone.now() - timedelta(hours=2)
    )
    raw = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    bundle, _created = bundle_receive(token=issued.record, raw=raw)
    bundle_mark_demo(actor=tariq, bundle=bundle, note=DEMO_NOTE)

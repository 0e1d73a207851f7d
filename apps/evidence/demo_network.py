"""Demo: the gateway probe of each offer of the demo case, as the harness records it.

No vendor endpoint is reachable from the demo, so the TCP-connect RTTs are made
up here: a spread of round trips around a median chosen per vendor, as the
office gateway would measure them. Every offer listed gets a gateway bundle (the
harness's ``gateway`` step, the only one that fills the network plan's gateway →
remote service hop); the leading offer's demo bundle (``apps.evidence.demo``)
carries the rented machine's own probe and a between-nodes run instead. Each
bundle is uploaded with a harness token, verified like any bundle and marked as
demo data, so the network plan never reads these numbers as measurements.
"""

import json
from datetime import timedelta

from django.utils import timezone

from apps.evidence.models import EvidenceBundle
from apps.evidence.services import bundle_mark_demo, bundle_receive, harness_token_create
from apps.offers.models import Offer

DEMO_NOTE = (
    "Demo data: made-up network round trips from the office gateway to the vendor's "
    "endpoint, not measured on the vendor's network."
)
TOKEN_LABEL = "Demo gateway probe (made-up round trips)"
PROBES = 130  # enough for a defensible 95th percentile
# Median TCP-connect RTT in ms from the office gateway to each vendor's endpoint.
MEDIAN_RTT_MS = {
    "Aurora Compute Pte. Ltd.": 118.0,
    "Borealis GPU Cloud K.K.": 176.0,
    "Cumulus AI Infrastructure Sdn. Bhd.": 231.0,
}
ENDPOINTS = {
    "Aurora Compute Pte. Ltd.": "inference.ap-southeast-1.aurora-compute.example",
    "Borealis GPU Cloud K.K.": "api.tokyo-1.borealis.example",
    "Cumulus AI Infrastructure Sdn. Bhd.": "gpu.johor-1.cumulus-ai.example",
}


def _probe(host: str, median: float, port: int = 443) -> dict:
    """One TCP-connect probe: most connects near the median, a tail of slower ones."""
    rtts = [round(median * (0.97 + 0.06 * ((i * 37) % PROBES) / PROBES), 3) for i in range(PROBES)]
    rtts[::13] = [round(median * 1.18, 3)] * len(rtts[::13])
    return {
        "host": host,
        "port": port,
        "method": "tcp_connect",
        "count": PROBES,
        "interval_s": 0.1,
        "timeout_s": 2.0,
        "rtt_ms_raw": rtts,
        "jitter_ms": None,
        "loss": 0.0,
        "errors": {},
    }


def gateway_result(offer) -> dict | None:
    """The ``gateway`` step's result for the offer's vendor; None for a vendor not listed."""
    name = offer.vendor.name
    median = MEDIAN_RTT_MS.get(name)
    if median is None:
        return None
    return {
        "role": "gateway",
        "endpoint": f"https://{ENDPOINTS[name]}:443",
        "probes": [_probe(ENDPOINTS[name], median)],
        "summary_method": "numpy_linear",
    }


# The rented machine's own round trip to its endpoint, in the same data centre.
MACHINE_RTT_MS = 0.4


def netprobe_result(offer) -> dict | None:
    """The rented machine's ``netprobe`` to its own endpoint; None for a vendor not listed."""
    name = offer.vendor.name
    if name not in ENDPOINTS:
        return None
    return {
        "probes": [_probe(ENDPOINTS[name], MACHINE_RTT_MS)],
        "summary_method": "numpy_linear",
    }


# A between-nodes run of the leading offer: eight 400 Gb/s InfiniBand ports per node, and TCP
# over IPoIB between two nodes (made-up figures, demo data).
PEER_PORTS = 8
PEER_SECONDS = 3


def netpeer_result(offer) -> dict:
    """The ``netpeer`` step's result: round trips, both directions' byte samples, RDMA."""
    second = 1_000_000_000

    def transfer(direction: str, gbit_s: float) -> dict:
        per_stream = []
        for _stream in range(4):
            rate = gbit_s / 4 / 8 * second  # bytes per second, per stream
            samples = [[t * second // 10, int(rate * t / 10)] for t in range(1, 10 * PEER_SECONDS)]
            samples.append([PEER_SECONDS * second, int(rate * PEER_SECONDS)])
            per_stream.append(
                {"samples": samples, "confirmed_bytes": samples[-1][1], "error": None}
            )
        return {
            "direction": direction,
            "streams": 4,
            "duration_s": float(PEER_SECONDS),
            "block_bytes": 262144,
            "sample_interval_s": 0.1,
            "per_stream": per_stream,
            "gbit_s": gbit_s,
        }

    rtts = [round(0.021 + 0.002 * ((i * 7) % 5), 4) for i in range(20)]
    return {
        "peer": {"host": "node-2.demo", "port": 5201},
        "rtt": {
            "host": "node-2.demo",
            "port": 5201,
            "method": "tcp_echo",
            "count": 20,
            "rtt_ms_raw": rtts,
            "loss": 0.0,
        },
        "throughput": [transfer("send", 46.0), transfer("receive", 47.5)],
        "rdma": {
            "devices": [
                {
                    "name": f"mlx5_{index}",
                    "hca_type": "MT4129",
                    "ports": [
                        {
                            "port": "1",
                            "rate": "400 Gb/sec (4X NDR)",
                            "link_layer": "InfiniBand",
                            "state": "4: ACTIVE",
                            "phys_state": "5: LinkUp",
                        }
                    ],
                }
                for index in range(PEER_PORTS)
            ]
        },
    }


def network_bundle(offer, *, nonce: str, when) -> dict:
    """A gateway bundle, as ``diligence-harness gateway`` writes it on the office gateway."""
    from apps.evidence.demo import _step, envelope

    stamp = when.isoformat().replace("+00:00", "Z")
    not_run = "demo data: not run"
    steps = {
        name: _step(None, when, reason=not_run)
        for name in (
            "inventory",
            "environment",
            "bench",
            "loadtest",
            "calibrate",
            "netprobe",
            "authprobe",
        )
    }
    steps["gateway"] = _step(gateway_result(offer), when)
    return {
        **envelope(offer, nonce, stamp, f"diligence-demo-network/{offer.pk}"),
        "run_role": "gateway",
        "command_line": ["demo", "gateway"],
        "seeds": {},
        "host_id": "sha256:" + "d" * 64,
        "host": {"hostname": "demo-gateway", "host_id_basis": "demo"},
        "clock": {
            "function": "time.perf_counter_ns",
            "monotonic": True,
            "anchor": {"monotonic_ns": 0, "unix_ns": int(when.timestamp() * 1e9)},
        },
        "steps": steps,
        "findings": [],
        "artifacts": [],
        "manifest": {"algorithm": "sha256", "artifacts": []},
    }


def seed(*, case, users) -> None:
    """A gateway bundle for every offer of the case listed here that has none yet."""
    tariq = users["tariq"]
    offers = Offer.objects.filter(case=case).select_related("vendor").order_by("pk")
    for offer in offers:
        if (
            gateway_result(offer) is None
            or EvidenceBundle.objects.filter(offer=offer, summary__run_role="gateway").exists()
        ):
            continue
        issued = harness_token_create(actor=tariq, case=case, offer=offer, label=TOKEN_LABEL)
        document = network_bundle(
            offer, nonce=issued.record.nonce, when=timezone.now() - timedelta(hours=3)
        )
        raw = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
        bundle, _created = bundle_receive(token=issued.record, raw=raw)
        bundle_mark_demo(actor=tariq, bundle=bundle, note=DEMO_NOTE)

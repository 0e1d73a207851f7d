"""Demo: the network probe of each offer of the demo case, as the harness records it.

No vendor endpoint is reachable from the demo, so the TCP-connect RTTs are made
up here: a spread of round trips around a median chosen per vendor. The leading
offer's probe travels in its demo bundle (``apps.evidence.demo``); every other
offer of the case gets a bundle with the network probe alone. Each bundle is
uploaded with a harness token, verified like any bundle and marked as demo
data, so the network plan never reads these numbers as measurements.
"""

import json
from datetime import timedelta

from django.utils import timezone

from apps.evidence.models import EvidenceBundle
from apps.evidence.services import bundle_mark_demo, bundle_receive, harness_token_create
from apps.offers.models import Offer

DEMO_NOTE = (
    "Demo data: made-up network round trips to the vendor's endpoint, not measured on the "
    "vendor's network."
)
TOKEN_LABEL = "Demo network probe (made-up round trips)"
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


def netprobe_result(offer) -> dict | None:
    """The ``netprobe`` step's result for the offer's vendor; None for a vendor not listed."""
    name = offer.vendor.name
    median = MEDIAN_RTT_MS.get(name)
    if median is None:
        return None
    # A fixed spread: most connects near the median, a tail of slower ones.
    rtts = [round(median * (0.97 + 0.06 * ((i * 37) % PROBES) / PROBES), 3) for i in range(PROBES)]
    rtts[::13] = [round(median * 1.18, 3)] * len(rtts[::13])
    return {
        "probes": [
            {
                "host": ENDPOINTS[name],
                "port": 443,
                "method": "tcp_connect",
                "count": PROBES,
                "interval_s": 0.1,
                "timeout_s": 2.0,
                "rtt_ms_raw": rtts,
                "jitter_ms": None,
                "loss": 0.0,
                "errors": {},
            }
        ],
        "summary_method": "numpy_linear",
    }


def network_bundle(offer, *, nonce: str, when) -> dict:
    """A bundle with the network probe alone, as ``diligence-harness netprobe`` writes it."""
    from apps.evidence.demo import _step, envelope

    stamp = when.isoformat().replace("+00:00", "Z")
    not_run = "demo data: not run"
    steps = {
        name: _step(None, when, reason=not_run)
        for name in ("inventory", "environment", "bench", "loadtest", "calibrate", "authprobe")
    }
    steps["netprobe"] = _step(netprobe_result(offer), when)
    return {
        **envelope(offer, nonce, stamp, f"diligence-demo-network/{offer.pk}"),
        "command_line": ["demo", "netprobe"],
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
    """A network-probe bundle for every offer of the case that has no bundle yet."""
    tariq = users["tariq"]
    offers = Offer.objects.filter(case=case).select_related("vendor").order_by("pk")
    for offer in offers:
        if netprobe_result(offer) is None or EvidenceBundle.objects.filter(offer=offer).exists():
            continue
        issued = harness_token_create(actor=tariq, case=case, offer=offer, label=TOKEN_LABEL)
        document = network_bundle(
            offer, nonce=issued.record.nonce, when=timezone.now() - timedelta(hours=3)
        )
        raw = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
        bundle, _created = bundle_receive(token=issued.record, raw=raw)
        bundle_mark_demo(actor=tariq, bundle=bundle, note=DEMO_NOTE)

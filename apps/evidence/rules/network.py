"""Network: the round trip against the case's latency budget (docs/rules/access.md#latency-budget),
from the rented machine and from the customer's gateway; between nodes, the inter-node network
against its declared class and floor (docs/rules/evidence.md#between-nodes).

"If the measured round trip already takes more than half the budget, deploy
closer to the users first rather than squeezing the model."
"""

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts, fmt
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

# Stored in English and worded for the reader where shown (apps.evidence.wording).
SOURCE = phrase("latency budget: a round trip over half the budget means serving from closer")
HALF_BUDGET = phrase("≤ half of the %(budget)s ms budget (%(half)s ms)")
NO_BUDGET = phrase("no latency budget in the case's network plan")
MEDIAN = phrase("%(rtt)s ms median to %(host)s (n = %(n)s)")
MEDIAN_SHARE = phrase("%(rtt)s ms median to %(host)s (n = %(n)s), %(share)s of the budget")
LOSS = phrase("%(host)s: %(loss)s of connects failed")
TOO_FAR = phrase(
    "RTT takes %(share)s of the %(budget)s ms budget: serve from a region closer to the users "
    "instead of squeezing the model."
)


def checks(facts: Facts, context: Context) -> list[Check]:
    return [
        check_rtt(facts.netprobe, context.latency_target_ms),
        *between_nodes_checks(facts, context),
        check_gateway_rtt(facts.gateway, context.latency_target_ms),
    ]


def check_rtt(probes: list[dict], target_ms: float | None) -> Check:
    """From the rented machine: never the gateway → remote service hop of the budget."""
    check = Check(
        "network.rtt",
        "network",
        phrase("Round-trip time from the rented machine against the latency budget"),
        NOT_MEASURED,
        expected=HALF_BUDGET % {"budget": f"{target_ms:g}", "half": f"{target_ms / 2:g}"}
        if target_ms
        else NO_BUDGET,
        tolerance=phrase("over half the budget is a finding; any loss is a finding"),
        source=SOURCE,
    )
    return _judge_rtt(check, probes, target_ms, phrase("No network probe in the bundle."))


def _judge_rtt(check: Check, probes: list[dict], target_ms: float | None, none: str) -> Check:
    measured = [p for p in probes if (p.get("rtt_ms") or {}).get("n")]
    if not measured:
        check.detail = none
        return check
    worst = max(measured, key=lambda p: p["rtt_ms"]["p50"])
    rtt = worst["rtt_ms"]["p50"]
    values = {"rtt": f"{rtt:.1f}", "host": worst["host"], "n": worst["rtt_ms"]["n"]}
    check.measured = MEDIAN % values
    lossy = [p for p in probes if p.get("loss")]
    problems = [LOSS % {"host": p["host"], "loss": f"{p['loss']:.0%}"} for p in lossy]
    if target_ms:
        share = rtt / target_ms
        check.measured = MEDIAN_SHARE % {**values, "share": f"{share:.0%}"}
        if rtt * 2 > target_ms:
            problems.append(TOO_FAR % {"share": f"{share:.0%}", "budget": f"{target_ms:g}"})
    elif not problems:
        check.detail = phrase(
            "RTT measured; the case's network plan has no latency budget to hold it to."
        )
        return check
    check.status = WARN if problems else PASS
    check.detail = " ".join(problems)
    return check


# --- from the gateway (docs/rules/access.md#latency-budget) -------------------------------

GATEWAY_SOURCE = phrase(
    "latency budget: the gateway → remote service hop is measured from the gateway; a round "
    "trip over half the budget means serving from closer"
)


def check_gateway_rtt(probes: list[dict], target_ms: float | None) -> Check:
    """The round trip a gateway bundle measured from the customer's gateway: the only one
    that fills the budget's gateway → remote service hop."""
    check = Check(
        "network.gateway_rtt",
        "network",
        phrase("Round-trip time from the gateway to the vendor's endpoint"),
        NOT_MEASURED,
        expected=HALF_BUDGET % {"budget": f"{target_ms:g}", "half": f"{target_ms / 2:g}"}
        if target_ms
        else NO_BUDGET,
        tolerance=phrase("over half the budget is a finding; any loss is a finding"),
        source=GATEWAY_SOURCE,
    )
    return _judge_rtt(
        check,
        probes,
        target_ms,
        phrase("No gateway probe: run the harness's gateway step on the gateway host."),
    )


# --- between nodes (docs/rules/evidence.md#between-nodes) -------------------------------

RDMA_LINK_LAYERS = {"infiniband": "InfiniBand", "roce": "Ethernet"}
# The declared classes in words (the offer's choices).
NETWORK_CLASSES = {
    "infiniband": phrase("InfiniBand (RDMA)"),
    "roce": phrase("RoCE (RDMA over Ethernet)"),
    "ethernet": phrase("Ethernet / TCP (no RDMA)"),
    "none": phrase("none (single node)"),
}
# A TCP stream carries headers and acknowledgements: within this share of a floor, it
# meets it. Below half the floor, even a client short of cores would not explain it.
TCP_OVERHEAD = 0.10
CLIENT_LIMIT_SHARE = 0.5
BETWEEN_NODES_SOURCE = phrase(
    "the vendor's written spec: inter-node network class and bandwidth floor; NVIDIA "
    "networking: RDMA runs over InfiniBand or RoCE ports"
)
NO_PEER = phrase(
    "No between-nodes run in the bundle: run net-serve on a second node and net-peer --peer "
    "on this one."
)
TCP_MEASURED = phrase(
    "TCP %(send)s Gbit/s out, %(receive)s Gbit/s in over %(streams)s streams; RTT %(rtt)s ms "
    "median, loss %(loss)s"
)
RDMA_PORTS = phrase("%(count)s active %(layer)s RDMA port(s), %(rate)s Gbit/s in all")
NO_RDMA_PORT = phrase(
    "No active RDMA port with the %(layer)s link layer: the declared network, %(declared)s, "
    "is not on this node."
)


def between_nodes_checks(facts: Facts, context: Context) -> list[Check]:
    declared = context.declared.get("inter_node_network") or ""
    return [
        check_inter_node(facts.netpeer, declared),
        check_inter_node_bandwidth(facts.netpeer, declared, context),
    ]


def _active_rdma(peer: dict, declared: str) -> list[dict]:
    layer = RDMA_LINK_LAYERS.get(declared)
    return [
        p
        for p in peer.get("rdma") or []
        if p.get("active") and layer and p.get("link_layer", "").lower() == layer.lower()
    ]


def _gbit(value) -> str:
    return fmt(value, digits=2) if isinstance(value, float) else "—"


def _tcp_measured(peer: dict) -> str:
    rtt = (peer.get("rtt_ms") or {}).get("p50")
    loss = peer.get("loss")
    return TCP_MEASURED % {
        "send": _gbit(peer.get("send_gbit_s")),
        "receive": _gbit(peer.get("receive_gbit_s")),
        "streams": peer.get("streams") or "—",
        "rtt": f"{rtt:.3f}" if isinstance(rtt, float) else "—",
        "loss": f"{loss:.0%}" if isinstance(loss, float) else "—",
    }


def check_inter_node(peer: dict | None, declared: str) -> Check:
    """The declared class is on the node: an RDMA class needs an active RDMA port of its
    link layer (InfiniBand; Ethernet for RoCE); TCP needs traffic both ways to the peer."""
    check = Check(
        "network.inter_node",
        "network",
        phrase("Inter-node network as declared"),
        NOT_MEASURED,
        expected=NETWORK_CLASSES.get(declared, declared)
        or phrase("no inter-node network declared"),
        tolerance=phrase("an RDMA class needs an active port of its link layer"),
        source=BETWEEN_NODES_SOURCE,
    )
    if peer is None:
        check.detail = NO_PEER
        return check
    check.measured = _tcp_measured(peer)
    if declared in RDMA_LINK_LAYERS:
        layer = RDMA_LINK_LAYERS[declared]
        ports = _active_rdma(peer, declared)
        if not ports:
            check.status = FAIL
            check.detail = NO_RDMA_PORT % {"layer": layer, "declared": NETWORK_CLASSES[declared]}
            return check
        total = sum(p.get("rate_gbit") or 0 for p in ports)
        check.measured = (
            RDMA_PORTS % {"count": len(ports), "layer": layer, "rate": fmt(total, digits=0)}
            + "; "
            + check.measured
        )
        check.status = PASS
        return check
    if declared == "ethernet":
        moved = peer.get("send_gbit_s") and peer.get("receive_gbit_s")
        check.status = PASS if moved else FAIL
        if not moved:
            check.detail = phrase("TCP traffic did not flow both ways between the nodes.")
        return check
    check.detail = phrase(
        "The offer declares no inter-node network (a single node): measured only."
    )
    return check


def _floors(declared: dict, requirement: dict) -> list[tuple[str, float, float]]:
    """(whose, floor in Gbit/s, tolerance share): the vendor's own floor is met or not; the
    requirement's may be short by its tolerance (docs/rules/sizing.md#requirement-spec)."""
    floors = []
    if declared.get("inter_node_bandwidth_gbit"):
        floors.append(("declared", float(declared["inter_node_bandwidth_gbit"]), 0.0))
    if requirement.get("inter_node_bandwidth_gbit"):
        tolerance = float(requirement.get("tolerance_pct") or 0) / 100
        floors.append(("required", float(requirement["inter_node_bandwidth_gbit"]), tolerance))
    return floors


FLOOR_EXPECTED = {
    "declared": phrase("≥ %(floor)s Gbit/s per node (declared)"),
    "required": phrase(
        "≥ %(floor)s Gbit/s per node (the requirement spec, %(tolerance)s short allowed)"
    ),
}
BELOW_FLOOR = {
    "declared": phrase("%(measured)s Gbit/s is below the declared floor of %(floor)s Gbit/s."),
    "required": phrase(
        "%(measured)s Gbit/s is below the requirement spec's floor of %(floor)s Gbit/s."
    ),
}
CLIENT_LIMITED = {
    "declared": phrase(
        "%(measured)s Gbit/s over TCP is below the declared floor of %(floor)s Gbit/s, but "
        "above half of it: one client process may not fill a fast link; run net-peer with "
        "more streams."
    ),
    "required": phrase(
        "%(measured)s Gbit/s over TCP is below the requirement spec's floor of %(floor)s "
        "Gbit/s, but above half of it: one client process may not fill a fast link; run "
        "net-peer with more streams."
    ),
}


def check_inter_node_bandwidth(peer: dict | None, declared_class: str, context: Context) -> Check:
    """The node's inter-node bandwidth against the declared floor and the requirement's:
    the active RDMA ports' link rates where an RDMA class is declared, else the slower
    direction of the TCP throughput (within TCP_OVERHEAD of a floor meets it)."""
    floors = _floors(context.declared, context.requirement or {})
    check = Check(
        "network.inter_node_bandwidth",
        "network",
        phrase("Inter-node bandwidth against the floor"),
        NOT_MEASURED,
        expected="; ".join(
            FLOOR_EXPECTED[whose] % {"floor": fmt(floor, digits=0), "tolerance": f"{tol:.0%}"}
            for whose, floor, tol in floors
        )
        or phrase("no floor declared or required"),
        tolerance=phrase(
            "RDMA: the active ports' link rates in all; TCP: the slower direction, within 10 % "
            "of a floor meets it, above half of it is a finding"
        ),
        source=BETWEEN_NODES_SOURCE,
    )
    if peer is None:
        check.detail = NO_PEER
        return check
    rdma = declared_class in RDMA_LINK_LAYERS
    if rdma:
        ports = _active_rdma(peer, declared_class)
        measured = float(sum(p.get("rate_gbit") or 0 for p in ports)) if ports else None
        check.measured = (
            RDMA_PORTS
            % {
                "count": len(ports),
                "layer": RDMA_LINK_LAYERS[declared_class],
                "rate": fmt(measured or 0.0, digits=0),
            }
            + "; "
            + _tcp_measured(peer)
        )
    else:
        directions = [peer.get("send_gbit_s"), peer.get("receive_gbit_s")]
        known = [d for d in directions if isinstance(d, int | float)]
        measured = float(min(known)) if known else None
        check.measured = _tcp_measured(peer)
    if measured is None or not floors:
        if measured is None:
            check.detail = phrase("No bandwidth could be read from the raw samples.")
        return check
    overhead = 0.0 if rdma else TCP_OVERHEAD
    problems, status = [], PASS
    for whose, floor, tolerance in floors:
        values = {"measured": fmt(measured, digits=2), "floor": fmt(floor, digits=0)}
        if measured >= floor * (1 - overhead):
            continue
        if measured >= floor * (1 - overhead) * (1 - tolerance) and tolerance:
            problems.append(BELOW_FLOOR[whose] % values)
            status = WARN if status == PASS else status
        elif not rdma and measured >= floor * CLIENT_LIMIT_SHARE:
            problems.append(CLIENT_LIMITED[whose] % values)
            status = WARN if status == PASS else status
        else:
            problems.append(BELOW_FLOOR[whose] % values)
            status = FAIL
    check.status = status
    check.detail = " ".join(problems)
    return check

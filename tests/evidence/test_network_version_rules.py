"""Between nodes, from the gateway, runtime versions and the image: the rules table-tested on
plain data, and the server's recomputation of the raw samples (no database)."""

import pytest

from apps.evidence import bundle as bundle_reader
from apps.evidence import recompute
from apps.evidence.rules import (
    FAIL,
    NOT_MEASURED,
    PASS,
    WARN,
    Context,
    Facts,
    composition,
    network,
    versions,
)


def peer(send=50.0, receive=60.0, rdma=(), streams=4) -> dict:
    """A recomputed between-nodes summary, as the server stores it."""
    return {
        "peer": "node-2:5201",
        "rtt_ms": {"n": 20, "p50": 0.081},
        "jitter_ms": 0.004,
        "loss": 0.0,
        "send_gbit_s": send,
        "receive_gbit_s": receive,
        "streams": streams,
        "rdma": list(rdma),
    }


def port(layer="InfiniBand", rate=400.0, active=True, device="mlx5_0") -> dict:
    return {"device": device, "port": "1", "link_layer": layer, "rate_gbit": rate, "active": active}


def context(network_class="", floor=None, required=None, tolerance=0, runtime="") -> Context:
    requirement = {}
    if required is not None:
        requirement = {"inter_node_bandwidth_gbit": required, "tolerance_pct": tolerance}
    return Context(
        declared={
            "inter_node_network": network_class,
            "inter_node_bandwidth_gbit": floor,
            "runtime_versions": runtime,
        },
        requirement=requirement,
    )


@pytest.mark.parametrize(
    ("declared", "ports", "status"),
    [
        ("infiniband", [port()], PASS),
        ("infiniband", [port(active=False)], FAIL),
        ("infiniband", [port(layer="Ethernet")], FAIL),  # RoCE is not InfiniBand
        ("infiniband", [], FAIL),
        ("roce", [port(layer="Ethernet", rate=200.0)], PASS),
        ("roce", [port()], FAIL),
        ("ethernet", [], PASS),
        ("none", [], NOT_MEASURED),  # a single node: measured, nothing to judge
        ("", [], NOT_MEASURED),
    ],
)
def test_the_declared_network_class_against_the_ports_the_node_lists(declared, ports, status):
    check = network.check_inter_node(peer(rdma=ports), declared)
    assert check.key == "network.inter_node" and check.status == status
    assert "Gbit/s out" in check.measured
    if status == FAIL:
        assert "No active RDMA port" in check.detail


def test_ethernet_needs_traffic_both_ways_and_without_a_run_nothing_is_measured():
    assert network.check_inter_node(peer(receive=None), "ethernet").status == FAIL
    missing = network.check_inter_node(None, "infiniband")
    assert missing.status == NOT_MEASURED and "net-serve" in missing.detail


@pytest.mark.parametrize(
    ("declared", "ports", "send", "receive", "floor", "status"),
    [
        # RDMA: the active ports' link rates in all, exactly.
        ("infiniband", [port(), port(device="mlx5_1")], 20.0, 20.0, 800, PASS),
        ("infiniband", [port(), port(device="mlx5_1", active=False)], 20.0, 20.0, 800, FAIL),
        ("roce", [port(layer="Ethernet", rate=100.0)], 20.0, 20.0, 100, PASS),
        # TCP: the slower direction; within 10 % of the floor meets it.
        ("ethernet", [], 95.0, 91.0, 100, PASS),
        ("ethernet", [], 95.0, 89.0, 100, WARN),  # above half: maybe one client's limit
        ("ethernet", [], 60.0, 49.0, 100, FAIL),
        ("ethernet", [], 5.0, 5.0, None, NOT_MEASURED),  # no floor: measured only
    ],
)
def test_the_bandwidth_against_the_declared_floor(declared, ports, send, receive, floor, status):
    facts_peer = peer(send=send, receive=receive, rdma=ports)
    check = network.check_inter_node_bandwidth(facts_peer, declared, context(declared, floor))
    assert check.key == "network.inter_node_bandwidth" and check.status == status
    if floor:
        assert f"≥ {floor} Gbit/s per node (declared)" in check.expected


def test_the_requirement_floor_allows_its_tolerance_and_names_itself():
    within = network.check_inter_node_bandwidth(
        peer(rdma=[port(rate=400.0)]),
        "infiniband",
        context("infiniband", required=440, tolerance=10),
    )
    assert within.status == WARN and "requirement spec's floor of 440" in within.detail
    beyond = network.check_inter_node_bandwidth(
        peer(rdma=[port(rate=400.0)]),
        "infiniband",
        context("infiniband", floor=400, required=800, tolerance=10),
    )
    assert beyond.status == FAIL and "declared floor" not in beyond.detail
    assert "(the requirement spec, 10% short allowed)" in beyond.expected


def test_the_gateway_round_trip_against_the_budget_and_the_machines_is_labelled_so():
    probes = [{"host": "api.vendor.example:443", "rtt_ms": {"n": 130, "p50": 118.0}, "loss": 0.0}]
    gateway = network.check_gateway_rtt(probes, 400)
    assert (gateway.key, gateway.status) == ("network.gateway_rtt", PASS)
    assert network.check_gateway_rtt(probes, 200).status == WARN  # over half the budget
    assert "gateway step" in network.check_gateway_rtt([], 400).detail
    machine = network.check_rtt(probes, 400)
    assert machine.title == "Round-trip time from the rented machine against the latency budget"


def test_each_check_is_composed_from_its_own_part():
    assert composition.section_of("network.inter_node") == composition.NETPEER
    assert composition.section_of("network.inter_node_bandwidth") == composition.NETPEER
    assert composition.section_of("network.gateway_rtt") == composition.GATEWAY
    assert composition.section_of("network.rtt") == composition.NETPROBE
    assert composition.section_of("versions.runtime") == composition.ENVIRONMENT


SOFTWARE = {
    "python": "3.11.7",
    "torch": "2.5.1+cu124",
    "vllm": "0.6.4.post1",
    "sglang": None,
    "nccl": "2.21.5",
    "cudnn": "90100",
}


@pytest.mark.parametrize(
    ("declared", "status", "measured"),
    [
        ("PyTorch 2.5.1, vLLM 0.6.4, NCCL 2.21.5", PASS, "PyTorch 2.5.1+cu124; vLLM 0.6.4.post1"),
        ("PyTorch 2.5, cuDNN 9.1", PASS, "cuDNN 9.1.0"),
        ("PyTorch 2.4.0", WARN, "PyTorch 2.5.1+cu124"),  # same major
        ("vLLM 0.6.4, NCCL 2.18.1", WARN, "NCCL 2.21.5"),
        ("PyTorch 1.13", FAIL, "PyTorch 2.5.1+cu124"),
        ("SGLang 0.3.0", NOT_MEASURED, "SGLang not found where the harness ran"),
        ("TensorRT-LLM 0.9, vLLM 0.6.4", PASS, "TensorRT-LLM is not a version the harness"),
    ],
)
def test_the_declared_runtime_versions_against_the_environment(declared, status, measured):
    env = {"software": SOFTWARE}
    check = versions.check_runtime(env, context(runtime=declared))
    assert check.key == "versions.runtime" and check.status == status
    assert measured in check.measured and check.expected == declared


def test_runtime_versions_without_an_environment_or_a_claim():
    assert versions.check_runtime(None, context(runtime="vLLM 0.6.4")).status == NOT_MEASURED
    unclaimed = versions.check_runtime({"software": SOFTWARE}, context())
    assert unclaimed.status == NOT_MEASURED and unclaimed.detail.startswith("The offer declares")


def test_the_image_digest_is_recorded_not_judged():
    digest = "sha256:" + "ab" * 32
    found = versions.check_image({"container": {"in_container": True, "image_digest": digest}})
    assert (found.status, found.measured) == (NOT_MEASURED, digest)
    hidden = versions.check_image({"container": {"in_container": True, "image_digest": None}})
    assert hidden.measured is None and "--image-digest" in hidden.detail
    every = [c.key for c in versions.checks(Facts(environment={"software": SOFTWARE}), Context())]
    assert {"versions.runtime", "versions.image"} <= set(every)


# As the node's sysfs gave it, with a client figure that does not match its text.
SYSFS_PORT = {
    "port": "1",
    "rate": "400 Gb/sec (4X NDR)",
    "link_layer": "InfiniBand",
    "state": "4: ACTIVE",
    "rate_gbit": 800,
}


def stream(*samples) -> dict:
    return {"samples": [list(s) for s in samples], "confirmed_bytes": samples[-1][1]}


def test_throughput_is_recomputed_from_the_raw_samples_and_a_spoofed_figure_is_listed():
    second = 1_000_000_000
    result = {
        "peer": {"host": "node-2", "port": 5201},
        "rtt": {"count": 4, "rtt_ms_raw": [0.1, 0.3, 0.2], "loss": 0.0, "jitter_ms": 0.15},
        "throughput": [
            {
                "direction": "send",
                "streams": 2,
                "per_stream": [
                    stream((0, 0), (second, 500_000_000)),
                    stream((second, 750_000_000)),
                ],
                "gbit_s": 400.0,  # what an edited summary says
            },
            {
                "direction": "receive",
                "streams": 1,
                "per_stream": [stream((second, 5_000), (second // 2, 10_000))],  # backwards
                "gbit_s": 1.0,
            },
        ],
        "rdma": {"devices": [{"name": "mlx5_0", "ports": [SYSFS_PORT]}]},
    }
    summary, disagreements = recompute.netpeer(result)
    assert summary["send_gbit_s"] == pytest.approx(10.0)  # 1.25 GB in 1 s, both streams
    assert summary["receive_gbit_s"] is None  # samples that run backwards give nothing
    assert summary["loss"] == 0.25 and summary["jitter_ms"] == pytest.approx(0.15)
    # The server reads the port's rate from sysfs's text, not the client's number.
    assert summary["rdma"] == [port(rate=400.0)]
    found = {(d.where, d.metric) for d in disagreements}
    assert {
        ("netpeer/send", "gbit_s"),
        ("netpeer/receive", "gbit_s"),
        ("netpeer/rtt", "loss"),
    } <= found
    check = network.check_inter_node_bandwidth(summary, "ethernet", context("ethernet", 400))
    assert check.status == FAIL and "Gbit/s is below the declared floor of 400" in check.detail


MACHINE_PROBE = {"host": "h", "port": 1, "count": 1, "rtt_ms_raw": [0.2]}


def test_a_gateway_bundle_is_read_for_its_round_trips_alone():
    document = {
        "run_role": "gateway",
        "steps": {
            "gateway": {
                "status": "ok",
                "result": {
                    "role": "gateway",
                    "endpoint": "https://api.vendor.example:443",
                    "probes": [
                        {
                            "host": "api.vendor.example",
                            "port": 443,
                            "method": "tcp_connect",
                            "count": 3,
                            "rtt_ms_raw": [118.0, 120.0, 119.0],
                        },
                    ],
                },
            },
            # Whatever else it carries says nothing of the rented machine: never read.
            "inventory": {"status": "ok", "result": {"gpus": [{"uuid": "GPU-x"}]}},
            "netprobe": {"status": "ok", "result": {"probes": [MACHINE_PROBE]}},
        },
        "findings": [],
        "artifacts": [],
    }
    reading = bundle_reader.interpret(document)
    assert reading.facts.gpus == [] and reading.facts.netprobe == []
    [probe] = reading.facts.gateway
    assert probe["rtt_ms"]["p50"] == 119.0 and probe["loss"] == 0.0
    assert reading.summary["run_role"] == "gateway" and "netprobe" not in reading.summary
    machine = bundle_reader.interpret({**document, "run_role": "machine"})
    assert machine.facts.gateway == [] and "gateway" not in machine.summary


def test_locked_memory_the_harness_writes_as_unlimited_holds_with_rdma_declared():
    env = {
        "ulimits": {
            "open_files": {"soft": "unlimited"},
            "locked_memory_bytes": {"soft": "unlimited"},
        }
    }
    check = versions.check_ulimits(env, versions.DEFAULT_ENVIRONMENT, context("infiniband"))
    assert check.status == PASS and check.detail == ""
    capped = {"ulimits": {"open_files": {"soft": 65536}, "locked_memory_bytes": {"soft": 65536}}}
    check = versions.check_ulimits(capped, versions.DEFAULT_ENVIRONMENT, context("roce"))
    assert check.status == WARN and "locked memory capped" in check.detail

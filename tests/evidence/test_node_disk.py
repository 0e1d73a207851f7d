"""Inside the node and the local disk: the server's checks from recorded artifacts.

The recorded examples (harness/tests/fixtures/constructed, README there) are hand-made
in the harness's exact output format: four NVLink A100 cards and a RAID-0 of NVMe
drives. Every figure is read back through the server's own recomputation; a bundle
whose summaries claim more than its raw timings give fails on the raw timings.
"""

import copy
import json
from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence import bundle as bundle_reader
from apps.evidence import recompute_node
from apps.evidence.rules import Context, Facts, verify
from apps.evidence.rules.composition import Contribution, compose
from tests.evidence.conftest import HARNESS
from tests.evidence.factories import make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

CONSTRUCTED = HARNESS / "tests" / "fixtures" / "constructed"
NVLINK_TOPOLOGY = "topo-m-4x-a100.txt"
PCIE_TOPOLOGY = "topo-m-4x-pcie.txt"
GIB = 1 << 30


def recorded(name: str) -> dict:
    return json.loads((CONSTRUCTED / name).read_text(encoding="utf-8"))


NODE = recorded("node-4x-a100-recorded-example.json")
DISK = recorded("disk-nvme-recorded-example.json")


def document(*, node=None, disk=None, topology: str | None = NVLINK_TOPOLOGY, nonce=None):
    """A bundle as the harness assembles it, carrying the recorded steps."""
    from diligence_harness.bundle import assemble, make_artifact

    steps = {}
    for name, result in (("node", node), ("disk", disk)):
        if result is not None:
            steps[name] = {
                "status": "ok",
                "reason": None,
                "started_utc": "2026-01-05T10:00:00.000Z",
                "finished_utc": "2026-01-05T10:01:00.000Z",
                "duration_s": 60.0,
                "result": result,
            }
    artifacts = []
    if topology:
        text = (CONSTRUCTED / topology).read_text(encoding="utf-8")
        artifacts.append(make_artifact("nvidia-smi-topo-m.txt", text, "text/plain", []))
    return assemble(
        steps=steps,
        findings=[],
        artifacts=artifacts,
        argv=["diligence-harness", "node"],
        seeds={},
        case=None,
        nonce=nonce,
        started_utc="2026-01-05T10:00:00.000Z",
    )


def read(doc: dict):
    """The server's own reading of a bundle (after the same checks an upload gets)."""
    return bundle_reader.interpret(bundle_reader.read(serialise(doc)))


def context(*, interconnect="nvlink", bandwidth=600, nvme=30.72, need=None) -> Context:
    declared = {
        "intra_node_interconnect": interconnect,
        "intra_node_bandwidth_gbps": Decimal(str(bandwidth)) if bandwidth else None,
        "local_nvme_tb": Decimal(str(nvme)) if nvme else None,
    }
    return Context(
        declared=declared,
        requirement={"local_nvme_tb": Decimal(str(need))} if need else {},
    )


def checks_of(doc: dict, ctx: Context) -> dict:
    return {c.key: c for c in verify(read(doc).facts, ctx)}


def facts(*, node=None, disk=None, topology: str | None = NVLINK_TOPOLOGY) -> Facts:
    parsed = None
    if topology:
        parsed = recompute_node.parse_topology((CONSTRUCTED / topology).read_text())
    return Facts(
        topology=parsed,
        node=recompute_node.node(node)[0],
        disk=recompute_node.disk(disk)[0],
    )


def status(found: Facts, ctx: Context, key: str):
    check = {c.key: c for c in verify(found, ctx)}[key]
    return check.status, check


# --- the topology ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "topology,declared,expected,words",
    [
        (NVLINK_TOPOLOGY, "nvlink", "pass", "4 cards, 6 pairs: NV12 × 6"),
        (PCIE_TOPOLOGY, "nvlink", "fail", "6 of 6 pairs have no NVLink: GPU0–GPU1 (PIX)"),
        (PCIE_TOPOLOGY, "pcie", "pass", "NODE × 2, PIX × 1, SYS × 3"),
        (NVLINK_TOPOLOGY, "pcie", "pass", "NV12 × 6"),
        (NVLINK_TOPOLOGY, "", "not_measured", "NV12 × 6"),
        (None, "nvlink", "not_measured", "No nvidia-smi topo -m output"),
    ],
)
def test_the_links_between_cards_against_the_declared_interconnect(
    topology, declared, expected, words
):
    result, check = status(
        facts(topology=topology), context(interconnect=declared), "interconnect.topology"
    )
    assert result == expected
    assert words in f"{check.measured} {check.detail}"


def test_a_single_card_has_no_pair_to_link():
    one = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-31\t0\n"
    check = {
        c.key: c for c in verify(Facts(topology=recompute_node.parse_topology(one)), context())
    }["interconnect.topology"]
    assert check.status == "not_measured" and check.measured is None
    assert "no pair" in check.detail


def test_the_server_reads_the_topology_from_the_raw_artifact_not_the_summary():
    lying = copy.deepcopy(NODE)
    for pair in lying["topology"]["pairs"]:
        pair.update(link="NV18", kind="nvlink", nvlinks=18)
    doc = document(node=lying, topology=PCIE_TOPOLOGY)
    check = checks_of(doc, context())["interconnect.topology"]
    assert check.status == "fail" and "SYS × 3" in check.measured


def test_the_inventorys_topology_is_read_without_a_node_step():
    checks = checks_of(document(), context())
    assert checks["interconnect.topology"].status == "pass"
    assert checks["interconnect.bandwidth"].status == "not_measured"


# --- bandwidth -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "declared,expected",
    [(600, "pass"), (900, "warn"), (1800, "fail"), (None, "not_measured")],
)
def test_the_weakest_pair_against_the_declared_bandwidth_each_way(declared, expected):
    result, check = status(facts(node=NODE), context(bandwidth=declared), "interconnect.bandwidth")
    assert result == expected
    assert "weakest pair cuda:2 → cuda:3 228.5 GB/s" in check.measured
    assert "all-reduce bus bandwidth 229.7 GB/s over 4 cards" in check.measured
    if declared:
        assert f"{declared / 2:g} GB/s each way" in check.expected


def test_without_copies_between_cards_the_all_reduce_is_judged():
    node = copy.deepcopy(NODE)
    node["peer"] = []
    result, check = status(facts(node=node), context(bandwidth=600), "interconnect.bandwidth")
    assert result == "pass" and check.detail == "Judged on the all-reduce bus bandwidth."


def test_bus_bandwidth_is_recomputed_as_nccl_tests_defines_it():
    # Two ranks of 1 GB: 10 and 12 ms, then 20 and 22 ms: the means are 11 and 21 ms.
    ours = recompute_node.allreduce(
        {
            "backend": "nccl",
            "bytes": 10**9,
            "rank_iter_ns": [[10**7, 2 * 10**7], [12 * 10**6, 22 * 10**6]],
        }
    )
    assert ours["time_ms"] == pytest.approx(16.0)
    assert ours["algbw_GBps"] == pytest.approx(10**9 / 16e6)
    assert ours["busbw_GBps"] == pytest.approx(10**9 / 16e6 * 2 * (2 - 1) / 2)
    eight = recompute_node.allreduce({"bytes": 10**9, "rank_iter_ns": [[10**7]] * 8})
    assert eight["busbw_GBps"] == pytest.approx(100 * 1.75)


def test_copy_bandwidth_is_recomputed_from_bytes_and_nanoseconds():
    assert recompute_node.copy_rates(10**6, [1000, 2000, 4000]) == {
        "median": 500.0,
        "best": 1000.0,
        "n": 3,
    }
    assert recompute_node.copy_rates(10**6, []) == {}


def test_a_run_on_the_cpu_measures_no_interconnect():
    node = copy.deepcopy(NODE) | {"backend": "cpu", "peer": [], "host_device": []}
    node["skipped"] = [{"what": "host and peer copies", "reason": "no CUDA device"}]
    found = facts(node=node)
    for key in ("interconnect.bandwidth", "interconnect.integrity"):
        result, check = status(found, context(), key)
        assert result == "not_measured" and "no CUDA device" in check.detail


def test_a_spoofed_interconnect_claim_fails_from_the_raw_timings_alone():
    """The summaries say 400 GB/s between cards; the raw timings give 20."""
    spoofed = copy.deepcopy(NODE)
    for record in spoofed["peer"]:
        record["iter_ns"] = [record["bytes"] // 20] * len(record["iter_ns"])
        record["GBps"] = {"median": 400.0, "best": 410.0, "n": 5}
    claimed = spoofed["allreduce"]
    claimed["rank_iter_ns"] = [[claimed["bytes"] * 3 // 40] * 5 for _ in range(4)]
    claimed["busbw_GBps"] = 400.0
    reading = read(document(node=spoofed))
    check = {c.key: c for c in verify(reading.facts, context(bandwidth=600))}[
        "interconnect.bandwidth"
    ]
    assert check.status == "fail"
    assert "20.0 GB/s" in check.measured and "7% of 300 GB/s each way" in check.measured
    lies = {(d["where"], d["metric"]) for d in reading.disagreements}
    assert ("node/peer/cuda:0→cuda:1", "GBps.median") in lies
    assert ("node/allreduce", "busbw_GBps") in lies


# --- matmul repeats -----------------------------------------------------------------------


def _with_digests(*runs) -> dict:
    node = copy.deepcopy(NODE)
    node["integrity"]["runs"] = [
        {"device": f"cuda:{i}", "digests": digests, "max_rel_diff": diff}
        for i, (digests, diff) in enumerate(runs)
    ]
    return node


A, B = "a" * 64, "b" * 64


@pytest.mark.parametrize(
    "node,expected,words",
    [
        (NODE, "pass", "5 repeats on each of 4 cards: identical"),
        (_with_digests(([A] * 3, 0.0), ([A, A, B], 0.0)), "fail", "cuda:1 gave 2 different"),
        (_with_digests(([A] * 3, 0.0), ([B] * 3, 2e-7)), "warn", "in the last bits"),
        (_with_digests(([A] * 3, 0.0), ([B] * 3, 0.3)), "fail", "by 3.0e-01 of the largest"),
        (_with_digests(([A] * 3, 0.0), ([B] * 3, None)), "fail", "differs from cuda:0"),
    ],
)
def test_matmul_repeats_must_agree_run_after_run_and_card_after_card(node, expected, words):
    result, check = status(facts(node=node), context(), "interconnect.integrity")
    assert result == expected
    assert words in f"{check.measured} {check.detail}"


# --- the disk -------------------------------------------------------------------------------


def _disk(**changes) -> dict:
    disk = copy.deepcopy(DISK)
    for key, value in changes.items():
        if key == "fstype":
            disk["backing"]["fstype"] = value
        elif key in ("seq_write", "seq_read"):
            phase = next(p for p in disk["phases"] if p["phase"] == key)
            phase["blocks_ns"] = [int(phase["block_bytes"] / value)] * len(phase["blocks_ns"])
        elif key == "p50_us":
            phase = next(p for p in disk["phases"] if p["phase"] == "rand_read")
            phase["ops_ns"] = [int(value * 1000)] * len(phase["ops_ns"])
        elif key == "blocks":
            for phase in disk["phases"][:2]:
                phase["blocks_ns"] = phase["blocks_ns"][:value]
        elif key == "mismatched":
            disk["phases"][1]["mismatched_blocks"] = value
        else:
            disk[key] = value
    return disk


@pytest.mark.parametrize(
    "disk,declared,need,expected,words",
    [
        (DISK, 30.72, None, "pass", "30.20 TB at /mnt/checkpoints (xfs on md0), 29.90 TB free"),
        (DISK, 40, None, "fail", "short of the declared 40 TB by more than 10%"),
        (DISK, 30.72, 35, "fail", "need 35 TB per node; the disk holds 30.20 TB"),
        (DISK, 30.72, 30, "warn", "Only 29.90 TB of the 30 TB"),
        (DISK, None, None, "not_measured", "No local NVMe declared"),
        (_disk(fstype="tmpfs"), 30.72, None, "not_measured", "in memory (tmpfs)"),
        (None, 30.72, None, "not_measured", "No disk measurement"),
    ],
)
def test_disk_capacity_against_the_declared_nvme_and_the_checkpoints_need(
    disk, declared, need, expected, words
):
    result, check = status(facts(disk=disk), context(nvme=declared, need=need), "disk.capacity")
    assert result == expected
    assert words in f"{check.measured} {check.detail}"
    if disk is not None and disk["backing"]["fstype"] == "tmpfs":
        assert check.measured is None  # says nothing of a disk: never composed over one


@pytest.mark.parametrize(
    "disk,declared,expected,words",
    [
        (DISK, 30.72, "pass", "write 1.97 GB/s, read 3.18 GB/s, random 4 KiB reads P50 97 µs"),
        (_disk(seq_read=0.3), 30.72, "fail", "no faster than a SATA link carries"),
        (_disk(seq_read=0.8), 30.72, "warn", "below the 1 GB/s of local NVMe"),
        (_disk(seq_write=0.2), 30.72, "warn", "Sequential writes of 0.20 GB/s"),
        (_disk(p50_us=1500), 30.72, "warn", "1,500 µs at the median"),
        (_disk(mode="buffered"), 30.72, "warn", "page cache may have served"),
        (_disk(mismatched=2), 30.72, "fail", "2 blocks read back differ"),
        (_disk(blocks=1), 30.72, "not_measured", "over 4 MiB: at least 256 MiB"),
        (DISK, None, "not_measured", "No local NVMe declared"),
    ],
)
def test_disk_throughput_against_what_local_nvme_delivers(disk, declared, expected, words):
    result, check = status(facts(disk=disk), context(nvme=declared), "disk.throughput")
    assert result == expected
    assert words in f"{check.measured} {check.detail}"


def test_a_spoofed_disk_claim_fails_from_the_raw_timings_alone():
    """The summaries say 6 GB/s reads; each 4 MiB block took 20 ms (0.2 GB/s)."""
    spoofed = copy.deepcopy(DISK)
    for phase in spoofed["phases"][:2]:
        phase["blocks_ns"] = [20_000_000] * len(phase["blocks_ns"])
        phase["GBps"] = 6.0
    reading = read(document(disk=spoofed))
    check = {c.key: c for c in verify(reading.facts, context())}["disk.throughput"]
    assert check.status == "fail" and "read 0.21 GB/s" in check.measured
    assert ("disk/seq_read", "GBps") in {(d["where"], d["metric"]) for d in reading.disagreements}


def test_capacity_is_recomputed_from_the_raw_statvfs_fields():
    spoofed = copy.deepcopy(DISK)
    spoofed["capacity"]["total_bytes"] = 100 * 10**12
    reading = read(document(disk=spoofed))
    assert reading.summary["disk"]["capacity"]["total_bytes"] == DISK["capacity"]["total_bytes"]
    assert ("disk/capacity", "total_bytes") in {
        (d["where"], d["metric"]) for d in reading.disagreements
    }


# --- composition: each check from the newest bundle that measured it -------------------------


def _contribution(bundle: int, checks: list[dict]) -> Contribution:
    from django.utils import timezone

    when = timezone.now()
    return Contribution(
        bundle=bundle, sha256=str(bundle), received_at=when.replace(microsecond=bundle),
        measured_at=when, checks=tuple(checks),
    )  # fmt: skip


def test_a_later_run_without_torch_keeps_the_earlier_bandwidth_and_renews_the_topology():
    full = [c.as_dict() for c in verify(facts(node=NODE, disk=DISK), context())]
    topology_only = [c.as_dict() for c in verify(facts(), context())]
    composed = compose(
        [_contribution(1, full), _contribution(2, topology_only)],
        placeholders=_contribution(2, topology_only),
    )
    by_key = {c["key"]: c for c in composed.checks}
    assert by_key["interconnect.topology"]["bundle"] == 2
    assert by_key["interconnect.bandwidth"]["bundle"] == 1
    assert by_key["interconnect.bandwidth"]["status"] == "pass"
    assert by_key["disk.throughput"]["bundle"] == 1


# --- through the public API -----------------------------------------------------------------


@pytest.mark.django_db
def test_an_uploaded_node_and_disk_bundle_fills_the_checks_and_the_claims_page(
    tariq, api_as, browser_as
):
    case = make_case(tariq)
    spec = FULL_SPEC | {"intra_node_bandwidth_gbps": Decimal("600")}
    offer = make_offer(tariq, case, spec=spec)
    issued = make_token(tariq, case, offer)
    raw = serialise(document(node=NODE, disk=DISK, nonce=issued.record.nonce))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issued.token}")
    response = client.post("/api/v1/evidence/", data=raw, content_type="application/json")
    assert response.status_code == 201, response.json()

    listed = api_as("aude").get("/api/v1/spec-verifications/", {"offer": offer.pk})
    assert listed.status_code == 200
    [verification] = listed.json()["results"]
    checks = {c["key"]: c for c in verification["checks"]}
    for key in (
        "interconnect.topology",
        "interconnect.bandwidth",
        "interconnect.integrity",
        "disk.capacity",
        "disk.throughput",
    ):
        assert checks[key]["status"] == "pass", checks[key]
    assert verification["sources"]["node"]["bundle"] == verification["sources"]["disk"]["bundle"]

    page = browser_as("aude").get(reverse("portal:claims", args=[offer.pk]))
    assert page.status_code == 200
    rows = page.text.split("<tr>")
    row = {
        label: next(r for r in rows if label in r)
        for label in ("Intra-node interconnect", "Intra-node bandwidth", "Local NVMe per node")
    }
    assert "NV12 × 6" in row["Intra-node interconnect"] and "pass" in row["Intra-node interconnect"]
    assert "weakest pair" in row["Intra-node bandwidth"]
    assert "30.20 TB" in row["Local NVMe per node"] and "pass" in row["Local NVMe per node"]

    bundle_page = browser_as("tariq").get(reverse("evidence:detail", args=[verification["bundle"]]))
    assert bundle_page.status_code == 200
    assert "Inside the node" in bundle_page.text and "Local disk" in bundle_page.text

"""Between nodes, from the gateway, and the runtime versions, through POST /api/v1/evidence/
with real harness bundles made on loopback in a second or two.

A between-nodes run is checked against the declared inter-node network and its floor, and
an edited throughput summary fails from the raw samples. Only a gateway bundle fills the
network plan's gateway → remote service hop; the rented machine's own probe is shown as
such, and a gateway bundle from another host never blocks the verification. The token
page gives the gateway command beside the run.
"""

import copy
import html
import json
import platform
import socket
import uuid
from decimal import Decimal

import pytest
from diligence_harness.netpeer import NetServerThread
from django.urls import reverse

from apps.access.selectors import network_plan_of, plan_view
from apps.evidence.models import EvidenceBundle
from apps.offers.models import DeclaredSpec
from apps.sizing.services import requirement_spec_save
from tests.access.factories import make_plan
from tests.evidence.conftest import FIXTURES
from tests.evidence.factories import make_token
from tests.evidence.test_soak_correctness import harness, upload
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.django_db


def write_port(root, rate: str, link_layer: str) -> None:
    folder = root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    folder.mkdir(parents=True)
    (folder / "rate").write_text(rate + "\n")
    (folder / "link_layer").write_text(link_layer + "\n")
    (folder / "state").write_text("4: ACTIVE\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Bundles the harness writes on this machine: between nodes (an InfiniBand port in a
    sysfs of its own), a probe from the gateway, the rented machine's own probe, an
    inventory and an environment."""
    work = tmp_path_factory.mktemp("net")
    write_port(work, "400 Gb/sec (4X NDR)", "InfiniBand")
    written = {}

    def run(name: str, *args: str) -> None:
        out = work / f"{name}.json"
        done = harness(*args, "--nonce", "placeholder", "--out", str(out))
        assert done.returncode == 0, done.stderr
        written[name] = json.loads(out.read_bytes())

    with NetServerThread() as peer:
        run(
            "netpeer", "net-peer", "--peer", peer.peer, "--peer-duration-s", "0.2",
            "--peer-streams", "2", "--peer-count", "3", "--sysfs-root", str(work),
        )  # fmt: skip
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        run("gateway", "gateway", "--endpoint", f"http://127.0.0.1:{port}/v1", "--net-count", "3")
        run("netprobe", "netprobe", "--net-host", f"127.0.0.1:{port}", "--net-count", "3")
    inventory_xml = str(FIXTURES / "rtx-4090-1x-v12.xml")
    run("inventory", "inventory", "--nvidia-smi-xml", inventory_xml, "--no-alloc-probe")
    run("environment", "environment")
    return written


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def sent(world, document: dict) -> EvidenceBundle:
    response, _raw = upload(world, {**copy.deepcopy(document), "bundle_id": str(uuid.uuid4())})
    assert response.status_code == 201, response.json()
    return EvidenceBundle.objects.select_related("verification").get(pk=response.json()["id"])


def checks_of(bundle: EvidenceBundle) -> dict:
    return {c["key"]: c for c in bundle.verification.checks}


def declare(offer, **fields) -> None:
    DeclaredSpec.objects.filter(offer=offer).update(**fields)


def test_a_between_nodes_run_is_checked_against_the_declared_network_and_floor(
    world, runs, browser_as
):
    declare(world["offer"], inter_node_bandwidth_gbit=Decimal("400"))
    bundle = sent(world, runs["netpeer"])
    checks = checks_of(bundle)
    network, bandwidth = checks["network.inter_node"], checks["network.inter_node_bandwidth"]
    assert network["status"] == "pass" and "1 active InfiniBand RDMA port(s)" in network["measured"]
    assert bandwidth["status"] == "pass" and "400 Gbit/s in all" in bandwidth["measured"]
    assert bundle.client_summary_disagreements == []
    peer = bundle.summary["netpeer"]
    assert peer["send_gbit_s"] > 0 and peer["receive_gbit_s"] > 0 and peer["loss"] == 0
    assert peer["rdma"][0]["rate_gbit"] == 400 and peer["rdma"][0]["active"]

    page = browser_as("priya").get(reverse("evidence:detail", args=[bundle.pk])).content.decode()
    assert 'id="between-nodes"' in page and "InfiniBand" in page
    claims = browser_as("priya").get(reverse("portal:claims", args=[world["offer"].pk])).text
    assert "1 active InfiniBand RDMA port(s), 400 Gbit/s in all" in claims


def test_the_requirement_specs_floor_is_checked_with_its_tolerance(world, runs, tariq):
    declare(world["offer"], inter_node_bandwidth_gbit=Decimal("400"))
    requirement_spec_save(
        actor=tariq,
        case=world["case"],
        fields={"inter_node_bandwidth_gbit": Decimal("420"), "tolerance_pct": 10},
        reason="From the sizing",
    )
    check = checks_of(sent(world, runs["netpeer"]))["network.inter_node_bandwidth"]
    assert check["status"] == "warn"  # 400 is short of 420, within the spec's 10 %
    assert "below the requirement spec's floor of 420 Gbit/s" in check["detail"]
    assert "≥ 420 Gbit/s per node (the requirement spec, 10% short allowed)" in check["expected"]


def test_a_declared_floor_above_the_ports_fails(world, runs):
    # FULL_SPEC declares 3,200 Gbit/s per node; the node lists one 400 Gbit/s port.
    checks = checks_of(sent(world, runs["netpeer"]))
    assert checks["network.inter_node_bandwidth"]["status"] == "fail"
    assert (
        "below the declared floor of 3,200 Gbit/s"
        in checks["network.inter_node_bandwidth"]["detail"]
    )


def test_an_edited_throughput_summary_fails_from_the_raw_samples(world, runs):
    declare(world["offer"], inter_node_network="ethernet", inter_node_bandwidth_gbit=800)
    document = copy.deepcopy(runs["netpeer"])
    for transfer in document["steps"]["netpeer"]["result"]["throughput"]:
        transfer["gbit_s"] = 900.0  # what the vendor would like it to say
    bundle = sent(world, document)
    found = {(d["where"], d["metric"]) for d in bundle.client_summary_disagreements}
    assert {("netpeer/send", "gbit_s"), ("netpeer/receive", "gbit_s")} <= found
    check = checks_of(bundle)["network.inter_node_bandwidth"]
    # Loopback in one Python process moves a few Gbit/s, far under half of 800.
    assert check["status"] == "fail" and "below the declared floor of 800" in check["detail"]
    assert bundle.verification.verdict == "failed"


def plan_row(world):
    return {r.offer_id: r for r in plan_view(network_plan_of(world["case"])).offers}[
        world["offer"].pk
    ]


def from_the_office(document: dict) -> dict:
    return {**copy.deepcopy(document), "host": {"hostname": "office-gateway"}}


def test_only_a_gateway_bundle_fills_the_hop_and_it_never_blocks_identity(
    world, runs, tariq, api_as, browser_as
):
    make_plan(tariq, world["case"], estimated_rtt_ms=Decimal("120"))
    sent(world, runs["inventory"])
    machine = sent(world, runs["netprobe"])
    row = plan_row(world)
    # The rented machine's own probe: shown, labelled, never the gateway → remote hop.
    assert row.rtt.estimate and row.rtt.ms == Decimal("120")
    assert row.machine_rtt.bundle == machine.pk and row.machine_rtt.origin == "rented_machine"

    gateway = sent(world, from_the_office(runs["gateway"]))
    assert gateway.summary["run_role"] == "gateway" and gateway.host_name == "office-gateway"
    row = plan_row(world)
    assert row.rtt.measured and row.rtt.origin == "gateway" and row.rtt.bundle == gateway.pk
    assert row.rtt.samples == 3 and row.machine_rtt.bundle == machine.pk
    verification = (
        api_as("aude")
        .get("/api/v1/spec-verifications/", {"offer": world["offer"].pk})
        .json()["results"][0]
    )
    assert verification["findings"] == []  # the gateway is another host, on purpose
    assert verification["sources"]["gateway"]["bundle"] == gateway.pk
    assert verification["sources"]["netprobe"]["bundle"] == machine.pk
    statuses = {c["key"]: c["status"] for c in verification["checks"]}
    assert statuses["network.gateway_rtt"] == "pass"
    page = browser_as("tariq").get(reverse("access:plan", kwargs={"pk": world["case"].pk}))
    assert "measured from the gateway" in page.content.decode()
    assert "From the rented machine:" in page.content.decode()
    detail = browser_as("priya").get(reverse("evidence:detail", args=[gateway.pk]))
    assert 'id="gateway-probe"' in detail.content.decode()

    # The old way, an ordinary probe run from the gateway host, is another machine.
    sent(world, from_the_office(runs["netprobe"]))
    verification = (
        api_as("aude")
        .get("/api/v1/spec-verifications/", {"offer": world["offer"].pk})
        .json()["results"][0]
    )
    [finding] = verification["findings"]
    assert finding["sections"] == ["netprobe"] and plan_row(world).rtt.bundle == gateway.pk


def test_the_declared_runtime_versions_against_the_environment(world, runs, browser_as):
    declare(world["offer"], runtime_versions=f"Python {platform.python_version()}, vLLM 0.6.4")
    bundle = sent(world, runs["environment"])
    check = checks_of(bundle)["versions.runtime"]
    assert check["status"] == "pass"
    assert f"Python {platform.python_version()}" in check["measured"]
    assert "vLLM not found where the harness ran" in check["measured"]
    assert bundle.summary["software"]["python"] == platform.python_version()
    claims = browser_as("priya").get(reverse("portal:claims", args=[world["offer"].pk])).text
    assert "vLLM not found where the harness ran" in claims
    page = browser_as("priya").get(reverse("evidence:detail", args=[bundle.pk])).content.decode()
    assert 'id="versions"' in page and "Container image" in page


def token_page(browser_as, offer, **data) -> str:
    response = browser_as("tariq").post(
        reverse("evidence:tokens", args=[offer.case.pk]),
        {"offer": offer.pk, "ttl_hours": 2, **data},
    )
    return response.content.decode()


def command(page: str, name: str) -> str:
    start = page.index(f'<code id="{name}">') + len(f'<code id="{name}">')
    return page[start : page.index("</code>", start)]


def test_the_token_page_gives_the_run_and_the_gateway_probe(world, browser_as):
    page = token_page(browser_as, world["offer"], endpoint="https://api.vendor.example/v1")
    run, gateway = command(page, "run-command"), command(page, "gateway-command")
    assert " run --case " in run
    assert f" gateway --case {world['case'].pk} --endpoint https://api.vendor.example/v1" in gateway
    assert "--upload http" in gateway and "--out gateway.json" in gateway
    nonce = run.split("--nonce ")[1].split()[0]
    assert f"--nonce {nonce}" in gateway
    # InfiniBand declared: the between-nodes pair too.
    assert " net-serve --port 5201" in command(page, "serve-command")
    assert "--peer <SECOND_NODE_ADDRESS>:5201" in html.unescape(command(page, "peer-command"))
    declare(world["offer"], inter_node_network="none")
    single = token_page(browser_as, world["offer"])
    assert 'id="gateway-command"' in single and 'id="peer-command"' not in single

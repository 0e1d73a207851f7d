"""An offer's verification composed from all its bundles, through POST /api/v1/evidence/.

A full harness run, then a soak alone and a correctness run alone, all real harness
bundles from this machine: the offer's verification keeps every part, each naming the
bundle it comes from, on the evidence page, the offer page, the packet and in the
acceptance layers. A bundle from another machine is a finding that keeps the
verification from being confirmed, with the same reason on the approval gate, the case
page and the packet; and an approval goes stale only when a value it relied on changes.
"""

import copy
import json
import os
import socket
import stat
import uuid

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from apps.acceptance.measurements import offer_measurements
from apps.approvals.binding import changes_for
from apps.approvals.selectors import offer_gates
from apps.approvals.services import (
    approval_decide,
    case_submit_for_approval,
    stale_approvals_record,
)
from apps.cases.models import ProcurementCase
from apps.evidence import packet as evidence_packet
from apps.evidence.models import EvidenceBundle
from tests.approvals.factories import make_ready_case
from tests.evidence.conftest import FIXTURES, harness_env
from tests.evidence.factories import bundle_for, make_token, record_composed, serialise
from tests.evidence.test_soak_correctness import URL, harness, mock_process, upload
from tests.evidence.test_upload_worker import client_for
from tests.factories import FULL_SPEC, make_case, make_offer

RTX_4090 = "GPU-71d1acc2-662d-2166-bf9f-65272d2fc437"  # in rtx-4090-1x-v12.xml
ELSEWHERE = "GPU-00000000-0000-4000-8000-00000000beef"
PARTS = ("inventory", "environment", "bench", "loadtest", "netprobe", "authprobe")


@pytest.fixture(scope="session")
def machine_runs(tmp_path_factory):
    """A soak and a correctness run written by the harness on this machine, whose
    nvidia-smi shows the RTX 4090 the full run's inventory saw."""
    work = tmp_path_factory.mktemp("composed")
    smi = work / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\ncat "{FIXTURES / "rtx-4090-1x-v12.xml"}"\n')
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    kernel_log = work / "kern.log"
    kernel_log.write_text("[    1.0] boot\n")
    env = {**harness_env(), "PATH": f"{work}:{os.environ['PATH']}"}
    process, url = mock_process()
    try:
        reference = work / "reference.json"
        done = harness(
            "correctness", "--endpoint", url, "--model", "m", "--record-reference", str(reference)
        )
        assert done.returncode == 0, done.stderr
        soak_out, correctness_out = work / "soak.json", work / "correctness.json"
        done = harness(
            "soak", "--endpoint", url, "--model", "m", "--duration", "1.5s",
            "--interval", "0.1s", "--gpu-interval", "0.5s", "--kernel-log", str(kernel_log),
            "--nonce", "placeholder", "--out", str(soak_out), env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        done = harness(
            "correctness", "--endpoint", url, "--model", "m", "--reference", str(reference),
            "--nonce", "placeholder", "--out", str(correctness_out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        process.terminate()
        process.wait(timeout=10)
    return {
        "soak": json.loads(soak_out.read_bytes()),
        "correctness": json.loads(correctness_out.read_bytes()),
    }


def another_run(document: dict) -> dict:
    """The same run again as new bytes (another bundle id)."""
    return {**copy.deepcopy(document), "bundle_id": str(uuid.uuid4())}


def from_elsewhere(document: dict) -> dict:
    """The soak as if run on another host, with other GPUs."""
    doc = another_run(document)
    doc["host"]["hostname"] = "gpu-node-elsewhere"
    soak = json.dumps(doc["steps"]["soak"]).replace(RTX_4090, ELSEWHERE)
    doc["steps"]["soak"] = json.loads(soak)
    return doc


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def sent(world, document: dict) -> EvidenceBundle:
    response, _raw = upload(world, document)
    assert response.status_code == 201, response.json()
    return EvidenceBundle.objects.get(pk=response.json()["id"])


def offer_verification(api_as, offer) -> dict:
    response = api_as("aude").get("/api/v1/spec-verifications/", {"offer": offer.pk})
    assert response.status_code == 200
    return response.json()["results"][0]  # newest first: the offer's verification


def short(bundle: EvidenceBundle) -> str:
    return bundle.sha256[:12]


def render(section) -> str:
    return render_to_string(section.template, {**section.context, "section": section})


def test_a_soak_and_a_correctness_run_alone_keep_every_part_each_naming_its_bundle(
    world, cpu_bundle, machine_runs, api_as, browser_as
):
    offer = world["offer"]
    full = sent(world, cpu_bundle)
    after_full = offer_verification(api_as, offer)
    soak = sent(world, machine_runs["soak"])
    correctness = sent(world, machine_runs["correctness"])

    verification = offer_verification(api_as, offer)
    assert verification["bundle"] == correctness.pk  # recorded when the last bundle arrived
    sources = {part: source["bundle"] for part, source in verification["sources"].items()}
    # The CPU run measured its inventory, environment and load test (no GPU benchmark, no
    # network probe): those parts stay with it.
    measured_parts = set(after_full["sources"])
    assert {"inventory", "environment", "loadtest"} <= measured_parts <= set(PARTS)
    assert sources == {
        **dict.fromkeys(measured_parts, full.pk),
        "soak": soak.pk,
        "correctness": correctness.pk,
    }
    assert verification["sources"]["soak"]["sha256"] == soak.sha256
    # Every check the full run measured is still there, from the full run; a standalone
    # soak used to turn the verdict "insufficient" and wipe the load test.
    assert verification["verdict"] == after_full["verdict"] == "failed"  # 1 RTX 4090, not 8 H200
    assert [(c["key"], c["status"], c["measured"]) for c in verification["checks"]] == [
        (c["key"], c["status"], c["measured"]) for c in after_full["checks"]
    ]
    measured = [c for c in verification["checks"] if c["status"] != "not_measured"]
    assert measured and {c["bundle"] for c in measured} == {full.pk}
    assert any(c["key"].startswith("service.") for c in measured)
    assert verification["findings"] == []  # one machine throughout
    assert verification["headline"]["gpu_names"] == ["NVIDIA GeForce RTX 4090"]
    assert full.host_name == soak.host_name == socket.gethostname()
    assert full.gpu_uuids == soak.gpu_uuids == [RTX_4090] and correctness.gpu_uuids == []

    # The acceptance layers read the composition: the ladder stays with the full run.
    measurements = offer_measurements(offer)
    assert measurements.performance is not None
    assert measurements.performance.bundle_id == full.pk
    assert measurements.soak.bundle_id == soak.pk
    assert measurements.correctness.bundle_id == correctness.pk
    assert {c.key for c in measurements.verification_checks} >= {"versions.shm", "versions.driver"}
    # The plan's expected versions read the software the full run's environment reported
    # and the driver its inventory read, kept by the server when the bundle arrived.
    software = cpu_bundle["steps"]["environment"]["result"]["software"]
    assert full.summary["software"]["python"] == software["python"]
    assert measurements.versions is not None
    assert measurements.versions.software == full.summary["software"]
    assert measurements.versions.driver == full.summary["driver"]["driver_version"]
    assert (full.pk, full.sha256) in measurements.version_bundles
    assert {"bundle": full.pk, "sha256": full.sha256} in measurements.evidence

    # The evidence page names the bundle of each part.
    text = browser_as("priya").get(reverse("evidence:case", args=[world["case"].pk])).content
    text = text.decode()
    composed = text[text.index(f'id="composition-offer-{offer.pk}"') :]
    composed = composed[: composed.index("</section>")]
    for part, bundle in [("inventory", full), ("loadtest", full), ("soak", soak)]:
        row = composed[composed.index(f'class="part-{part}"') :]
        assert short(bundle) in row[: row.index("</tr>")]
    assert short(correctness) in composed and "Correctness" in composed
    # The soak's own page shows the offer's verification as of its arrival: the
    # identity checks come from the full run, named.
    page = browser_as("priya").get(reverse("evidence:detail", args=[soak.pk])).content.decode()
    row = page[page.index('id="check-identity.device_count"') :]
    assert short(full) in row[: row.index("</tr>")]
    row = page[page.index('class="part-soak"') :]
    assert short(soak) in row[: row.index("</tr>")]

    # The offer page has the same composition.
    page = browser_as("lena").get(reverse("offers:detail", args=[offer.pk])).content.decode()
    panel = page[page.index("<h2>Spec verification</h2>") :]
    assert all(short(b) in panel for b in (full, soak, correctness))

    # And the packet: the offer's verification, each part and check with its bundle.
    html = render(evidence_packet.packet_section(world["case"]))
    block = html[html.index('class="block offer-verification"') :]
    block = block[: block.index("Evidence bundle")]
    assert all(short(b) in block for b in (full, soak, correctness))
    assert "Load test" in block and "Soak" in block and "Correctness" in block


def test_bundles_verified_out_of_order_still_compose_every_part(
    world, worker, cpu_bundle, machine_runs, api_as, django_capture_on_commit_callbacks
):
    # Received full run first, soak second; a worker happens to verify the soak first.
    for document in (cpu_bundle, machine_runs["soak"]):
        raw = serialise(bundle_for(document, world["record"]))
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(world["token"]).post(
                URL, data=raw, content_type="application/json"
            )
        assert response.status_code == 202
    worker.queued.reverse()
    assert worker.run() == ["verified", "verified"]
    full, soak = EvidenceBundle.objects.order_by("received_at", "pk")
    verification = offer_verification(api_as, world["offer"])
    assert verification["bundle"] == full.pk  # the one composed last has seen both
    assert verification["sources"]["soak"]["bundle"] == soak.pk
    assert verification["sources"]["inventory"]["bundle"] == full.pk
    assert verification["verdict"] == "failed"


def test_a_bundle_from_another_machine_is_a_finding_shown_wherever_the_verification_is(
    world, cpu_bundle, machine_runs, api_as, browser_as
):
    full = sent(world, cpu_bundle)
    elsewhere = sent(world, from_elsewhere(machine_runs["soak"]))
    verification = offer_verification(api_as, world["offer"])
    [finding] = verification["findings"]
    assert finding["bundle"]["bundle"] == elsewhere.pk and finding["sections"] == ["soak"]
    assert finding["reference"]["bundle"] == full.pk
    assert [d["what"] for d in finding["differences"]] == ["host_name", "gpus"]
    assert elsewhere.host_name == "gpu-node-elsewhere" and elsewhere.gpu_uuids == [ELSEWHERE]

    reason = f"Bundle {short(elsewhere)} (Soak, received "
    words = f"host name gpu-node-elsewhere, not {socket.gethostname()}; GPUs {ELSEWHERE}, not "
    words += RTX_4090
    evidence = browser_as("priya").get(reverse("evidence:case", args=[world["case"].pk]))
    text = evidence.content.decode()
    assert reason in text and words in text and "This verification cannot be confirmed" in text
    case_page = browser_as("priya").get(reverse("cases:detail", args=[world["case"].pk]))
    assert words in case_page.content.decode()
    gate = next(
        g for g in offer_gates(world["case"], world["offer"]).gates if g.key == "verification"
    )
    assert not gate.held and words in gate.reason and reason in gate.reason
    html = render(evidence_packet.packet_section(world["case"]))
    assert words in html

    # A soak on the rented machine replaces it: nothing is mixed any more.
    sent(world, another_run(machine_runs["soak"]))
    assert offer_verification(api_as, world["offer"])["findings"] == []
    text = browser_as("priya").get(reverse("evidence:case", args=[world["case"].pk])).content
    assert words not in text.decode()


def passing(key: str, title: str, measured) -> dict:
    group = key.split(".")[0]
    return {"key": key, "group": group, "title": title, "status": "pass", "measured": measured,
            "expected": measured}  # fmt: skip


PASSING = [
    passing("identity.device_count", "Device count", 8),
    passing("identity.sku", "Model", "NVIDIA H200"),
    passing("identity.memory", "Memory", "143771 MiB"),
    passing("versions.driver", "Driver", "550.127.05"),
    passing("performance.matmul.bf16", "BF16 matmul", "700 TFLOP/s"),
    {**passing("service.ladder", "Load test", None), "status": "not_measured"},
]


def with_status(key: str, status: str, measured) -> list[dict]:
    return [dict(c, status=status, measured=measured) if c["key"] == key else c for c in PASSING]


@pytest.fixture
def approved(people):
    """priya's case, its first offer approved by tariq on a composed, passing verification
    of a full run on this machine's RTX 4090 (as the upload composes one)."""
    case, offer, _others = make_ready_case(people)
    token = make_token(people["tariq"], case, offer)
    run = record_composed(
        offer, token.record, n=1, checks=PASSING, headline={"gpus": 8},
        host_name=socket.gethostname(), gpu_uuids=[RTX_4090],
    )  # fmt: skip
    case = case_submit_for_approval(actor=people["priya"], case=case)
    approval = approval_decide(
        actor=people["tariq"], case=case, decision="approved", comment="Gates held", offer=offer
    )
    assert approval.bound_state["verification"]["values"]["verdict"] == "verified"
    return {"case": case, "offer": offer, "token": token.token, "record": token.record,
            "approval": approval, "run": run}  # fmt: skip


def stale(approval) -> list:
    return changes_for([approval])[approval.pk]


def test_an_approval_goes_stale_only_when_a_value_it_relied_on_changes(
    approved, machine_runs, people, browser_as
):
    approval, case = approved["approval"], approved["case"]
    # A soak and a correctness run change no check: the decision stands.
    sent(approved, machine_runs["soak"])
    sent(approved, machine_runs["correctness"])
    assert stale(approval) == []
    assert stale_approvals_record() == []
    assert (
        "The approval is stale"
        not in browser_as("tariq").get(reverse("cases:detail", args=[case.pk])).content.decode()
    )

    # A soak from another machine blocks the verification it relied on: stale, and the gate
    # says why.
    sent(approved, from_elsewhere(machine_runs["soak"]))
    [change] = stale(approval)
    assert change.model == "evidence.specverification"
    assert change.reason == "bundles from another machine"
    gate = next(g for g in offer_gates(case, approved["offer"]).gates if g.key == "verification")
    assert not gate.held and "was run on a different machine" in gate.reason
    page = browser_as("tariq").get(reverse("cases:detail", args=[case.pk])).content.decode()
    assert "The approval is stale" in page and "bundles from another machine" in page

    # Back on the rented machine, the values are those approved again.
    sent(approved, another_run(machine_runs["soak"]))
    assert stale(approval) == []
    gate = next(g for g in offer_gates(case, approved["offer"]).gates if g.key == "verification")
    assert gate.held


def test_a_new_run_that_changes_a_check_makes_the_approval_stale_and_says_which(approved, people):
    approval, offer = approved["approval"], approved["offer"]
    # The same values measured again: nothing the decision relied on changed.
    record_composed(
        offer, approved["record"], n=2, checks=PASSING, headline={"gpus": 8},
        host_name=socket.gethostname(), gpu_uuids=[RTX_4090],
    )  # fmt: skip
    assert stale(approval) == []
    record_composed(
        offer, approved["record"], n=3, checks=with_status("identity.device_count", "fail", 7),
        headline={"gpus": 7}, host_name=socket.gethostname(), gpu_uuids=[RTX_4090],
    )  # fmt: skip
    [change] = stale(approval)
    # Named by its title, as the evidence page names it, not by its key.
    assert change.reason == "verdict verified → failed; Device count pass → fail"
    [recorded] = stale_approvals_record()
    assert recorded.pk == approval.pk and recorded.stale_at is not None
    approved["case"].refresh_from_db()
    assert approved["case"].status == ProcurementCase.Status.PENDING_APPROVAL

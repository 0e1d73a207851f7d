"""An offer that cannot meet the compute demand is flagged everywhere and blocks approval.

Driven through the API and the pages: a training demand fits the ready offer, an
Ethernet-only network (no RDMA for a multi-node job) blocks it with a plain reason on
the gate, the offer page, the comparison, the case page and the packet; RDMA back,
and the offer is approvable again. Whole nodes and checkpoint disk block the same way.
"""

import copy
import html
from decimal import Decimal

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from apps.approvals import packet as approvals_packet
from apps.approvals.services import case_submit_for_approval
from apps.casework.packet.sections import demand_section
from apps.sizing.models import ComputeDemand
from tests.approvals.factories import make_ready_case

# Llama 3.1 70B fine-tuned with full gradient checkpointing: 10 H200 per replica, two
# replicas = 20 GPUs = 3 whole nodes of 8 (24 GPUs), a job over three nodes.
TRAINING = {
    "mode": "training",
    "model_preset": "llama-3.1-70b",
    "weight_dtype": "bf16",
    "card_memory_gib": "140.4",
    "reserve_pct": "15",
    "micro_batch_sequences": 1,
    "sequence_tokens": 4096,
    "optimizer": "adamw",
    "gradient_checkpointing": True,
    "data_parallel_replicas": 2,
    "checkpoints_kept": 2,
    "hours_needed": "500",
}
NO_RDMA = "its inter-node network is Ethernet / TCP, without RDMA"


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return case, offer


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready)


def _demand(api, case, body, *, reason=""):
    current = api.get(f"/api/v1/cases/{case.pk}/compute-demand/")
    if current.status_code == 200:
        body = {**body, "version": current.json()["version"], "change_reason": reason}
    return api.put(f"/api/v1/cases/{case.pk}/compute-demand/", body, format="json")


def _spec(api, offer, **fields):
    current = api.get(f"/api/v1/declared-specs/{offer.pk}/").json()
    body = {**fields, "version": current["version"], "change_reason": "Vendor's revised annex"}
    response = api.patch(f"/api/v1/declared-specs/{offer.pk}/", body, format="json")
    assert response.status_code == 200, response.content


def _gate(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return next(g for g in entry["gates"] if g["key"] == "demand_fit")


def _comparison_row(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/comparison/").json()
    return next(row for row in data["offers"] if row["offer"] == offer.pk)


def _page(client, name, pk) -> str:
    response = client.get(reverse(name, kwargs={"pk": pk}))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _packet(case) -> str:
    offers = list(case.offers.select_related("vendor", "declared_spec"))
    sections = [demand_section(case, offers), approvals_packet.packet_section(case)]
    return html.unescape(
        "".join(
            render_to_string(s.template, {**s.context, "section": s})
            for s in sections
            if s is not None
        )
    )


def test_without_a_demand_the_gate_holds_and_says_so(api_as, ready):
    case, offer = ready
    gate = _gate(api_as("aude"), case, offer)
    assert gate["held"] is True and "No compute demand saved" in gate["reason"]
    assert _comparison_row(api_as("aude"), case, offer)["demand_fit"] is None


def test_a_multi_node_job_without_rdma_blocks_approval_everywhere_until_fixed(
    api_as, browser_as, people, ready
):
    case, offer = ready
    tech, auditor = api_as("tariq"), api_as("aude")
    assert _demand(tech, case, TRAINING).status_code == 201
    demand = ComputeDemand.objects.get(case=case)
    assert (demand.data_parallel_replicas, demand.checkpoints_kept) == (2, 2)
    assert demand.hours_needed == Decimal("500.0")

    gate = _gate(auditor, case, offer)
    assert gate["held"] is True and gate["fix_url"] == f"/offers/{offer.pk}/"
    row = _comparison_row(auditor, case, offer)
    fit = row["demand_fit"]
    assert fit["meets"] is True and fit["mode"] == "training"
    assert (fit["gpus_needed"], fit["nodes_needed"], fit["gpus_in_whole_nodes"]) == (20, 3, 24)
    assert fit["multi_node"] is True
    # 3 nodes × 8 GPUs × 500 h × 3.1372 (3.10 an hour, 30 % prepaid financed at 8 %).
    cost = row["needed_capacity_cost"]
    assert (cost["gpus"], cost["hours"], cost["total"]) == (24, "500.0", "37646.40")
    assert cost["per_hour"] == "75.29" and cost["currency"] == "USD"

    _spec(tech, offer, inter_node_network="ethernet")
    gate = _gate(auditor, case, offer)
    assert gate["held"] is False
    assert "the job spans 3 nodes" in gate["reason"] and NO_RDMA in gate["reason"]
    (shortfall,) = _comparison_row(auditor, case, offer)["demand_fit"]["shortfalls"]
    assert shortfall in gate["reason"]

    reader = browser_as("aude")
    offer_page = _page(reader, "offers:detail", offer.pk)
    assert 'data-demand-fit="short"' in offer_page and shortfall in offer_page
    assert "Cost of the capacity needed" in offer_page and "37,646.40 USD" in offer_page
    comparison = _page(reader, "scorecards:comparison", case.pk)
    assert "cannot meet it" in comparison and shortfall in comparison
    assert "37,646.40 USD" in comparison
    case_page = _page(reader, "cases:detail", case.pk)
    assert f"{offer.vendor} cannot meet the compute demand: {shortfall}" in case_page
    packet = _packet(case)
    assert shortfall in packet and "Offer meets the compute demand" in packet

    case_submit_for_approval(actor=people["priya"], case=case)
    body = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    refused = tech.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")
    assert refused.status_code == 400 and NO_RDMA in str(refused.json()["offer"])

    _spec(tech, offer, inter_node_network="roce")
    assert _gate(auditor, case, offer)["held"] is True
    assert 'data-demand-fit="meets"' in _page(reader, "offers:detail", offer.pk)
    assert "cannot meet the compute demand" not in _page(reader, "cases:detail", case.pk)
    assert tech.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json").status_code == 201


@pytest.mark.parametrize(
    "change,words",
    [
        # 7 replicas × 10 = 70 GPUs = 9 nodes of 8 = 72 > 64 offered.
        (
            {"data_parallel_replicas": 7},
            "Needs 9 whole nodes of 8 cards (72 GPUs); the offer has 64 (short by 8).",
        ),
        # 40 checkpoints of 0.99 TB = 39.51 TB on 3 nodes × 30.72 TB = 92.16 TB: enough;
        # 100 need 98.78 TB.
        ({"checkpoints_kept": 100}, "Local disk for checkpoints is short by 6.62 TB"),
    ],
)
def test_whole_nodes_and_checkpoint_disk_block_the_gate(api_as, ready, change, words):
    case, offer = ready
    tech = api_as("tariq")
    assert _demand(tech, case, TRAINING).status_code == 201
    assert _gate(tech, case, offer)["held"] is True
    response = _demand(tech, case, {**TRAINING, **change}, reason="Bigger plan")
    assert response.status_code == 200, response.content
    gate = _gate(tech, case, offer)
    assert gate["held"] is False and words in gate["reason"]
    assert words in _comparison_row(tech, case, offer)["demand_fit"]["shortfalls"][0]
    assert _demand(tech, case, TRAINING, reason="Back to plan").status_code == 200
    assert _gate(tech, case, offer)["held"] is True


def test_an_inference_demand_short_of_whole_nodes_is_flagged(api_as, people, ready):
    case, offer = ready
    tech = api_as("tariq")
    inference = {
        "mode": "inference",
        "model_preset": "llama-3.1-70b",
        "weight_dtype": "bf16",
        "kv_dtype": "fp16",
        "context_tokens": 32768,
        "target_concurrency": 600,
        "tensor_parallel": 8,
        "card_memory_gib": "140.4",
    }
    assert _demand(tech, case, inference).status_code == 201
    assert _gate(tech, case, offer)["held"] is True
    row = _comparison_row(tech, case, offer)
    # No hours stated: the cost is given per hour, 64 GPUs × 3.1372.
    assert row["needed_capacity_cost"]["total"] is None
    assert row["needed_capacity_cost"]["per_hour"] == "200.78"
    _spec(tech, offer, cards_per_node=6)  # 64 GPUs → 11 nodes of 6 = 66 > 64
    gate = _gate(tech, case, offer)
    assert gate["held"] is False
    assert "Needs 11 whole nodes of 6 cards (66 GPUs); the offer has 64" in gate["reason"]


@pytest.mark.parametrize(
    "role,status", [("tariq", 201), ("priya", 403), ("lena", 403), ("aude", 403)]
)
def test_only_the_tech_lead_states_the_plan(api_as, ready, role, status):
    case, _offer = ready
    assert _demand(api_as(role), case, TRAINING).status_code == status


@pytest.mark.parametrize("role", ["priya", "lena", "tariq", "aude"])
def test_every_reviewer_reads_the_fit_in_the_comparison(api_as, ready, tariq, role):
    case, offer = ready
    assert _demand(api_as("tariq"), case, TRAINING).status_code == 201
    assert _comparison_row(api_as(role), case, offer)["demand_fit"]["meets"] is True


@pytest.mark.parametrize(
    "change,field",
    [
        ({"data_parallel_replicas": 0}, "data_parallel_replicas"),
        ({"checkpoints_kept": -1}, "checkpoints_kept"),
        ({"hours_needed": "0"}, "hours_needed"),
        ({"hours_needed": "abc"}, "hours_needed"),
        ({"hours_needed": "1e9"}, "hours_needed"),
    ],
)
def test_a_bad_plan_is_a_clear_400(api_as, ready, change, field):
    case, _offer = ready
    response = _demand(api_as("tariq"), case, {**TRAINING, **change})
    assert response.status_code == 400 and field in response.json()
    assert not ComputeDemand.objects.exists()

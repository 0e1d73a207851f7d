"""The requirement spec against an offer's declared spec, item by item, on plain data.

docs/rules/sizing.md#requirement-spec lists the spec sheet's items (card tier, memory
per card, card count, parallel strategy, cards per node, intra-node interconnect,
inter-node network class and bandwidth floor, local fast disk, duration), and for
serving the targets. Each item is a floor: the offer is short of it, equal to it or over
it, and a shortfall is named in one sentence.
"""

from dataclasses import replace
from decimal import Decimal

import pytest
from django.utils import translation

from apps.sizing.inputs import size_from
from apps.sizing.requirement import (
    OfferDeclared,
    Verdict,
    check_offer,
    derive_requirement,
    offer_tier,
    requirement_problems,
)
from tests.sizing.test_fit import CHECKPOINT, INFERENCE, TRAINING
from tests.test_generated_chinese import assert_chinese

REQUIRED = {
    "card_tier": "high",
    "memory_per_card_gib": Decimal("140"),
    "card_count": 64,
    "tensor_parallel": 8,
    "pipeline_parallel": 1,
    "data_parallel": 8,
    "cards_per_node": 8,
    "intra_node_interconnect": "nvlink",
    "intra_node_bandwidth_gbps": Decimal("900"),
    "inter_node_network": "rdma",
    "inter_node_bandwidth_gbit": Decimal("3200"),
    "local_nvme_tb": Decimal("30"),
    "term_months": 12,
    "throughput_tokens_per_s": Decimal("20000"),
    "throughput_requests_per_s": Decimal("40"),
}
# Equal to the requirement on every item.
DECLARED = OfferDeclared(
    accelerator_model="NVIDIA H200 SXM 141GB",  # 989 dense BF16 TFLOP/s: the high tier
    card_count=64,
    memory_per_card_gib=Decimal("140"),
    cards_per_node=8,
    intra_node_interconnect="nvlink",
    intra_node_bandwidth_gbps=Decimal("900"),
    inter_node_network="infiniband",
    inter_node_bandwidth_gbit=Decimal("3200"),
    local_nvme_tb=Decimal("30"),
    term_months=12,
    throughput_tokens_per_s=Decimal("20000"),
    throughput_requests_per_s=Decimal("40"),
    rate_limit_rps=Decimal("40"),
)
SHORT, EQUAL, OVER = Verdict.SHORT, Verdict.EQUAL, Verdict.OVER


def _item(check, field):
    return next(item for item in check.checks if item.field == field)


def test_an_offer_equal_on_every_item_meets_the_requirement():
    check = check_offer(REQUIRED, DECLARED)
    assert check.meets and check.shortfalls == []
    assert {item.verdict for item in check.checks} == {Verdict.EQUAL}
    assert len(check.checks) == 14  # 13 items, and the rate limit against the requests/s


# (item, requirement changes, declared changes, verdict, the shortfall's words)
TABLE = [
    # Card tier, by the card's datasheet: H200 is "high" (≥ 700 TFLOP/s dense BF16).
    ("card_tier", {"card_tier": "top"}, {}, SHORT, "Card tier: needs Top: at least 2,000 dense"),
    ("card_tier", {}, {}, EQUAL, ""),
    ("card_tier", {"card_tier": "mid"}, {}, OVER, ""),
    ("card_tier", {}, {"accelerator_model": "NVIDIA L40S 48GB"}, SHORT, "declares Mid"),
    (
        "memory_per_card_gib",
        {"memory_per_card_gib": Decimal("141")},
        {},
        SHORT,
        "Memory per card: needs at least 141 GiB; the offer declares 140 GiB (short by 1 GiB).",
    ),
    ("memory_per_card_gib", {}, {}, EQUAL, ""),
    ("memory_per_card_gib", {"memory_per_card_gib": Decimal("79.6")}, {}, OVER, ""),
    (
        "card_count",
        {"card_count": 72},
        {},
        SHORT,
        "Card count: needs at least 72 cards; the offer declares 64 cards (short by 8 cards).",
    ),
    ("card_count", {}, {}, EQUAL, ""),
    ("card_count", {}, {"card_count": 65}, OVER, ""),
    # Parallel strategy: the tensor-parallel group stays within one of the offer's nodes.
    (
        "parallel_strategy",
        {"tensor_parallel": 16, "data_parallel": 4, "cards_per_node": 16},
        {},
        SHORT,
        "a tensor-parallel group of 16 cards stays within one node; the offer's nodes hold "
        "8 cards (short by 8 cards)",
    ),
    ("parallel_strategy", {}, {}, EQUAL, ""),
    ("parallel_strategy", {"tensor_parallel": 4, "data_parallel": 16}, {}, OVER, ""),
    (
        "cards_per_node",
        {"cards_per_node": 16},
        {},
        SHORT,
        "Cards per node: needs at least 16 cards; the offer declares 8 cards (short by 8 cards).",
    ),
    ("cards_per_node", {}, {}, EQUAL, ""),
    ("cards_per_node", {}, {"cards_per_node": 16}, OVER, ""),
    (
        "intra_node_interconnect",
        {},
        {"intra_node_interconnect": "pcie"},
        SHORT,
        "Intra-node interconnect: needs NVLink / NVSwitch class; the offer declares PCIe.",
    ),
    ("intra_node_interconnect", {}, {}, EQUAL, ""),
    ("intra_node_interconnect", {"intra_node_interconnect": "pcie"}, {}, OVER, ""),
    (
        "intra_node_bandwidth_gbps",
        {"intra_node_bandwidth_gbps": Decimal("900.5")},
        {},
        SHORT,
        "(short by 0.5 GB/s)",
    ),
    ("intra_node_bandwidth_gbps", {}, {}, EQUAL, ""),
    ("intra_node_bandwidth_gbps", {"intra_node_bandwidth_gbps": Decimal("600")}, {}, OVER, ""),
    (
        "inter_node_network",
        {},
        {"inter_node_network": "ethernet"},
        SHORT,
        "Inter-node network: needs RDMA class (InfiniBand or RoCE); the offer declares "
        "Ethernet / TCP (no RDMA).",
    ),
    ("inter_node_network", {}, {"inter_node_network": "none"}, SHORT, "None (single node)"),
    ("inter_node_network", {}, {}, EQUAL, ""),
    ("inter_node_network", {}, {"inter_node_network": "roce"}, EQUAL, ""),  # both RDMA class
    ("inter_node_network", {"inter_node_network": "ethernet"}, {}, OVER, ""),
    (
        "inter_node_bandwidth_gbit",
        {"inter_node_bandwidth_gbit": Decimal("6400")},
        {},
        SHORT,
        "Inter-node bandwidth floor: needs at least 6,400 Gbit/s; the offer declares "
        "3,200 Gbit/s (short by 3,200 Gbit/s).",
    ),
    ("inter_node_bandwidth_gbit", {}, {}, EQUAL, ""),
    ("inter_node_bandwidth_gbit", {"inter_node_bandwidth_gbit": Decimal("400")}, {}, OVER, ""),
    ("local_nvme_tb", {"local_nvme_tb": Decimal("30.72")}, {}, SHORT, "(short by 0.72 TB)"),
    ("local_nvme_tb", {}, {}, EQUAL, ""),
    ("local_nvme_tb", {}, {"local_nvme_tb": Decimal("61.44")}, OVER, ""),
    (
        "term_months",
        {"term_months": 13},
        {},
        SHORT,
        "Job duration or term: the capacity is needed for 13 months; the offer's term is "
        "12 months (short by 1 month).",
    ),
    ("term_months", {}, {}, EQUAL, ""),
    ("term_months", {"term_months": 1}, {}, OVER, ""),
    (
        "throughput_tokens_per_s",
        {"throughput_tokens_per_s": Decimal("25000")},
        {},
        SHORT,
        "needs at least 25,000 tokens/s; the offer declares 20,000 tokens/s "
        "(short by 5,000 tokens/s)",
    ),
    ("throughput_tokens_per_s", {}, {}, EQUAL, ""),
    ("throughput_tokens_per_s", {}, {"throughput_tokens_per_s": Decimal("30000.5")}, OVER, ""),
    (
        "throughput_requests_per_s",
        {},
        {"throughput_requests_per_s": Decimal("39.5")},
        SHORT,
        "(short by 0.5 requests/s)",
    ),
    ("throughput_requests_per_s", {}, {}, EQUAL, ""),
    ("throughput_requests_per_s", {}, {"throughput_requests_per_s": Decimal("80")}, OVER, ""),
    # A declared rate limit below the requests/s target refuses the rest with 429.
    (
        "rate_limit_rps",
        {},
        {"rate_limit_rps": Decimal("25")},
        SHORT,
        "Endpoint rate limit: 25 requests/s, below the target of 40 requests/s; requests past "
        "it are refused (short by 15 requests/s).",
    ),
    ("rate_limit_rps", {}, {}, EQUAL, ""),
    ("rate_limit_rps", {}, {"rate_limit_rps": Decimal("100")}, OVER, ""),
]


@pytest.mark.parametrize(
    "field,required,declared,verdict,words",
    TABLE,
    ids=[f"{row[0]}-{row[3]}-{n}" for n, row in enumerate(TABLE)],
)
def test_each_item_short_equal_or_over(field, required, declared, verdict, words):
    check = check_offer({**REQUIRED, **required}, replace(DECLARED, **declared))
    item = _item(check, field)
    assert item.verdict == verdict
    if verdict == Verdict.SHORT:
        assert words in item.shortfall
        assert item.shortfall in check.shortfalls and not check.meets
    else:
        assert item.shortfall == ""


@pytest.mark.parametrize(
    "field,declared_field",
    [
        ("memory_per_card_gib", "memory_per_card_gib"),
        ("cards_per_node", "cards_per_node"),
        ("intra_node_bandwidth_gbps", "intra_node_bandwidth_gbps"),
        ("inter_node_bandwidth_gbit", "inter_node_bandwidth_gbit"),
        ("local_nvme_tb", "local_nvme_tb"),
        ("term_months", "term_months"),
        ("throughput_tokens_per_s", "throughput_tokens_per_s"),
        ("throughput_requests_per_s", "throughput_requests_per_s"),
    ],
)
def test_an_item_the_offer_does_not_state_is_named_as_a_shortfall(field, declared_field):
    check = check_offer(REQUIRED, replace(DECLARED, **{declared_field: None}))
    item = _item(check, field)
    assert item.verdict == Verdict.NOT_STATED
    assert item.shortfall.endswith("the offer does not state it.")


@pytest.mark.parametrize(
    "declared,words",
    [
        ({"intra_node_interconnect": ""}, "the offer does not state it"),
        # "Other" cannot be ranked against NVLink: a finding, not a pass.
        ({"intra_node_interconnect": "other"}, "the offer's “Other” cannot be checked"),
    ],
)
def test_an_interconnect_not_stated_or_not_ranked_is_a_shortfall(declared, words):
    item = _item(check_offer(REQUIRED, replace(DECLARED, **declared)), "intra_node_interconnect")
    assert item.verdict == Verdict.NOT_STATED and words in item.shortfall


def test_a_card_missing_from_the_datasheet_table_has_no_tier_to_check():
    declared = replace(DECLARED, accelerator_model="Acme Tensor X1")
    item = _item(check_offer(REQUIRED, declared), "card_tier")
    assert item.verdict == Verdict.NOT_STATED
    assert "“Acme Tensor X1” is not in the datasheet table" in item.shortfall


@pytest.mark.parametrize(
    "model,tier",
    [
        ("NVIDIA A100 SXM4 80GB", "mid"),  # 312 dense BF16 TFLOP/s
        ("NVIDIA H100 SXM5 80GB", "high"),  # 989
        ("NVIDIA H20 96GB", "entry"),  # 148
        ("NVIDIA B200 180GB", "top"),  # 2,250
    ],
)
def test_a_cards_tier_comes_from_its_datasheet_figure(model, tier):
    assert offer_tier(model)[0] == tier


def test_a_requirement_left_blank_checks_nothing():
    check = check_offer({}, DECLARED)
    assert check.meets
    assert {item.verdict for item in check.checks} == {Verdict.NOT_REQUIRED}
    # Without a requests/s target the rate limit is not compared at all.
    assert "rate_limit_rps" not in {item.field for item in check.checks}


def test_shortfalls_read_in_chinese():
    worst = replace(
        DECLARED,
        accelerator_model="NVIDIA L40S 48GB",
        memory_per_card_gib=Decimal("48"),
        card_count=8,
        cards_per_node=4,
        intra_node_interconnect="pcie",
        intra_node_bandwidth_gbps=None,
        inter_node_network="ethernet",
        inter_node_bandwidth_gbit=Decimal("100"),
        local_nvme_tb=Decimal("1"),
        term_months=1,
        throughput_tokens_per_s=Decimal("10"),
        throughput_requests_per_s=Decimal("1"),
        rate_limit_rps=Decimal("1"),
    )
    with translation.override("zh-hans"):
        check = check_offer(REQUIRED, worst)
        assert len(check.shortfalls) == 14
        for line in check.shortfalls:
            assert_chinese(line)


# --- The spec's tolerance ----------------------------------------------------------------
# docs/rules/sizing.md#requirement-spec: short of a numeric figure by at most the tolerance
# is within it (for the tech lead to accept), below that short; classes never take it.
WITHIN = Verdict.WITHIN_TOLERANCE

# (item, requirement changes, declared 5 % short, declared 15 % short)
TOLERANT = [
    (
        "memory_per_card_gib",
        {},
        {"memory_per_card_gib": Decimal("133")},
        {"memory_per_card_gib": Decimal("119")},
    ),
    ("card_count", {"card_count": 60}, {"card_count": 57}, {"card_count": 51}),
    ("cards_per_node", {"cards_per_node": 20}, {"cards_per_node": 19}, {"cards_per_node": 17}),
    (
        "intra_node_bandwidth_gbps",
        {},
        {"intra_node_bandwidth_gbps": Decimal("855")},
        {"intra_node_bandwidth_gbps": Decimal("765")},
    ),
    (
        "inter_node_bandwidth_gbit",
        {},
        {"inter_node_bandwidth_gbit": Decimal("3040")},
        {"inter_node_bandwidth_gbit": Decimal("2720")},
    ),
    ("local_nvme_tb", {}, {"local_nvme_tb": Decimal("28.5")}, {"local_nvme_tb": Decimal("25.5")}),
    (
        "throughput_tokens_per_s",
        {},
        {"throughput_tokens_per_s": Decimal("19000")},
        {"throughput_tokens_per_s": Decimal("17000")},
    ),
    (
        "throughput_requests_per_s",
        {},
        {"throughput_requests_per_s": Decimal("38")},
        {"throughput_requests_per_s": Decimal("34")},
    ),
]


@pytest.mark.parametrize("field,required,five,fifteen", TOLERANT, ids=[r[0] for r in TOLERANT])
def test_a_numeric_figure_short_within_the_tolerance_needs_acceptance(
    field, required, five, fifteen
):
    def verdict(tolerance, declared):
        spec = {**REQUIRED, **required, "tolerance_pct": tolerance}
        return _item(check_offer(spec, replace(DECLARED, **declared)), field)

    # At 0 % (the default) every shortfall is short, as without a tolerance.
    assert verdict(0, five).verdict == SHORT
    # At 10 %: 5 % short is within it, 15 % short is short.
    within = verdict(10, five)
    assert within.verdict == WITHIN and within.within_tolerance and within.tolerance == "10 %"
    assert "within the spec's 10 % tolerance, so the tech lead must accept it." in within.shortfall
    short = verdict(10, fifteen)
    assert short.verdict == SHORT and "tolerance" not in short.shortfall


def test_the_tolerance_reaches_its_edge_and_no_further():
    # 140 GiB at 10 %: 126 GiB is exactly 10 % short, 125.9 GiB is past it.
    spec = {**REQUIRED, "tolerance_pct": 10}
    edge = check_offer(spec, replace(DECLARED, memory_per_card_gib=Decimal("126")))
    past = check_offer(spec, replace(DECLARED, memory_per_card_gib=Decimal("125.9")))
    assert _item(edge, "memory_per_card_gib").verdict == WITHIN
    assert _item(past, "memory_per_card_gib").verdict == SHORT


def test_within_tolerance_names_the_gap_its_share_and_the_tolerance_and_is_not_met():
    check = check_offer({**REQUIRED, "tolerance_pct": 10}, replace(DECLARED, card_count=60))
    item = _item(check, "card_count")
    assert item.shortfall == (
        "Card count: the offer declares 60 cards, 4 cards short of the 64 cards required "
        "(6.3 %): within the spec's 10 % tolerance, so the tech lead must accept it."
    )
    assert item.verdict_label == "Within tolerance"
    # Still short of the spec: listed with the shortfalls, never met silently.
    assert not check.meets
    assert check.shortfalls == [item.shortfall] == check.within_tolerance


# (item, requirement changes, declared changes): short of a class, the parallel plan, the
# term or the rate limit, by however little, even at the widest tolerance.
NEVER_TOLERANT = [
    ("card_tier", {"card_tier": "top"}, {}),
    ("intra_node_interconnect", {}, {"intra_node_interconnect": "pcie"}),
    ("inter_node_network", {}, {"inter_node_network": "ethernet"}),
    ("parallel_strategy", {"tensor_parallel": 9, "cards_per_node": 9}, {}),
    ("term_months", {"term_months": 13}, {}),
    ("rate_limit_rps", {}, {"rate_limit_rps": Decimal("39")}),
]


@pytest.mark.parametrize(
    "field,required,declared", NEVER_TOLERANT, ids=[r[0] for r in NEVER_TOLERANT]
)
def test_classes_the_plan_the_term_and_the_rate_limit_take_no_tolerance(field, required, declared):
    spec = {**REQUIRED, **required, "tolerance_pct": 50}
    item = _item(check_offer(spec, replace(DECLARED, **declared)), field)
    assert item.verdict == SHORT and "tolerance" not in item.shortfall


# --- Derived from the sizing -------------------------------------------------------------


def test_inference_derives_cards_parallel_plan_and_the_link_inside_a_node():
    # Llama 3.1 70B, 600 × 32k sequences on H200: 8 instances of 8 cards (tests/sizing/test_fit).
    derived = derive_requirement(
        sizing=size_from(INFERENCE), card_memory_gib=Decimal("140.4"), hours_needed=Decimal(731)
    )
    assert derived.values == {
        "memory_per_card_gib": Decimal("140.4"),
        "card_count": 64,
        "tensor_parallel": 8,
        "pipeline_parallel": 1,
        "data_parallel": 8,
        "cards_per_node": 8,
        "intra_node_interconnect": "nvlink",
        "term_months": 2,  # 731 hours is just over a month of 730
    }
    assert set(derived.reasons) == set(derived.values)


def test_inference_on_one_card_needs_no_fast_link():
    derived = derive_requirement(
        sizing=size_from({**INFERENCE, "tensor_parallel": 1, "model_preset": "llama-3.1-8b"}),
        card_memory_gib=Decimal("140.4"),
    )
    assert derived.values["cards_per_node"] == 1
    assert "intra_node_interconnect" not in derived.values
    assert "term_months" not in derived.values


def test_training_derives_nodes_of_eight_rdma_and_checkpoint_disk():
    # 10 H200 per replica, 2 replicas: 20 cards on 3 nodes of 8 (docs/rules/sizing.md#demand-fit:
    # RDMA between them).
    derived = derive_requirement(
        sizing=size_from(TRAINING), card_memory_gib=Decimal("140.4"), replicas=2
    )
    values = derived.values
    assert (values["card_count"], values["data_parallel"], values["tensor_parallel"]) == (20, 20, 1)
    assert values["cards_per_node"] == 8
    assert values["inter_node_network"] == "rdma"
    assert values["intra_node_interconnect"] == "nvlink"
    # Two checkpoints of 0.99 TB sharded over 3 nodes: 0.66 TB each, rounded up.
    expected = (Decimal(CHECKPOINT * 2) / 3 / 10**12).quantize(Decimal("0.01"), "ROUND_CEILING")
    assert values["local_nvme_tb"] == expected == Decimal("0.66")


def test_a_sizing_that_does_not_fit_derives_only_the_card_memory():
    sizing = size_from({**INFERENCE, "tensor_parallel": 1, "card_memory_gib": Decimal("24")})
    derived = derive_requirement(sizing=sizing, card_memory_gib=Decimal("24"))
    assert derived.values == {"memory_per_card_gib": Decimal("24")}


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"card_count": 63}, "card_count"),  # 8 × 1 × 8 = 64 cards in the plan
        ({"cards_per_node": 4}, "cards_per_node"),  # a TP group of 8 on nodes of 4
    ],
)
def test_a_requirement_that_contradicts_itself_is_named(changes, field):
    assert set(requirement_problems({**REQUIRED, **changes})) == {field}


def test_a_consistent_requirement_has_no_problems():
    assert requirement_problems(REQUIRED) == {}

"""The fit of an offer to the compute demand, inference and training, on plain data."""

from dataclasses import replace
from decimal import Decimal

import pytest

from apps.sizing.fit import TB, OfferHardware, demand_fit
from apps.sizing.inputs import size_from

# Llama 3.1 70B for 600 × 32k sequences on H200: 8 instances of 8 cards = 64 GPUs.
INFERENCE = {
    "mode": "inference",
    "model_preset": "llama-3.1-70b",
    "weight_dtype": "bf16",
    "kv_dtype": "fp16",
    "context_tokens": 32768,
    "target_concurrency": 600,
    "tensor_parallel": 8,
    "card_memory_gib": Decimal("140.4"),
    "reserve_pct": Decimal("15"),
}
# Llama 3.1 70B fine-tuned with AdamW and full gradient checkpointing: 10 H200 per replica.
# A checkpoint is bf16 weights + FP32 master + two FP32 moments = 14 B × 70,553,706,496
# parameters = 987,751,890,944 bytes (gradients are not kept).
TRAINING = {
    "mode": "training",
    "model_preset": "llama-3.1-70b",
    "weight_dtype": "bf16",
    "card_memory_gib": Decimal("140.4"),
    "reserve_pct": Decimal("15"),
    "micro_batch_sequences": 1,
    "sequence_tokens": 4096,
    "gradient_checkpointing": True,
}
CHECKPOINT = 14 * 70_553_706_496

H200_NODE = OfferHardware(
    card_count=64,
    card_memory_gib=Decimal("140.4"),
    cards_per_node=8,
    inter_node_network="infiniband",
    local_nvme_tb=Decimal("30.72"),
)


def _fit(fields, hardware=H200_NODE, **plan):
    return demand_fit(sizing=size_from(fields), hardware=hardware, **plan)


@pytest.mark.parametrize(
    "cards,cards_per_node,nodes,whole,meets,words",
    [
        (64, 8, 8, 64, True, "64 GPUs needed = 8 whole nodes of 8 cards (64 GPUs)"),
        (63, 8, 8, 64, False, "(short by 1)"),
        # 64 GPUs round up to 11 nodes of 6: an offer of exactly 64 GPUs is still short.
        (64, 6, 11, 66, False, "Needs 11 whole nodes of 6 cards (66 GPUs); the offer has 64"),
        (66, 6, 11, 66, True, "11 whole nodes of 6 cards (66 GPUs)"),
        (64, 16, 4, 64, True, "4 whole nodes of 16 cards"),
        (48, 16, 4, 64, False, "the offer has 48 (short by 16)"),
    ],
)
def test_inference_gpus_are_rounded_up_to_whole_nodes(
    cards, cards_per_node, nodes, whole, meets, words
):
    hardware = replace(H200_NODE, card_count=cards, cards_per_node=cards_per_node)
    fit = _fit(INFERENCE, hardware)
    assert (fit.gpus_needed, fit.nodes_needed, fit.gpus_in_whole_nodes) == (64, nodes, whole)
    assert fit.meets_target is meets
    assert words in fit.message


@pytest.mark.parametrize(
    "network,meets,words",
    [
        ("infiniband", True, ""),
        ("roce", True, ""),
        ("ethernet", False, "Ethernet / TCP, without RDMA"),
        ("none", False, "no inter-node network"),
        ("", False, "states no inter-node network"),
    ],
)
def test_an_instance_wider_than_a_node_needs_rdma(network, meets, words):
    hardware = replace(H200_NODE, inter_node_network=network)
    fit = _fit({**INFERENCE, "tensor_parallel": 16}, hardware)
    assert fit.multi_node is True
    assert fit.meets_target is meets
    if words:
        (shortfall,) = fit.shortfalls
        assert "one instance of 16 cards spans 2 nodes" in shortfall and words in shortfall


def test_inference_instances_within_a_node_need_no_rdma():
    fit = _fit(INFERENCE, replace(H200_NODE, inter_node_network="ethernet"))
    assert fit.multi_node is False and fit.meets_target


def test_inference_is_resized_on_the_offers_smaller_cards():
    # On 80 GB cards an 8-card instance holds fewer sequences: more instances, more GPUs.
    fit = _fit(INFERENCE, replace(H200_NODE, card_memory_gib=Decimal("79.6")))
    assert fit.gpus_needed > 64 and not fit.meets_target
    assert "short by" in fit.message


def test_an_instance_that_serves_nothing_is_a_shortfall():
    fit = _fit(INFERENCE, replace(H200_NODE, card_memory_gib=Decimal("16")))
    assert fit.gpus_needed == 0 and not fit.meets_target
    assert "serves nothing" in fit.shortfalls[0]


def test_without_a_node_size_whole_nodes_cannot_be_counted():
    fit = _fit(INFERENCE, replace(H200_NODE, cards_per_node=None))
    assert fit.nodes_needed is None and not fit.meets_target
    assert "does not state cards per node" in fit.shortfalls[-1]
    short = _fit(INFERENCE, replace(H200_NODE, cards_per_node=None, card_count=48))
    assert "Needs 64 GPUs; the offer has 48 (short by 16)." in short.shortfalls


@pytest.mark.parametrize(
    "replicas,gpus,nodes,multi_node",
    [(None, 10, 2, True), (1, 10, 2, True), (2, 20, 3, True), (6, 60, 8, True)],
)
def test_training_needs_cards_per_replica_times_replicas_in_whole_nodes(
    replicas, gpus, nodes, multi_node
):
    fit = _fit(TRAINING, replicas=replicas)
    assert (fit.gpus_needed, fit.nodes_needed, fit.multi_node) == (gpus, nodes, multi_node)
    assert fit.meets_target


def test_training_on_one_node_needs_no_rdma():
    # 8B needs 2 cards a replica: 4 replicas fill one node, so Ethernet between nodes
    # does not matter; a fifth replica spills onto a second node, and then it does.
    fields = {**TRAINING, "model_preset": "llama-3.1-8b"}
    fit = _fit(fields, replace(H200_NODE, inter_node_network="ethernet"), replicas=4)
    assert (fit.gpus_needed, fit.nodes_needed, fit.multi_node) == (8, 1, False)
    assert fit.meets_target
    nine = _fit(fields, replace(H200_NODE, inter_node_network="ethernet"), replicas=5)
    assert nine.multi_node and not nine.meets_target
    assert "the job spans 2 nodes" in nine.shortfalls[0]


def test_training_more_nodes_than_offered_is_short():
    fit = _fit(TRAINING, replicas=7)  # 70 GPUs → 9 nodes = 72 > 64
    assert not fit.meets_target
    assert "Needs 9 whole nodes of 8 cards (72 GPUs); the offer has 64 (short by 8)." in (
        fit.shortfalls
    )


@pytest.mark.parametrize(
    "kept,nvme_bytes,meets",
    [
        (None, 2 * CHECKPOINT, True),  # two kept by default, exactly enough
        (2, 2 * CHECKPOINT, True),
        (2, 2 * CHECKPOINT - 1, False),  # one byte short
        (3, 2 * CHECKPOINT, False),
        (1, CHECKPOINT, True),
    ],
)
def test_checkpoint_disk_boundary(kept, nvme_bytes, meets):
    # One replica of 10 cards = 2 nodes; give each node half of the bytes.
    per_node_tb = Decimal(nvme_bytes) / 2 / TB
    fit = _fit(TRAINING, replace(H200_NODE, local_nvme_tb=per_node_tb), checkpoints_kept=kept)
    assert fit.checkpoint_bytes == CHECKPOINT
    assert fit.checkpoints_kept == (kept or 2)
    assert fit.disk_needed_bytes == CHECKPOINT * (kept or 2)
    assert fit.meets_target is meets
    if not meets:
        assert "Local disk for checkpoints is short by" in fit.shortfalls[0]
        assert "short by 0.00 TB" not in fit.shortfalls[0]  # a shortfall rounds up


def test_undeclared_local_nvme_leaves_checkpoints_without_room():
    fit = _fit(TRAINING, replace(H200_NODE, local_nvme_tb=None))
    assert not fit.meets_target and "does not state local NVMe" in fit.shortfalls[0]


def test_training_that_does_not_fit_the_offers_cards_is_a_shortfall():
    fields = {**TRAINING, "gradient_checkpointing": False, "micro_batch_sequences": 64}
    fit = _fit(fields)
    assert fit.gpus_needed == 0 and not fit.meets_target
    assert "no replica fits" in fit.shortfalls[0]


def test_training_is_resized_on_the_offers_cards():
    fit = _fit(TRAINING, replace(H200_NODE, card_memory_gib=Decimal("79.6")))
    assert fit.gpus_needed == 17  # 17 cards of 80 GB where 10 of 141 GB sufficed

"""Sizing calculator rules (docs/rules/sizing.md), checked by hand.

Every expected number is worked out in the comment beside it. GiB = 2**30 bytes.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from apps.sizing.calculator import (
    DTYPE_BYTES,
    GIB,
    InferenceInputs,
    ModelArchitecture,
    SizingInputError,
    instances_from_cards,
    kv_bytes_per_token,
    offer_capacity,
    size_inference,
)
from apps.sizing.presets import PRESETS, preset_choices
from apps.sizing.training import FULL_CHECKPOINTING_FACTOR, TrainingInputs, size_training

LLAMA_8B = PRESETS["llama-3.1-8b"]
LLAMA_70B = PRESETS["llama-3.1-70b"]
# NVML shows an H200 "141 GB" as 143,771 MiB = 140.4 GiB; an H100/A100 "80 GB" as ~80 GiB.
H200_GIB = Decimal("140.4")
H100_GIB = 80

# The demo case (seed_demo can reuse it): Llama 3.1 70B, bf16 weights, fp16 KV, 32k context,
# 600 concurrent sequences, TP 8 on H200, 15 % reserve → 8 instances = 64 H200 cards.
DEMO_INPUTS = InferenceInputs(
    architecture=LLAMA_70B,
    weight_dtype="bf16",
    kv_dtype="fp16",
    context_tokens=32_768,
    target_concurrency=600,
    tensor_parallel=8,
    card_memory_gib=H200_GIB,
)


def inference(**overrides: object) -> InferenceInputs:
    return replace(DEMO_INPUTS, **overrides)


def test_dtype_bytes_match_the_design():
    # docs/rules/sizing.md#inference-memory: FP32 4, FP16/BF16 2, FP8/INT8 1, INT4 0.5
    # bytes per parameter.
    published = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "int4": Decimal("0.5")}
    assert published == DTYPE_BYTES


@pytest.mark.parametrize(
    ("weight_dtype", "expected_bytes"),
    [
        ("fp32", 282_214_825_984),  # 70,553,706,496 params × 4
        ("bf16", 141_107_412_992),  # × 2 = 131.42 GiB
        ("fp16", 141_107_412_992),
        ("fp8", 70_553_706_496),  # × 1
        ("int8", 70_553_706_496),
        ("int4", 35_276_853_248),  # × 0.5
    ],
)
def test_weights_are_parameters_times_bytes_per_parameter(weight_dtype, expected_bytes):
    assert size_inference(inference(weight_dtype=weight_dtype)).weights_bytes == expected_bytes


def test_moe_weights_count_every_expert_not_only_the_active_ones():
    # Mixtral 8x7B: 46,702,792,704 params × 2 bytes, although 12.9B run per token.
    sizing = size_inference(inference(architecture=PRESETS["mixtral-8x7b"]))
    assert sizing.weights_bytes == 93_405_585_408


@pytest.mark.parametrize(
    ("preset", "kv_dtype", "expected_bytes"),
    [
        ("llama-3.1-70b", "bf16", 327_680),  # 2 × 80 layers × 8 kv × 128 dim × 2 B = 320 KiB
        ("llama-3.1-70b", "fp8", 163_840),  # same × 1 B
        ("llama-3.1-70b", "int4", 81_920),  # same × 0.5 B
        ("llama-3.1-8b", "bf16", 131_072),  # 2 × 32 × 8 × 128 × 2 = 128 KiB
        ("llama-3.1-405b", "bf16", 516_096),  # 2 × 126 × 8 × 128 × 2 = 504 KiB
        ("qwen2.5-7b", "bf16", 57_344),  # 2 × 28 × 4 × 128 × 2 = 56 KiB
        ("qwen2.5-72b", "bf16", 327_680),  # 2 × 80 × 8 × 128 × 2
        ("mixtral-8x7b", "bf16", 131_072),  # 2 × 32 × 8 × 128 × 2
        ("llama-2-7b", "fp16", 524_288),  # MHA: 2 × 32 layers × 4096 hidden × 2 = 512 KiB
        ("llama-2-13b", "fp16", 819_200),  # MHA: 2 × 40 layers × 5120 hidden × 2 = 800 KiB
    ],
)
def test_kv_bytes_per_token(preset, kv_dtype, expected_bytes):
    assert kv_bytes_per_token(PRESETS[preset], kv_dtype) == expected_bytes


@pytest.mark.parametrize("preset", ["llama-2-7b", "llama-2-13b"])
def test_mha_kv_is_the_seeds_two_times_layers_times_hidden(preset):
    # docs/rules/sizing.md#inference-memory writes KV per token as 2 × layers × hidden × bytes.
    arch = PRESETS[preset]
    assert arch.attention == "MHA"
    assert kv_bytes_per_token(arch, "fp16") == 2 * arch.layers * arch.hidden_size * 2


@pytest.mark.parametrize(
    ("preset", "shrink"),
    [("llama-3.1-70b", 8), ("llama-3.1-405b", 16), ("qwen2.5-7b", 7), ("mixtral-8x7b", 4)],
)
def test_gqa_shrinks_kv_by_heads_over_kv_heads(preset, shrink):
    # docs/rules/sizing.md#inference-memory: grouped-query attention cuts the KV cache; 64 heads / 8
    # KV = 8×.
    gqa = PRESETS[preset]
    mha = replace(gqa, kv_heads=gqa.attention_heads)
    assert gqa.attention == "GQA"
    assert kv_bytes_per_token(mha, "bf16") == shrink * kv_bytes_per_token(gqa, "bf16")


def test_custom_architecture_with_a_single_kv_head():
    # Custom entry (docs/rules/sizing.md#model-presets): MQA keeps one KV head,
    # 2 × 48 layers × 1 × 128 dim × 2 B = 24,576 B/token; 30B × 1 B fp8 = 30e9 B weights.
    custom = ModelArchitecture(
        key="custom",
        name="In-house 30B",
        parameters=30_000_000_000,
        layers=48,
        hidden_size=6144,
        attention_heads=48,
        kv_heads=1,
        head_dim=128,
        source="vendor model sheet",
    )
    sizing = size_inference(inference(architecture=custom, weight_dtype="fp8", kv_dtype="bf16"))
    assert custom.attention == "MQA"
    assert sizing.kv_bytes_per_token == 24_576
    assert sizing.weights_bytes == 30_000_000_000


def test_attention_kind():
    assert replace(LLAMA_8B, kv_heads=1).attention == "MQA"
    assert replace(LLAMA_8B, kv_heads=32).attention == "MHA"
    assert LLAMA_8B.attention == "GQA"


def test_kv_per_sequence_for_70b_at_32k_context_is_10_gib():
    # 327,680 B/token × 32,768 tokens = 10,737,418,240 B = 10 GiB.
    sizing = size_inference(DEMO_INPUTS)
    assert sizing.kv_bytes_per_sequence == 10 * GIB
    assert sizing.in_gib["kv_bytes_per_sequence"] == Decimal("10.00")


def test_demo_70b_needs_64_h200_cards():
    # One instance = 8 × 140.4 GiB = 1,123.2 GiB; reserve 15 % = 168.48 GiB;
    # minus 131.42 GiB weights leaves 823.3 GiB → ⌊823.3 ÷ 10⌋ = 82 sequences;
    # ⌈600 ÷ 82⌉ = 8 instances × 8 cards = 64 cards.
    sizing = size_inference(DEMO_INPUTS)
    assert sizing.instance_memory_bytes == 1_206_026_816_716  # ⌊1,123.2 × 2**30⌋
    assert sizing.reserve_bytes == 180_904_022_508  # ⌈× 0.15⌉
    assert sizing.in_gib["usable_kv_bytes"] == Decimal("823.30")
    assert sizing.sequences_per_instance == 82
    assert sizing.instances == 8
    assert sizing.total_cards == 64
    assert sizing.feasible
    assert sizing.weights_fit
    assert not sizing.fits_weights_only
    assert sizing.warnings == ()
    # Required: 8 × (131.417 + 168.48) GiB + 600 × 10 GiB = 8,399.17 GiB; KV is 6,000 (71 %):
    # the KV cache is the largest item, as docs/rules/sizing.md says.
    assert sizing.in_gib["required_memory_bytes"] == Decimal("8399.17")
    assert sizing.kv_share == Decimal("0.7144")


@pytest.mark.parametrize(
    ("card_memory_gib", "target", "instances"),
    [
        (Decimal(141), 600, 8),  # nominal "141": 958.8 − 131.42 = 827.4 GiB → still 82/instance
        (H200_GIB, 574, 7),  # 7 × 82 = 574 fits in 7 instances
        (H200_GIB, 575, 8),  # one more sequence needs an eighth
        (H200_GIB, 656, 8),  # 8 × 82
        (H200_GIB, 657, 9),
    ],
)
def test_demo_neighbourhood(card_memory_gib, target, instances):
    sizing = size_inference(inference(card_memory_gib=card_memory_gib, target_concurrency=target))
    assert sizing.instances == instances


@pytest.mark.parametrize(
    ("target", "instances"),
    [(1, 1), (53, 1), (54, 2), (106, 2), (107, 3)],
)
def test_instances_round_up(target, instances):
    # Llama 3.1 8B bf16 on one 80 GiB card: 80 × 0.85 = 68 GiB − 14.96 GiB weights
    # = 53.04 GiB; 8,192 tokens × 128 KiB = 1 GiB per sequence → 53 per instance.
    sizing = size_inference(
        inference(
            architecture=LLAMA_8B,
            context_tokens=8192,
            tensor_parallel=1,
            card_memory_gib=H100_GIB,
            target_concurrency=target,
        )
    )
    assert sizing.sequences_per_instance == 53
    assert sizing.instances == instances
    assert sizing.total_cards == instances


def test_fits_with_weights_only_is_a_failure():
    # 70B bf16 on 2 × 80 GiB at 128k context: 160 × 0.85 = 136 GiB − 131.42 GiB weights
    # = 4.58 GiB left, but one 131,072-token sequence needs 327,680 × 131,072 B = 40 GiB.
    sizing = size_inference(
        inference(context_tokens=131_072, tensor_parallel=2, card_memory_gib=H100_GIB)
    )
    assert sizing.weights_fit is True
    assert sizing.fits_weights_only is True
    assert sizing.feasible is False
    assert sizing.sequences_per_instance == 0
    assert (sizing.instances, sizing.total_cards) == (0, 0)
    assert sizing.in_gib["usable_kv_bytes"] == Decimal("4.58")
    assert sizing.warnings[0].startswith("Fits with weights only — a failure")
    assert "40.0 GiB of KV cache" in sizing.warnings[0]


def test_weights_that_do_not_fit_are_flagged_and_clamped():
    # 70B bf16 on one 80 GiB card: 68 GiB after reserve < 131.42 GiB weights, short 63.42.
    sizing = size_inference(inference(tensor_parallel=1, card_memory_gib=H100_GIB))
    assert sizing.weights_fit is False
    assert sizing.fits_weights_only is False
    assert sizing.feasible is False
    assert sizing.usable_kv_bytes == 0
    assert (sizing.sequences_per_instance, sizing.instances, sizing.total_cards) == (0, 0, 0)
    assert sizing.warnings[0].startswith("Weights do not fit: 131.4 GiB of bf16 weights")
    assert "by 63.4 GiB" in sizing.warnings[0]
    assert 0 < sizing.kv_share < 1  # still defined: counted with one instance


@pytest.mark.parametrize(
    ("overrides", "warning_part"),
    [
        ({"architecture": PRESETS["qwen2.5-7b"]}, "28 attention heads do not split evenly"),
        ({"tensor_parallel": 16}, "runtimes replicate KV heads"),
        ({"architecture": PRESETS["llama-2-7b"]}, "exceed the 4,096-token context Llama 2 7B"),
    ],
)
def test_advisory_warnings(overrides, warning_part):
    sizing = size_inference(inference(**overrides))
    assert any(warning_part in warning for warning in sizing.warnings)


@pytest.mark.parametrize("reserve", [Decimal("0.10"), Decimal("0.2"), 0.15, 0.1])
def test_reserve_inside_the_seed_band_is_accepted(reserve):
    assert size_inference(inference(reserve_fraction=reserve)).instances > 0


def test_float_and_decimal_reserve_give_the_same_bytes():
    as_float = size_inference(inference(reserve_fraction=0.15))
    as_decimal = size_inference(inference(reserve_fraction=Decimal("0.15")))
    assert as_float.reserve_bytes == as_decimal.reserve_bytes


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"reserve_fraction": Decimal("0.09")}, "reserve_fraction"),
        ({"reserve_fraction": 0.21}, "reserve_fraction"),
        ({"reserve_fraction": 15}, "reserve_fraction"),  # a percent, not a fraction
        ({"context_tokens": 0}, "context_tokens"),
        ({"context_tokens": -4096}, "context_tokens"),
        ({"target_concurrency": 0}, "target_concurrency"),
        ({"target_concurrency": True}, "target_concurrency"),
        ({"tensor_parallel": 0}, "tensor_parallel"),
        ({"card_memory_gib": 0}, "card_memory_gib"),
        ({"card_memory_gib": "80"}, "card_memory_gib"),
        ({"card_memory_gib": Decimal("NaN")}, "card_memory_gib"),
        ({"weight_dtype": "fp64"}, "weight_dtype"),
        ({"kv_dtype": "BF16"}, "kv_dtype"),
    ],
)
def test_invalid_inference_inputs_name_the_field(overrides, field):
    with pytest.raises(SizingInputError) as raised:
        inference(**overrides)
    assert raised.value.field == field
    assert str(raised.value).startswith(f"{field}: ")


def test_reserve_error_states_the_band():
    with pytest.raises(SizingInputError, match=r"between 10 % and 20 % .* got 25 %"):
        inference(reserve_fraction=Decimal("0.25"))


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"kv_heads": 3}, "kv_heads"),  # 32 heads do not split into 3 groups
        ({"kv_heads": 64}, "kv_heads"),  # more KV heads than query heads
        ({"kv_heads": 0}, "kv_heads"),
        ({"layers": 0}, "layers"),
        ({"parameters": -1}, "parameters"),
        ({"head_dim": 0}, "head_dim"),
        ({"is_moe": True}, "active_parameters"),
        ({"active_parameters": 9_000_000_000}, "active_parameters"),
    ],
)
def test_invalid_custom_architecture_names_the_field(overrides, field):
    with pytest.raises(SizingInputError) as raised:
        replace(LLAMA_8B, **overrides)
    assert raised.value.field == field


@pytest.mark.parametrize(
    ("card_count", "tensor_parallel", "instances"),
    [(16, 8, 2), (7, 8, 0), (10, 4, 2), (0, 1, 0), (3, 1, 3)],
)
def test_instances_from_cards(card_count, tensor_parallel, instances):
    assert instances_from_cards(card_count=card_count, tensor_parallel=tensor_parallel) == instances


@pytest.mark.parametrize(
    ("card_count", "tensor_parallel", "field"),
    [(-1, 8, "card_count"), (8, 0, "tensor_parallel"), (8.0, 8, "card_count")],
)
def test_instances_from_cards_rejects_bad_counts(card_count, tensor_parallel, field):
    with pytest.raises(SizingInputError) as raised:
        instances_from_cards(card_count=card_count, tensor_parallel=tensor_parallel)
    assert raised.value.field == field


# Llama 3.1 8B bf16, 8k context, 150 sequences, on 80 GiB cards: 53 per instance, 3 needed.
EIGHT_B_SIZING = size_inference(
    inference(
        architecture=LLAMA_8B,
        context_tokens=8192,
        target_concurrency=150,
        tensor_parallel=1,
        card_memory_gib=H100_GIB,
    )
)


def test_offer_short_of_the_target():
    capacity = offer_capacity(
        sizing=EIGHT_B_SIZING, tensor_parallel=1, card_count=2, card_memory_gib=H100_GIB
    )
    assert capacity.message == (
        "This offer gives 2 instances, you need 3 (short by 1); "
        "it serves 106 of 150 concurrent sequences."
    )
    assert (capacity.instances_offered, capacity.instances_needed) == (2, 3)
    assert (capacity.instance_surplus, capacity.sequence_surplus) == (-1, -44)
    assert capacity.meets_target is False


def test_offer_with_bigger_cards_is_resized_on_its_own_memory():
    # On 140.4 GiB cards: 119.34 GiB after reserve − 14.96 GiB weights → 104 sequences,
    # so 2 instances serve 150; 3 cards give 3 instances, one spare.
    capacity = offer_capacity(
        sizing=EIGHT_B_SIZING, tensor_parallel=1, card_count=3, card_memory_gib=H200_GIB
    )
    assert capacity.sequences_per_instance == 104
    assert (capacity.instances_offered, capacity.instances_needed) == (3, 2)
    assert capacity.meets_target is True
    assert capacity.message.startswith("This offer gives 3 instances, you need 2 (1 spare);")


def test_offer_with_leftover_cards_reports_them_idle():
    capacity = offer_capacity(
        sizing=EIGHT_B_SIZING, tensor_parallel=2, card_count=5, card_memory_gib=H100_GIB
    )
    assert (capacity.instances_offered, capacity.idle_cards) == (2, 1)
    assert "1 of its 5 cards sit idle at 2 cards per instance." in capacity.message


def test_offer_whose_cards_hold_only_the_weights():
    # The demo's 70B on 2 × 80 GiB at 128k context fits weights only (see above).
    sizing = size_inference(inference(context_tokens=131_072))
    capacity = offer_capacity(sizing=sizing, tensor_parallel=2, card_count=16, card_memory_gib=80)
    assert capacity.instances_offered == 8
    assert capacity.instances_needed == 0
    assert capacity.meets_target is False
    assert "serves nothing. Fits with weights only" in capacity.message


def test_offer_with_too_few_cards_for_one_instance():
    capacity = offer_capacity(
        sizing=size_inference(DEMO_INPUTS),
        tensor_parallel=8,
        card_count=4,
        card_memory_gib=H200_GIB,
    )
    assert capacity.instances_offered == 0
    assert capacity.message == "This offer has 4 cards, fewer than the 8 an instance needs."


def test_offer_with_bad_card_memory_names_the_field():
    with pytest.raises(SizingInputError) as raised:
        offer_capacity(sizing=EIGHT_B_SIZING, tensor_parallel=1, card_count=2, card_memory_gib=0)
    assert raised.value.field == "card_memory_gib"


def training(**overrides: object) -> TrainingInputs:
    base = TrainingInputs(
        architecture=LLAMA_8B,
        card_memory_gib=H100_GIB,
        micro_batch_sequences=1,
        sequence_tokens=8192,
    )
    return replace(base, **overrides)


def test_training_mixed_precision_adamw_is_16_bytes_per_parameter():
    # ZeRO paper: bf16 weights 2 + fp32 master 4 + fp32 m and v 8 + bf16 gradients 2.
    sizing = size_training(training())
    params = LLAMA_8B.parameters
    assert sizing.weights_bytes == 2 * params
    assert sizing.master_weights_bytes == 4 * params
    assert sizing.optimizer_states_bytes == 8 * params
    assert sizing.gradients_bytes == 2 * params
    assert sizing.model_states_bytes == 16 * params == 128_484_179_968  # 119.66 GiB
    # Activations: 34 B × 1 seq × 8,192 tokens × 4,096 hidden × 32 layers = 34 GiB.
    assert sizing.activations_bytes_per_card == 34 * GIB
    # Per card: 80 GiB − 12 GiB reserve − 34 GiB activations = 34 GiB for sharded states;
    # ⌈119.66 ÷ 34⌉ = 4 cards.
    assert sizing.usable_bytes_per_card == 34 * GIB
    assert sizing.cards == 4
    assert sizing.fits
    assert sizing.warnings == ()
    assert sizing.per_card_bytes <= 80 * GIB


def test_full_checkpointing_keeps_two_of_34_bytes():
    # 2 B × 8,192 × 4,096 × 32 = 2 GiB; 80 − 12 − 2 = 66 GiB → ⌈119.66 ÷ 66⌉ = 2 cards.
    sizing = size_training(training(activation_checkpoint_factor=FULL_CHECKPOINTING_FACTOR))
    assert sizing.activations_bytes_per_card == 2 * GIB
    assert sizing.cards == 2


@pytest.mark.parametrize(
    ("overrides", "bytes_per_parameter", "optimizer_multiple_of_weights"),
    [
        # The shorthand "Adam ≈ 2× weights" (docs/rules/sizing.md#training-memory): fp32 weights,
        # fp32 m and v, no extra master.
        ({"weight_dtype": "fp32", "gradient_dtype": "fp32"}, 16, 2),
        ({"optimizer_state_dtype": "bf16", "master_weights": False}, 8, 2),
        ({"optimizer": "sgd_momentum", "weight_dtype": "fp32", "gradient_dtype": "fp32"}, 12, 1),
        ({"optimizer": "adafactor"}, 8, 0),  # 2 + 4 master + 0 + 2
    ],
)
def test_training_optimizer_models(overrides, bytes_per_parameter, optimizer_multiple_of_weights):
    sizing = size_training(training(**overrides))
    params = LLAMA_8B.parameters
    assert sizing.model_states_bytes == bytes_per_parameter * params
    assert sizing.optimizer_states_bytes == optimizer_multiple_of_weights * sizing.weights_bytes


def test_training_70b_without_checkpointing_does_not_fit_a_card():
    # 34 B × 8,192 × 8,192 hidden × 80 layers = 170 GiB of activations > 119.34 GiB.
    sizing = size_training(training(architecture=LLAMA_70B, card_memory_gib=H200_GIB))
    assert sizing.activations_bytes_per_card == 170 * GIB
    assert (sizing.cards, sizing.fits) == (0, False)
    assert sizing.warnings[0].startswith("Activations of 170.0 GiB per card exceed")


def test_training_70b_with_checkpointing_spans_two_nodes():
    # 16 B × 70.55B = 1,051.3 GiB of states; per card 119.34 − 10 GiB activations
    # = 109.34 GiB → ⌈1,051.3 ÷ 109.34⌉ = 10 cards, more than one 8-card node.
    sizing = size_training(
        training(
            architecture=LLAMA_70B,
            card_memory_gib=H200_GIB,
            activation_checkpoint_factor=FULL_CHECKPOINTING_FACTOR,
        )
    )
    assert sizing.in_gib["model_states_bytes"] == Decimal("1051.33")
    assert sizing.cards == 10
    assert "RDMA-class network" in sizing.warnings[0]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"optimizer": "lion"}, "optimizer"),
        ({"activation_checkpoint_factor": 0}, "activation_checkpoint_factor"),
        ({"activation_checkpoint_factor": Decimal("1.5")}, "activation_checkpoint_factor"),
        ({"micro_batch_sequences": 0}, "micro_batch_sequences"),
        ({"sequence_tokens": 0}, "sequence_tokens"),
        ({"gradient_dtype": "fp64"}, "gradient_dtype"),
        ({"reserve_fraction": Decimal("0.3")}, "reserve_fraction"),
    ],
)
def test_invalid_training_inputs_name_the_field(overrides, field):
    with pytest.raises(SizingInputError) as raised:
        training(**overrides)
    assert raised.value.field == field


@pytest.mark.parametrize(
    ("key", "layers", "hidden", "heads", "kv_heads", "billions"),
    [
        ("llama-3.1-8b", 32, 4096, 32, 8, "8.03"),
        ("llama-3.1-70b", 80, 8192, 64, 8, "70.55"),
        ("llama-3.1-405b", 126, 16384, 128, 8, "405.85"),
        ("qwen2.5-7b", 28, 3584, 28, 4, "7.62"),
        ("qwen2.5-72b", 80, 8192, 64, 8, "72.71"),
        ("mixtral-8x7b", 32, 4096, 32, 8, "46.70"),
        ("llama-2-7b", 32, 4096, 32, 32, "6.74"),
        ("llama-2-13b", 40, 5120, 40, 40, "13.02"),
    ],
)
def test_presets_carry_the_published_shapes(key, layers, hidden, heads, kv_heads, billions):
    arch = PRESETS[key]
    assert (arch.layers, arch.hidden_size, arch.attention_heads, arch.kv_heads) == (
        layers,
        hidden,
        heads,
        kv_heads,
    )
    assert arch.head_dim * arch.attention_heads == arch.hidden_size
    assert f"{arch.parameters / 1e9:.2f}" == billions
    assert arch.source.startswith("https://huggingface.co/")
    assert arch.source.endswith("/config.json")


def test_mixtral_is_the_moe_preset():
    mixtral = PRESETS["mixtral-8x7b"]
    assert mixtral.is_moe
    assert f"{mixtral.active_parameters / 1e9:.1f}" == "12.9"
    assert [key for key, arch in PRESETS.items() if arch.is_moe] == ["mixtral-8x7b"]


def test_preset_choices_cover_every_preset():
    choices = preset_choices()
    assert [key for key, _ in choices] == list(PRESETS)
    assert ("llama-3.1-70b", "Llama 3.1 70B") in choices

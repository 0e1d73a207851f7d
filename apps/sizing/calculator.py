"""Sizing calculator: memory, cards and instances for inference and training.

Implements DESIGN §2.1 (seed 000 §1 step 1, seed 004 §1 step 1) as pure functions on
frozen dataclasses, stdlib only, so the browser, the API, the packet and the benchmarks
all get the same numbers. Byte counts are exact ints; card memory is in GiB (2**30
bytes) as NVML reports it: an H200 sold as "141 GB" shows 143,771 MiB = 140.4 GiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from fractions import Fraction

GIB = 2**30
Number = Decimal | Fraction | int | float

# DESIGN §2.1 and seed 004 §1: bytes per parameter and per KV-cache element.
DTYPE_BYTES: dict[str, Decimal] = {
    "fp32": Decimal(4),
    "fp16": Decimal(2),
    "bf16": Decimal(2),
    "fp8": Decimal(1),
    "int8": Decimal(1),
    "int4": Decimal("0.5"),
}

# Seed 004 §1: reserve 10–20 % for runtime and communication buffers; too little starves
# batching, too much wastes budget, so values outside the band are refused, not clamped.
RESERVE_MIN = Decimal("0.10")
RESERVE_MAX = Decimal("0.20")
DEFAULT_RESERVE = Decimal("0.15")

# A typical HGX node; beyond it training needs an RDMA-class network (seed 000 §1).
CARDS_PER_NODE = 8


class SizingInputError(ValueError):
    """An input the calculator cannot use; `field` names it so a form can point at it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _exact(value: object, field: str) -> Fraction:
    # Floats go through repr so 0.15 means 3/20, not its binary neighbour.
    if isinstance(value, bool) or not isinstance(value, Decimal | Fraction | int | float):
        raise SizingInputError(field, f"must be a number, got {value!r}")
    try:
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, OverflowError, InvalidOperation) as error:
        raise SizingInputError(field, f"must be a finite number, got {value!r}") from error


def _positive_int(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SizingInputError(field, f"must be a whole number above zero, got {value!r}")
    return value


def _positive(value: object, field: str) -> Fraction:
    if (exact := _exact(value, field)) <= 0:
        raise SizingInputError(field, f"must be above zero, got {value!r}")
    return exact


def _dtype_bytes(name: object, field: str) -> Fraction:
    if name not in DTYPE_BYTES:
        raise SizingInputError(field, f"unknown dtype {name!r}; use one of {sorted(DTYPE_BYTES)}")
    return Fraction(DTYPE_BYTES[name])


def _reserve(value: object) -> Fraction:
    if not RESERVE_MIN <= (exact := _exact(value, "reserve_fraction")) <= RESERVE_MAX:
        raise SizingInputError(
            "reserve_fraction",
            f"must be between {_percent(RESERVE_MIN)} and {_percent(RESERVE_MAX)} (seed 004 §1), "
            f"got {_percent(exact)}",
        )
    return exact


def gib(value_bytes: int) -> Decimal:
    """Bytes as GiB, two decimals, for display."""
    return (Decimal(value_bytes) / GIB).quantize(Decimal("0.01"))


def _byte_fields_in_gib(result: object) -> dict[str, Decimal]:
    return {f.name: gib(getattr(result, f.name)) for f in fields(result) if "_bytes" in f.name}


def _percent(value: Fraction | Decimal) -> str:
    return f"{float(value) * 100:g} %"


def _gib_text(value_bytes: int) -> str:
    return f"{Decimal(value_bytes) / GIB:,.1f} GiB"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


@dataclass(frozen=True)
class ModelArchitecture:
    """A transformer's published shape (its config.json), enough to size memory.

    `parameters` counts every expert of a mixture-of-experts model: all of them stay
    resident in memory even though only `active_parameters` run per token.
    """

    key: str
    name: str
    parameters: int
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    source: str
    is_moe: bool = False
    active_parameters: int | None = None
    max_context_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("parameters", "layers", "hidden_size", "attention_heads", "head_dim"):
            _positive_int(getattr(self, name), name)
        kv_heads = _positive_int(self.kv_heads, "kv_heads")
        if kv_heads > self.attention_heads or self.attention_heads % kv_heads:
            raise SizingInputError(
                "kv_heads",
                f"{kv_heads} KV heads must divide the {self.attention_heads} attention heads",
            )
        if self.active_parameters is not None:
            _positive_int(self.active_parameters, "active_parameters")
            if self.active_parameters > self.parameters:
                raise SizingInputError("active_parameters", "cannot exceed total parameters")
        elif self.is_moe:
            raise SizingInputError("active_parameters", "a mixture-of-experts model needs it")
        if self.max_context_tokens is not None:
            _positive_int(self.max_context_tokens, "max_context_tokens")

    @property
    def attention(self) -> str:
        """MHA when every query head has its own KV head, MQA with one, GQA between."""
        if self.kv_heads == self.attention_heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"


def kv_bytes_per_token(architecture: ModelArchitecture, kv_dtype: str) -> int:
    """2 (K and V) × layers × kv_heads × head_dim × bytes per element.

    With kv_heads = attention heads this is the seeds' 2 × layers × hidden × bytes;
    GQA shrinks it by kv_heads / attention_heads (seed 004 §1 item 6).
    """
    per_element = _dtype_bytes(kv_dtype, "kv_dtype")
    a = architecture
    return math.ceil(2 * a.layers * a.kv_heads * a.head_dim * per_element)


@dataclass(frozen=True)
class InferenceInputs:
    """What a reviewer enters to size an inference deployment (DESIGN §2.1)."""

    architecture: ModelArchitecture
    weight_dtype: str
    kv_dtype: str
    context_tokens: int
    target_concurrency: int
    tensor_parallel: int  # cards per instance
    card_memory_gib: Number
    reserve_fraction: Number = DEFAULT_RESERVE

    def __post_init__(self) -> None:
        _dtype_bytes(self.weight_dtype, "weight_dtype")
        _dtype_bytes(self.kv_dtype, "kv_dtype")
        for name in ("context_tokens", "target_concurrency", "tensor_parallel"):
            _positive_int(getattr(self, name), name)
        _positive(self.card_memory_gib, "card_memory_gib")
        _reserve(self.reserve_fraction)


@dataclass(frozen=True)
class InferenceSizing:
    """The requirement for one inference deployment; every byte figure is exact.

    `instances` and `total_cards` are 0 when `feasible` is False (weights do not fit, or
    fit with no room for one full-context sequence): no number of such instances serves
    the target, and the warnings say why.
    """

    inputs: InferenceInputs
    weights_bytes: int
    kv_bytes_per_token: int
    kv_bytes_per_sequence: int
    instance_memory_bytes: int
    reserve_bytes: int  # per instance
    usable_kv_bytes: int  # per instance, clamped at 0 when the weights do not fit
    sequences_per_instance: int
    instances: int
    total_cards: int
    required_memory_bytes: int
    kv_share: Decimal
    weights_fit: bool
    fits_weights_only: bool
    feasible: bool
    warnings: tuple[str, ...]

    @property
    def in_gib(self) -> dict[str, Decimal]:
        """Every byte field in GiB: `sizing.in_gib["weights_bytes"]`, in templates with dots."""
        return _byte_fields_in_gib(self)


def size_inference(inputs: InferenceInputs) -> InferenceSizing:
    """Size an inference deployment by DESIGN §2.1.

    usable per instance = card memory × cards × (1 − reserve) − weights;
    sequences per instance = ⌊usable ÷ (KV per token × context)⌋;
    instances = ⌈target concurrency ÷ sequences per instance⌉.
    Required memory = instances × (weights + reserve) + target × KV per sequence (weights
    are replicated in every instance); counted with one instance when none is feasible.
    """
    arch = inputs.architecture
    reserve_fraction = _reserve(inputs.reserve_fraction)
    weights = math.ceil(arch.parameters * _dtype_bytes(inputs.weight_dtype, "weight_dtype"))
    per_token = kv_bytes_per_token(arch, inputs.kv_dtype)
    per_sequence = per_token * inputs.context_tokens
    card_bytes = _positive(inputs.card_memory_gib, "card_memory_gib") * GIB
    instance_memory = math.floor(card_bytes * inputs.tensor_parallel)
    reserve = math.ceil(instance_memory * reserve_fraction)
    headroom = instance_memory - reserve - weights
    usable = max(headroom, 0)
    sequences = usable // per_sequence
    weights_fit, feasible = headroom >= 0, sequences > 0
    instances = -(-inputs.target_concurrency // sequences) if feasible else 0
    kv_total = inputs.target_concurrency * per_sequence
    required = max(instances, 1) * (weights + reserve) + kv_total
    return InferenceSizing(
        inputs=inputs,
        weights_bytes=weights,
        kv_bytes_per_token=per_token,
        kv_bytes_per_sequence=per_sequence,
        instance_memory_bytes=instance_memory,
        reserve_bytes=reserve,
        usable_kv_bytes=usable,
        sequences_per_instance=sequences,
        instances=instances,
        total_cards=instances * inputs.tensor_parallel,
        required_memory_bytes=required,
        kv_share=(Decimal(kv_total) / Decimal(required)).quantize(Decimal("0.0001")),
        weights_fit=weights_fit,
        fits_weights_only=weights_fit and not feasible,
        feasible=feasible,
        warnings=_inference_warnings(inputs, weights, headroom, per_sequence),
    )


def _inference_warnings(
    inputs: InferenceInputs, weights: int, headroom: int, per_sequence: int
) -> tuple[str, ...]:
    arch, tp = inputs.architecture, inputs.tensor_parallel
    cards = f"{_plural(tp, 'card')} of {float(inputs.card_memory_gib):g} GiB"
    reserve = _percent(_reserve(inputs.reserve_fraction))
    warnings = []
    if headroom < 0:
        warnings.append(
            f"Weights do not fit: {_gib_text(weights)} of {inputs.weight_dtype} weights exceed "
            f"{cards} less the {reserve} reserve by {_gib_text(-headroom)}. "
            "Use more cards per instance or a narrower weight dtype."
        )
    elif headroom < per_sequence:
        warnings.append(
            f"Fits with weights only — a failure, not a fit: after {_gib_text(weights)} of "
            f"weights and the {reserve} reserve, {cards} leave {_gib_text(headroom)}, less "
            f"than the {_gib_text(per_sequence)} of KV cache one {inputs.context_tokens:,}-token "
            "sequence needs. The KV cache is the largest item (seeds 000 §1, 004 §1)."
        )
    warnings.extend(_context_warning(arch, inputs.context_tokens))
    if arch.attention_heads % tp:
        warnings.append(
            f"{arch.attention_heads} attention heads do not split evenly over {tp} cards; "
            "common runtimes refuse this tensor-parallel degree."
        )
    elif tp > arch.kv_heads:
        warnings.append(
            f"{tp} cards per instance exceed the {arch.kv_heads} KV heads: runtimes replicate "
            "KV heads, so the real KV cache per card is larger than computed here."
        )
    return tuple(warnings)


def instances_from_cards(*, card_count: int, tensor_parallel: int) -> int:
    """Whole instances an offer's cards make; leftover cards serve no instance."""
    if isinstance(card_count, bool) or not isinstance(card_count, int) or card_count < 0:
        raise SizingInputError("card_count", f"must be a whole number ≥ 0, got {card_count!r}")
    return card_count // _positive_int(tensor_parallel, "tensor_parallel")


@dataclass(frozen=True)
class OfferCapacity:
    """How far one offer's cards go against a sizing, on the offer's own card memory."""

    instances_offered: int
    instances_needed: int  # 0 when no instance of this offer can serve one sequence
    sequences_per_instance: int
    sequences_offered: int
    instance_surplus: int  # negative is a shortfall
    sequence_surplus: int  # negative is a shortfall
    idle_cards: int
    meets_target: bool
    message: str


def offer_capacity(
    *, sizing: InferenceSizing, tensor_parallel: int, card_count: int, card_memory_gib: Number
) -> OfferCapacity:
    """Re-size on the offer's cards (their memory may differ) and compare with the target."""
    offered = instances_from_cards(card_count=card_count, tensor_parallel=tensor_parallel)
    resized = size_inference(
        replace(sizing.inputs, tensor_parallel=tensor_parallel, card_memory_gib=card_memory_gib)
    )
    target = sizing.inputs.target_concurrency
    sequences_offered = offered * resized.sequences_per_instance
    idle = card_count - offered * tensor_parallel
    return OfferCapacity(
        instances_offered=offered,
        instances_needed=resized.instances,
        sequences_per_instance=resized.sequences_per_instance,
        sequences_offered=sequences_offered,
        instance_surplus=offered - resized.instances,
        sequence_surplus=sequences_offered - target,
        idle_cards=idle,
        meets_target=resized.feasible and sequences_offered >= target,
        message=_offer_message(resized, offered, card_count, idle),
    )


def _offer_message(resized: InferenceSizing, offered: int, card_count: int, idle: int) -> str:
    tp = resized.inputs.tensor_parallel
    if not resized.feasible:
        text = f"On this offer's cards an instance of {_plural(tp, 'card')} serves nothing. "
        return text + resized.warnings[0]
    if offered == 0:
        return (
            f"This offer has {_plural(card_count, 'card')}, fewer than the {tp} an instance needs."
        )
    needed, target = resized.instances, resized.inputs.target_concurrency
    text = f"This offer gives {_plural(offered, 'instance')}, you need {needed:,}"
    if offered < needed:
        text += f" (short by {needed - offered:,})"
    elif offered > needed:
        text += f" ({offered - needed:,} spare)"
    served = min(offered * resized.sequences_per_instance, target)
    text += f"; it serves {served:,} of {target:,} concurrent sequences."
    if idle:
        text += f" {idle:,} of its {card_count:,} cards sit idle at {tp} cards per instance."
    return text


class Optimizer(StrEnum):
    """Optimizer state kept per parameter, in `optimizer_state_dtype`."""

    ADAMW = "adamw"  # two moments, m and v
    SGD_MOMENTUM = "sgd_momentum"  # one momentum buffer
    # Factored second moment is rows + cols per matrix, at most 2 ÷ hidden of the parameters
    # (0.05 % at hidden 4096): counted as zero, with no first moment (the paper's default).
    ADAFACTOR = "adafactor"


_STATES_PER_PARAMETER = {Optimizer.ADAMW: 2, Optimizer.SGD_MOMENTUM: 1, Optimizer.ADAFACTOR: 0}

# Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
# Models" §4.1: a layer stores s·b·h·(34 + 5·a·s/h) bytes at 16-bit. FlashAttention-style
# kernels never materialise the 5·a·s/h score term, leaving 34 bytes = 17 elements per
# token per hidden unit per layer, linear in batch × sequence as DESIGN §2.1 asks. The
# paper's block has a 4h GELU MLP; SwiGLU MLPs (Llama, Qwen) keep more, so this is a floor.
ACTIVATION_ELEMENTS_PER_TOKEN_HIDDEN_LAYER = 17
# Full recomputation keeps only each layer's 16-bit input, 2·s·b·h bytes: 2/34 of the above.
FULL_CHECKPOINTING_FACTOR = Fraction(2, 34)


@dataclass(frozen=True)
class TrainingInputs:
    """Training or fine-tuning inputs (DESIGN §2.1, seed 000 §1 training side).

    Defaults are mixed-precision AdamW, 16 bytes per parameter as in the ZeRO paper
    (Rajbhandari et al. 2020): bf16 weights 2 + fp32 master 4 + two fp32 moments 8 +
    bf16 gradients 2. The design's "optimizer ≈ 2× weights" is AdamW with
    `optimizer_state_dtype` equal to `weight_dtype` (e.g. fp32 and fp32).
    `micro_batch_sequences` is per card, as each data-parallel rank runs its own.
    """

    architecture: ModelArchitecture
    card_memory_gib: Number
    micro_batch_sequences: int
    sequence_tokens: int
    weight_dtype: str = "bf16"
    gradient_dtype: str = "bf16"
    optimizer: Optimizer | str = Optimizer.ADAMW
    optimizer_state_dtype: str = "fp32"
    master_weights: bool = True  # fp32 copy, counted only when weights are narrower
    activation_dtype: str = "bf16"
    activation_checkpoint_factor: Number = 1  # 1 = none, FULL_CHECKPOINTING_FACTOR = full
    reserve_fraction: Number = DEFAULT_RESERVE

    def __post_init__(self) -> None:
        _positive(self.card_memory_gib, "card_memory_gib")
        _positive_int(self.micro_batch_sequences, "micro_batch_sequences")
        _positive_int(self.sequence_tokens, "sequence_tokens")
        for name in ("weight_dtype", "gradient_dtype", "optimizer_state_dtype", "activation_dtype"):
            _dtype_bytes(getattr(self, name), name)
        try:
            object.__setattr__(self, "optimizer", Optimizer(self.optimizer))
        except ValueError as error:
            choices = [o.value for o in Optimizer]
            raise SizingInputError("optimizer", f"use one of {choices}") from error
        if not 0 < _exact(self.activation_checkpoint_factor, "activation_checkpoint_factor") <= 1:
            raise SizingInputError("activation_checkpoint_factor", "must be above 0 and at most 1")
        _reserve(self.reserve_fraction)


@dataclass(frozen=True)
class TrainingSizing:
    """Memory for one model replica, fully sharded (ZeRO-3 / FSDP) over `cards`.

    Weights, master weights, gradients and optimizer states split evenly over the cards;
    each card also holds its own micro-batch's activations and the runtime reserve. The
    reserve is where gather buffers for the layer in flight must fit. `cards` is 0 and
    `fits` False when activations and reserve alone fill a card.
    """

    inputs: TrainingInputs
    weights_bytes: int
    master_weights_bytes: int
    gradients_bytes: int
    optimizer_states_bytes: int
    model_states_bytes: int
    activations_bytes_per_card: int
    card_memory_bytes: int
    reserve_bytes_per_card: int
    usable_bytes_per_card: int  # for sharded model states
    cards: int
    per_card_bytes: int
    total_bytes: int
    fits: bool
    warnings: tuple[str, ...]

    @property
    def in_gib(self) -> dict[str, Decimal]:
        """Every byte field in GiB: `sizing.in_gib["per_card_bytes"]`."""
        return _byte_fields_in_gib(self)


def size_training(inputs: TrainingInputs) -> TrainingSizing:
    """Size one training replica: model states sharded over the fewest cards that hold them."""
    arch, params = inputs.architecture, inputs.architecture.parameters
    weight_bytes = _dtype_bytes(inputs.weight_dtype, "weight_dtype")
    weights = math.ceil(params * weight_bytes)
    master = 4 * params if inputs.master_weights and weight_bytes < 4 else 0
    gradients = math.ceil(params * _dtype_bytes(inputs.gradient_dtype, "gradient_dtype"))
    state_bytes = _dtype_bytes(inputs.optimizer_state_dtype, "optimizer_state_dtype")
    optimizer = math.ceil(params * _STATES_PER_PARAMETER[Optimizer(inputs.optimizer)] * state_bytes)
    states = weights + master + gradients + optimizer
    tokens = inputs.micro_batch_sequences * inputs.sequence_tokens
    per_token_layer = ACTIVATION_ELEMENTS_PER_TOKEN_HIDDEN_LAYER * arch.hidden_size * arch.layers
    element_bytes = _dtype_bytes(inputs.activation_dtype, "activation_dtype")
    factor = _exact(inputs.activation_checkpoint_factor, "activation_checkpoint_factor")
    activations = math.ceil(tokens * per_token_layer * element_bytes * factor)
    card = math.floor(_positive(inputs.card_memory_gib, "card_memory_gib") * GIB)
    reserve = math.ceil(card * _reserve(inputs.reserve_fraction))
    usable = max(card - reserve - activations, 0)
    cards = -(-states // usable) if usable else 0
    per_card = -(-states // max(cards, 1)) + activations + reserve
    return TrainingSizing(
        inputs=inputs,
        weights_bytes=weights,
        master_weights_bytes=master,
        gradients_bytes=gradients,
        optimizer_states_bytes=optimizer,
        model_states_bytes=states,
        activations_bytes_per_card=activations,
        card_memory_bytes=card,
        reserve_bytes_per_card=reserve,
        usable_bytes_per_card=usable,
        cards=cards,
        per_card_bytes=per_card,
        total_bytes=states + max(cards, 1) * (activations + reserve),
        fits=cards > 0,
        warnings=_training_warnings(inputs, cards, activations, card - reserve),
    )


def _training_warnings(
    inputs: TrainingInputs, cards: int, activations: int, after_reserve: int
) -> tuple[str, ...]:
    warnings = []
    if cards == 0:
        warnings.append(
            f"Activations of {_gib_text(activations)} per card exceed the "
            f"{_gib_text(after_reserve)} a card has after its reserve: lower the micro-batch "
            "or sequence length, or use gradient checkpointing."
        )
    elif cards > CARDS_PER_NODE:
        warnings.append(
            f"One replica needs {cards:,} cards, more than one {CARDS_PER_NODE}-card node: "
            "the nodes need an RDMA-class network, or adding cards adds little (seed 000 §1)."
        )
    warnings.extend(_context_warning(inputs.architecture, inputs.sequence_tokens))
    return tuple(warnings)


def _context_warning(arch: ModelArchitecture, tokens: int) -> list[str]:
    if arch.max_context_tokens is None or tokens <= arch.max_context_tokens:
        return []
    limit = arch.max_context_tokens
    return [f"{tokens:,} tokens exceed the {limit:,}-token context {arch.name} is published with."]

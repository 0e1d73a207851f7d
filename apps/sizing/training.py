"""Training and fine-tuning memory (docs/rules/sizing.md#training-memory).

Split from ``calculator`` so each module stays readable; it shares that
module's exact arithmetic helpers and input validation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction

from django.utils.translation import gettext as _

from apps.sizing.calculator import (
    CARDS_PER_NODE,
    DEFAULT_RESERVE,
    GIB,
    ModelArchitecture,
    Number,
    SizingInputError,
    _byte_fields_in_gib,
    _context_warning,
    _dtype_bytes,
    _exact,
    _gib_text,
    _positive,
    _positive_int,
    _reserve,
)


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
# token per hidden unit per layer, linear in batch × sequence as
# docs/rules/sizing.md#training-memory asks. The
# paper's block has a 4h GELU MLP; SwiGLU MLPs (Llama, Qwen) keep more, so this is a floor.
ACTIVATION_ELEMENTS_PER_TOKEN_HIDDEN_LAYER = 17
# Full recomputation keeps only each layer's 16-bit input, 2·s·b·h bytes: 2/34 of the above.
FULL_CHECKPOINTING_FACTOR = Fraction(2, 34)


@dataclass(frozen=True)
class TrainingInputs:
    """Training or fine-tuning inputs (docs/rules/sizing.md#training-memory).

    Defaults are mixed-precision AdamW, 16 bytes per parameter as in the ZeRO paper
    (Rajbhandari et al. 2020): bf16 weights 2 + fp32 master 4 + two fp32 moments 8 +
    bf16 gradients 2. The common shorthand "optimizer ≈ 2× weights" is AdamW with
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
            raise SizingInputError(
                "optimizer", _("use one of %(choices)s") % {"choices": choices}
            ) from error
        if not 0 < _exact(self.activation_checkpoint_factor, "activation_checkpoint_factor") <= 1:
            raise SizingInputError(
                "activation_checkpoint_factor", _("must be above 0 and at most 1")
            )
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
            _(
                "Activations of %(activations)s per card exceed the %(available)s a card has "
                "after its reserve: lower the micro-batch or sequence length, or use gradient "
                "checkpointing."
            )
            % {"activations": _gib_text(activations), "available": _gib_text(after_reserve)}
        )
    elif cards > CARDS_PER_NODE:
        warnings.append(
            _(
                "One replica needs %(cards)s cards, more than one %(node)s-card node: the nodes "
                "need an RDMA-class network, or adding cards adds little."
            )
            % {"cards": f"{cards:,}", "node": CARDS_PER_NODE}
        )
    warnings.extend(_context_warning(inputs.architecture, inputs.sequence_tokens))
    return tuple(warnings)

"""Sizing calculator: memory, cards and instances for inference and training.

Implements docs/rules/sizing.md#inference-memory as pure functions on
frozen dataclasses, stdlib only, so the browser, the API, the packet and the benchmarks
all get the same numbers. Byte counts are exact ints; card memory is in GiB (2**30
bytes) as NVML reports it: an H200 sold as "141 GB" shows 143,771 MiB = 140.4 GiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import TYPE_CHECKING

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.core import formats

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

GIB = 2**30
Number = Decimal | Fraction | int | float

# docs/rules/sizing.md#inference-memory: bytes per parameter and per KV-cache element.
DTYPE_BYTES: dict[str, Decimal] = {
    "fp32": Decimal(4),
    "fp16": Decimal(2),
    "bf16": Decimal(2),
    "fp8": Decimal(1),
    "int8": Decimal(1),
    "int4": Decimal("0.5"),
}

# docs/rules/sizing.md#inference-memory: reserve 10–20 % for runtime and communication buffers; too
# little starves batching, too much wastes budget, so values outside the band are refused, not
# clamped.
RESERVE_MIN = Decimal("0.10")
RESERVE_MAX = Decimal("0.20")
DEFAULT_RESERVE = Decimal("0.15")

# A typical HGX node; beyond it training needs an RDMA-class network
# (docs/rules/sizing.md#demand-fit).
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
        raise SizingInputError(field, _("must be a number, got %(value)s") % {"value": repr(value)})
    try:
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, OverflowError, InvalidOperation) as error:
        raise SizingInputError(
            field, _("must be a finite number, got %(value)s") % {"value": repr(value)}
        ) from error


def _positive_int(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SizingInputError(
            field, _("must be a whole number above zero, got %(value)s") % {"value": repr(value)}
        )
    return value


def _positive(value: object, field: str) -> Fraction:
    if (exact := _exact(value, field)) <= 0:
        raise SizingInputError(
            field, _("must be above zero, got %(value)s") % {"value": repr(value)}
        )
    return exact


def _dtype_bytes(name: object, field: str) -> Fraction:
    if name not in DTYPE_BYTES:
        raise SizingInputError(
            field,
            _("unknown dtype %(name)s; use one of %(choices)s")
            % {"name": repr(name), "choices": sorted(DTYPE_BYTES)},
        )
    return Fraction(DTYPE_BYTES[name])


def _reserve(value: object) -> Fraction:
    if not RESERVE_MIN <= (exact := _exact(value, "reserve_fraction")) <= RESERVE_MAX:
        raise SizingInputError(
            "reserve_fraction",
            _(
                "must be between %(low)s and %(high)s (headroom for activations and "
                "fragmentation), got %(value)s"
            )
            % {
                "low": _percent(RESERVE_MIN),
                "high": _percent(RESERVE_MAX),
                "value": _percent(exact),
            },
        )
    return exact


def gib(value_bytes: int) -> Decimal:
    """Bytes as GiB, two decimals, for display."""
    return (Decimal(value_bytes) / GIB).quantize(Decimal("0.01"))


def _byte_fields_in_gib(result: DataclassInstance) -> dict[str, Decimal]:
    return {f.name: gib(getattr(result, f.name)) for f in fields(result) if "_bytes" in f.name}


def _percent(value: Fraction | Decimal) -> str:
    return formats.percent(value, -4)


def _gib_text(value_bytes: int) -> str:
    return f"{Decimal(value_bytes) / GIB:,.1f} GiB"


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
                _("%(kv)s KV heads must divide the %(heads)s attention heads")
                % {"kv": kv_heads, "heads": self.attention_heads},
            )
        if self.active_parameters is not None:
            _positive_int(self.active_parameters, "active_parameters")
            if self.active_parameters > self.parameters:
                raise SizingInputError("active_parameters", _("cannot exceed total parameters"))
        elif self.is_moe:
            raise SizingInputError("active_parameters", _("a mixture-of-experts model needs it"))
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

    With kv_heads = attention heads this is the textbook 2 × layers × hidden × bytes;
    GQA shrinks it by kv_heads / attention_heads (docs/rules/sizing.md#inference-memory).
    """
    per_element = _dtype_bytes(kv_dtype, "kv_dtype")
    a = architecture
    return math.ceil(2 * a.layers * a.kv_heads * a.head_dim * per_element)


@dataclass(frozen=True)
class InferenceInputs:
    """What a reviewer enters to size an inference deployment (docs/rules/sizing.md)."""

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
    """Size an inference deployment by docs/rules/sizing.md#inference-memory.

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
    cards = ngettext("%(n)s card of %(gib)s GiB", "%(n)s cards of %(gib)s GiB", tp) % {
        "n": f"{tp:,}",
        "gib": f"{float(inputs.card_memory_gib):g}",
    }
    reserve = _percent(_reserve(inputs.reserve_fraction))
    warnings = []
    if headroom < 0:
        warnings.append(
            _(
                "Weights do not fit: %(weights)s of %(dtype)s weights exceed %(cards)s less the "
                "%(reserve)s reserve by %(over)s. Use more cards per instance or a narrower "
                "weight dtype."
            )
            % {
                "weights": _gib_text(weights),
                "dtype": inputs.weight_dtype,
                "cards": cards,
                "reserve": reserve,
                "over": _gib_text(-headroom),
            }
        )
    elif headroom < per_sequence:
        warnings.append(
            _(
                "Fits with weights only — a failure, not a fit: after %(weights)s of weights and "
                "the %(reserve)s reserve, %(cards)s leave %(headroom)s, less than the "
                "%(per_sequence)s of KV cache one %(tokens)s-token sequence needs. The KV cache "
                "is the largest item."
            )
            % {
                "weights": _gib_text(weights),
                "reserve": reserve,
                "cards": cards,
                "headroom": _gib_text(headroom),
                "per_sequence": _gib_text(per_sequence),
                "tokens": f"{inputs.context_tokens:,}",
            }
        )
    warnings.extend(_context_warning(arch, inputs.context_tokens))
    if arch.attention_heads % tp:
        warnings.append(
            _(
                "%(heads)s attention heads do not split evenly over %(tp)s cards; common "
                "runtimes refuse this tensor-parallel degree."
            )
            % {"heads": arch.attention_heads, "tp": tp}
        )
    elif tp > arch.kv_heads:
        warnings.append(
            _(
                "%(tp)s cards per instance exceed the %(kv)s KV heads: runtimes replicate KV "
                "heads, so the real KV cache per card is larger than computed here."
            )
            % {"tp": tp, "kv": arch.kv_heads}
        )
    return tuple(warnings)


def instances_from_cards(*, card_count: int, tensor_parallel: int) -> int:
    """Whole instances an offer's cards make; leftover cards serve no instance."""
    if isinstance(card_count, bool) or not isinstance(card_count, int) or card_count < 0:
        raise SizingInputError(
            "card_count",
            _("must be a whole number ≥ 0, got %(value)s") % {"value": repr(card_count)},
        )
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
        text = ngettext(
            "On this offer's cards an instance of %(n)s card serves nothing.",
            "On this offer's cards an instance of %(n)s cards serves nothing.",
            tp,
        ) % {"n": f"{tp:,}"}
        return text + " " + resized.warnings[0]
    if offered == 0:
        return ngettext(
            "This offer has %(n)s card, fewer than the %(tp)s an instance needs.",
            "This offer has %(n)s cards, fewer than the %(tp)s an instance needs.",
            card_count,
        ) % {"n": f"{card_count:,}", "tp": tp}
    needed, target = resized.instances, resized.inputs.target_concurrency
    text = ngettext(
        "This offer gives %(n)s instance, you need %(needed)s",
        "This offer gives %(n)s instances, you need %(needed)s",
        offered,
    ) % {"n": f"{offered:,}", "needed": f"{needed:,}"}
    if offered < needed:
        text += " " + _("(short by %(n)s)") % {"n": f"{needed - offered:,}"}
    elif offered > needed:
        text += " " + _("(%(n)s spare)") % {"n": f"{offered - needed:,}"}
    served = min(offered * resized.sequences_per_instance, target)
    text += _("; it serves %(served)s of %(target)s concurrent sequences.") % {
        "served": f"{served:,}",
        "target": f"{target:,}",
    }
    if idle:
        text += " " + _(
            "%(idle)s of its %(cards)s cards sit idle at %(tp)s cards per instance."
        ) % {"idle": f"{idle:,}", "cards": f"{card_count:,}", "tp": tp}
    return text


def _context_warning(arch: ModelArchitecture, tokens: int) -> list[str]:
    if arch.max_context_tokens is None or tokens <= arch.max_context_tokens:
        return []
    limit = arch.max_context_tokens
    return [
        _("%(tokens)s tokens exceed the %(limit)s-token context %(model)s is published with.")
        % {"tokens": f"{tokens:,}", "limit": f"{limit:,}", "model": arch.name}
    ]

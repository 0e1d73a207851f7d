"""Turn saved or submitted sizing fields into calculator inputs and results.

One translation layer, shared by the page, the API and the case overview, so
all three compute the same numbers from the same fields.
"""

from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from apps.sizing.calculator import (
    InferenceInputs,
    ModelArchitecture,
    SizingInputError,
    size_inference,
)
from apps.sizing.presets import PRESETS
from apps.sizing.training import FULL_CHECKPOINTING_FACTOR, TrainingInputs, size_training

ARCH_FIELDS = ("parameters", "layers", "hidden_size", "attention_heads", "kv_heads", "head_dim")

# The largest value each whole-number input takes, on the page and in the API. Far past
# any real deployment (published models reach ~2e12 parameters and 1e6-token contexts),
# within PostgreSQL's integer columns (2,147,483,647; parameters is a bigint), and small
# enough that every byte figure, at most ~1e32 here, still shows in GiB within Decimal's
# 28 digits (10^30 layers made the page and the API fail).
INPUT_MAX = {
    "parameters": 10**15,
    "layers": 10_000,
    "hidden_size": 1_000_000,
    "attention_heads": 100_000,
    "kv_heads": 100_000,
    "head_dim": 100_000,
    "context_tokens": 1_000_000_000,
    "target_concurrency": 100_000_000,
    "tensor_parallel": 100_000,
    "micro_batch_sequences": 1_000_000,
    "sequence_tokens": 1_000_000_000,
    "data_parallel_replicas": 100_000,
    "checkpoints_kept": 1_000,
}
# A century of hours: far past any contract, and within the column's ten digits.
HOURS_MAX = 876_000


def architecture_from(fields: dict[str, Any]) -> ModelArchitecture:
    preset = fields.get("model_preset") or ""
    if preset:
        if preset not in PRESETS:
            raise SizingInputError(
                "model_preset", _("unknown preset %(preset)s") % {"preset": repr(preset)}
            )
        return PRESETS[preset]
    missing = [name for name in ARCH_FIELDS if not fields.get(name)]
    if missing:
        raise SizingInputError(missing[0], _("required for a custom model (or choose a preset)"))
    return ModelArchitecture(
        key="custom",
        name=fields.get("model_name") or "Custom model",
        source="entered by the user",
        parameters=int(fields["parameters"]),
        layers=int(fields["layers"]),
        hidden_size=int(fields["hidden_size"]),
        attention_heads=int(fields["attention_heads"]),
        kv_heads=int(fields["kv_heads"]),
        head_dim=int(fields["head_dim"]),
    )


def _reserve(fields: dict[str, Any]) -> Decimal:
    return Decimal(fields.get("reserve_pct") or 15) / 100


def inference_inputs_from(fields: dict[str, Any]) -> InferenceInputs:
    for name in ("kv_dtype", "context_tokens", "target_concurrency", "tensor_parallel"):
        if not fields.get(name):
            raise SizingInputError(name, _("required for inference sizing"))
    return InferenceInputs(
        architecture=architecture_from(fields),
        weight_dtype=fields["weight_dtype"],
        kv_dtype=fields["kv_dtype"],
        context_tokens=int(fields["context_tokens"]),
        target_concurrency=int(fields["target_concurrency"]),
        tensor_parallel=int(fields["tensor_parallel"]),
        card_memory_gib=Decimal(fields["card_memory_gib"]),
        reserve_fraction=_reserve(fields),
    )


def training_inputs_from(fields: dict[str, Any]) -> TrainingInputs:
    for name in ("micro_batch_sequences", "sequence_tokens"):
        if not fields.get(name):
            raise SizingInputError(name, _("required for training sizing"))
    return TrainingInputs(
        architecture=architecture_from(fields),
        card_memory_gib=Decimal(fields["card_memory_gib"]),
        micro_batch_sequences=int(fields["micro_batch_sequences"]),
        sequence_tokens=int(fields["sequence_tokens"]),
        weight_dtype=fields["weight_dtype"],
        optimizer=fields.get("optimizer") or "adamw",
        activation_checkpoint_factor=(
            FULL_CHECKPOINTING_FACTOR if fields.get("gradient_checkpointing") else 1
        ),
        reserve_fraction=_reserve(fields),
    )


def size_from(fields: dict[str, Any]):
    """The sizing result for submitted or saved fields; raises SizingInputError."""
    if fields.get("mode") == "training":
        return size_training(training_inputs_from(fields))
    return size_inference(inference_inputs_from(fields))


def demand_fields(demand) -> dict[str, Any]:
    from apps.sizing.services import DEMAND_FIELDS

    return {name: getattr(demand, name) for name in DEMAND_FIELDS}

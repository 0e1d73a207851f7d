from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _

from apps.sizing.inputs import HOURS_MAX, INPUT_MAX
from apps.sizing.models import (
    DTYPE_CHOICES,
    OPTIMIZER_LABELS,
    TOLERANCE_MAX_PCT,
    TOLERANCE_VALIDATORS,
    ComputeDemand,
    RequirementSpec,
)
from apps.sizing.presets import preset_choices
from apps.sizing.requirement import SPEC_FIELDS
from apps.sizing.training import Optimizer


class SizingForm(forms.Form):
    """Calculator inputs; the same fields are saved as a case's compute demand."""

    mode = forms.ChoiceField(
        label=_("Workload"), choices=ComputeDemand.Mode.choices, initial="inference"
    )
    model_preset = forms.ChoiceField(
        label=_("Model"),
        required=False,
        choices=[("", _("Custom architecture (enter below)")), *preset_choices()],
    )
    model_name = forms.CharField(label=_("Custom model name"), required=False, max_length=100)
    parameters = forms.IntegerField(
        label=_("Parameters (total)"),
        required=False,
        min_value=1,
        max_value=INPUT_MAX["parameters"],
    )
    layers = forms.IntegerField(
        label=_("Layers"), required=False, min_value=1, max_value=INPUT_MAX["layers"]
    )
    hidden_size = forms.IntegerField(
        label=_("Hidden size"), required=False, min_value=1, max_value=INPUT_MAX["hidden_size"]
    )
    attention_heads = forms.IntegerField(
        label=_("Attention heads"),
        required=False,
        min_value=1,
        max_value=INPUT_MAX["attention_heads"],
    )
    kv_heads = forms.IntegerField(
        label=_("KV heads"), required=False, min_value=1, max_value=INPUT_MAX["kv_heads"]
    )
    head_dim = forms.IntegerField(
        label=_("Head dimension"), required=False, min_value=1, max_value=INPUT_MAX["head_dim"]
    )
    weight_dtype = forms.ChoiceField(label=_("Weight dtype"), choices=DTYPE_CHOICES, initial="bf16")
    card_memory_gib = forms.DecimalField(
        label=_("Memory per card (GiB)"),
        min_value=Decimal("1"),
        max_digits=7,
        decimal_places=2,
        initial=Decimal("140"),
        help_text=_("As the driver reports it: H200 ≈ 140 GiB, H100 ≈ 79.6."),
    )
    reserve_pct = forms.DecimalField(
        label=_("Runtime reserve (%)"),
        min_value=Decimal("10"),
        max_value=Decimal("20"),
        max_digits=4,
        decimal_places=1,
        initial=Decimal("15"),
        # xgettext:no-python-format
        help_text=_("10–20 % for runtime and communication buffers."),
    )
    kv_dtype = forms.ChoiceField(
        label=_("KV-cache dtype"), choices=DTYPE_CHOICES, initial="bf16", required=False
    )
    context_tokens = forms.IntegerField(
        label=_("Context length (tokens)"),
        min_value=1,
        required=False,
        initial=32768,
        max_value=INPUT_MAX["context_tokens"],
    )
    target_concurrency = forms.IntegerField(
        label=_("Target concurrent sequences"),
        min_value=1,
        required=False,
        initial=64,
        max_value=INPUT_MAX["target_concurrency"],
    )
    tensor_parallel = forms.IntegerField(
        label=_("Cards per instance (tensor parallel)"),
        min_value=1,
        required=False,
        initial=8,
        max_value=INPUT_MAX["tensor_parallel"],
    )
    micro_batch_sequences = forms.IntegerField(
        label=_("Micro-batch (sequences per card)"),
        min_value=1,
        required=False,
        initial=1,
        max_value=INPUT_MAX["micro_batch_sequences"],
    )
    sequence_tokens = forms.IntegerField(
        label=_("Training sequence length"),
        min_value=1,
        required=False,
        initial=4096,
        max_value=INPUT_MAX["sequence_tokens"],
    )
    optimizer = forms.ChoiceField(
        label=_("Optimizer"),
        required=False,
        initial="adamw",
        choices=[(o.value, OPTIMIZER_LABELS[o.value]) for o in Optimizer],
    )
    gradient_checkpointing = forms.BooleanField(label=_("Gradient checkpointing"), required=False)
    data_parallel_replicas = forms.IntegerField(
        label=_("Data-parallel replicas"),
        min_value=1,
        required=False,
        max_value=INPUT_MAX["data_parallel_replicas"],
        help_text=_("Copies of the model trained side by side; blank means one."),
    )
    checkpoints_kept = forms.IntegerField(
        label=_("Checkpoints kept on local disk"),
        min_value=1,
        required=False,
        max_value=INPUT_MAX["checkpoints_kept"],
        help_text=_("Blank means two: the one being written and the last good one."),
    )
    hours_needed = forms.DecimalField(
        label=_("Hours the capacity is needed"),
        min_value=Decimal("0.1"),
        max_value=HOURS_MAX,
        max_digits=10,
        decimal_places=1,
        required=False,
        help_text=_("The training run, or the serving period; prices the capacity needed."),
    )

    INFERENCE_ONLY = ("kv_dtype", "context_tokens", "target_concurrency", "tensor_parallel")
    TRAINING_ONLY = (
        "micro_batch_sequences",
        "sequence_tokens",
        "optimizer",
        "gradient_checkpointing",
        "data_parallel_replicas",
        "checkpoints_kept",
    )
    ARCHITECTURE = (
        "model_name",
        "parameters",
        "layers",
        "hidden_size",
        "attention_heads",
        "kv_heads",
        "head_dim",
    )

    def group(self, names):
        return [self[name] for name in names]

    def common_fields(self):
        return self.group(
            (
                "mode",
                "model_preset",
                "weight_dtype",
                "card_memory_gib",
                "reserve_pct",
                "hours_needed",
            )
        )

    def architecture_fields(self):
        return self.group(self.ARCHITECTURE)

    def inference_fields(self):
        return self.group(self.INFERENCE_ONLY)

    def training_fields(self):
        return self.group(self.TRAINING_ONLY)


class CalculatorCaseForm(forms.Form):
    """The calculator's ``?case=``: the case the result may be saved to."""

    case = forms.IntegerField(required=False, min_value=1)


class SaveDemandForm(forms.Form):
    case = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    change_reason = forms.CharField(label=_("Reason"), max_length=500, required=False)
    version = forms.IntegerField(label=_("Version"), widget=forms.HiddenInput, required=False)


class RequirementSpecForm(forms.ModelForm):
    """The case's requirement spec; every item is a floor, and blank sets none."""

    change_reason = forms.CharField(
        label=_("Reason for this change"),
        max_length=500,
        required=False,
        help_text=_("Needed when changing a saved spec; kept in the audit history."),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = RequirementSpec
        fields = SPEC_FIELDS

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Left blank, the spec states no tolerance: every shortfall blocks. Out of range,
        # below 0 as above 50, it says the same.
        tolerance = self.fields["tolerance_pct"]
        tolerance.required = False
        tolerance.validators = list(TOLERANCE_VALIDATORS)
        tolerance.widget.attrs.update(min=0, max=TOLERANCE_MAX_PCT)

    def clean_tolerance_pct(self) -> int:
        return self.cleaned_data.get("tolerance_pct") or 0

    def edit_parts(self) -> tuple[dict, str, int | None]:
        fields = dict(self.cleaned_data)
        return fields, fields.pop("change_reason"), fields.pop("version")

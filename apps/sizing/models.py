"""The case's compute demand: the sizing inputs saved from the calculator."""

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import TrackedModel

DTYPE_CHOICES = [
    ("fp32", "FP32"),
    ("bf16", "BF16"),
    ("fp16", "FP16"),
    ("fp8", "FP8"),
    ("int8", "INT8"),
    ("int4", "INT4"),
]

# The optimizers the training sizing knows (apps.sizing.training.Optimizer), by name.
OPTIMIZER_LABELS = {
    "adamw": _("AdamW (two moments)"),
    "sgd_momentum": _("SGD with momentum (one buffer)"),
    "adafactor": _("Adafactor (factored moments)"),
}


class ComputeDemand(TrackedModel):
    """Sizing inputs for a case; results are recomputed from them, never stored."""

    class Mode(models.TextChoices):
        INFERENCE = "inference", _("Inference")
        TRAINING = "training", _("Training / fine-tuning")

    case = models.OneToOneField(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="compute_demand"
    )
    mode = models.CharField(_("mode"), max_length=20, choices=Mode.choices)
    model_preset = models.CharField(_("model preset"), max_length=50, blank=True)
    # Custom architecture, used when no preset is chosen.
    model_name = models.CharField(_("model name"), max_length=100, blank=True)
    parameters = models.BigIntegerField(_("parameters"), null=True, blank=True)
    layers = models.PositiveIntegerField(_("layers"), null=True, blank=True)
    hidden_size = models.PositiveIntegerField(_("hidden size"), null=True, blank=True)
    attention_heads = models.PositiveIntegerField(_("attention heads"), null=True, blank=True)
    kv_heads = models.PositiveIntegerField(_("KV heads"), null=True, blank=True)
    head_dim = models.PositiveIntegerField(_("head dimension"), null=True, blank=True)
    weight_dtype = models.CharField(_("weight dtype"), max_length=8, choices=DTYPE_CHOICES)
    card_memory_gib = models.DecimalField(
        _("card memory (GiB)"),
        max_digits=7,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("1"))],
    )
    reserve_pct = models.DecimalField(
        _("runtime reserve (%)"),
        max_digits=4,
        decimal_places=1,
        default=Decimal("15"),
        validators=[MinValueValidator(Decimal("10")), MaxValueValidator(Decimal("20"))],
    )
    # Inference inputs.
    kv_dtype = models.CharField(
        _("KV-cache dtype"), max_length=8, choices=DTYPE_CHOICES, blank=True
    )
    context_tokens = models.PositiveIntegerField(
        _("context length (tokens)"), null=True, blank=True
    )
    target_concurrency = models.PositiveIntegerField(
        _("target concurrent sequences"), null=True, blank=True
    )
    tensor_parallel = models.PositiveIntegerField(
        _("cards per instance (tensor parallel)"), null=True, blank=True
    )
    # Training inputs.
    micro_batch_sequences = models.PositiveIntegerField(
        _("micro-batch (sequences per card)"), null=True, blank=True
    )
    sequence_tokens = models.PositiveIntegerField(_("sequence length"), null=True, blank=True)
    optimizer = models.CharField(_("optimizer"), max_length=20, blank=True)
    gradient_checkpointing = models.BooleanField(_("gradient checkpointing"), default=False)
    # The plan the offers are checked against (apps.sizing.fit): added after history rows
    # were chained, so nullable, and blank means the default the fit rule names.
    data_parallel_replicas = models.PositiveIntegerField(
        _("data-parallel replicas"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_("Training: copies of the model trained side by side; blank means one."),
    )
    checkpoints_kept = models.PositiveIntegerField(
        _("checkpoints kept on local disk"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_("Training: blank means two, the one being written and the last good one."),
    )
    hours_needed = models.DecimalField(
        _("hours the capacity is needed"),
        max_digits=10,
        decimal_places=1,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.1"))],
        help_text=_("The training run, or the serving period; prices the capacity needed."),
    )
    history = HistoricalRecords()
    late_history_columns = ("data_parallel_replicas", "checkpoints_kept", "hours_needed")

    class Meta:
        verbose_name = _("compute demand")
        verbose_name_plural = _("compute demands")

    @property
    def optimizer_label(self) -> str:
        return str(OPTIMIZER_LABELS.get(self.optimizer, self.optimizer))

    def __str__(self) -> str:
        return f"Compute demand of {self.case}"

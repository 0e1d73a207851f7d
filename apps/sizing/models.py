"""The case's compute demand: the sizing inputs saved from the calculator."""

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import TrackedModel
from apps.sizing.inputs import INPUT_MAX

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
    parameters = models.BigIntegerField(
        _("parameters"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(INPUT_MAX["parameters"])],
    )
    layers = models.PositiveIntegerField(
        _("layers"), null=True, blank=True, validators=[MaxValueValidator(INPUT_MAX["layers"])]
    )
    hidden_size = models.PositiveIntegerField(
        _("hidden size"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["hidden_size"])],
    )
    attention_heads = models.PositiveIntegerField(
        _("attention heads"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["attention_heads"])],
    )
    kv_heads = models.PositiveIntegerField(
        _("KV heads"), null=True, blank=True, validators=[MaxValueValidator(INPUT_MAX["kv_heads"])]
    )
    head_dim = models.PositiveIntegerField(
        _("head dimension"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["head_dim"])],
    )
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
        _("context length (tokens)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["context_tokens"])],
    )
    target_concurrency = models.PositiveIntegerField(
        _("target concurrent sequences"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["target_concurrency"])],
    )
    tensor_parallel = models.PositiveIntegerField(
        _("cards per instance (tensor parallel)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["tensor_parallel"])],
    )
    # Training inputs.
    micro_batch_sequences = models.PositiveIntegerField(
        _("micro-batch (sequences per card)"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["micro_batch_sequences"])],
    )
    sequence_tokens = models.PositiveIntegerField(
        _("sequence length"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(INPUT_MAX["sequence_tokens"])],
    )
    optimizer = models.CharField(_("optimizer"), max_length=20, blank=True)
    gradient_checkpointing = models.BooleanField(_("gradient checkpointing"), default=False)
    # The plan the offers are checked against (apps.sizing.fit): added after history rows
    # were chained, so nullable, and blank means the default the fit rule names.
    data_parallel_replicas = models.PositiveIntegerField(
        _("data-parallel replicas"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(INPUT_MAX["data_parallel_replicas"])],
        help_text=_("Training: copies of the model trained side by side; blank means one."),
    )
    checkpoints_kept = models.PositiveIntegerField(
        _("checkpoints kept on local disk"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(INPUT_MAX["checkpoints_kept"])],
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


class RequiredInterconnect(models.TextChoices):
    """The least intra-node link a plan needs, weakest first."""

    PCIE = "pcie", _("PCIe or better")
    NVLINK = "nvlink", _("NVLink / NVSwitch class")


class RequiredNetwork(models.TextChoices):
    """The least inter-node network a plan needs, weakest first."""

    ETHERNET = "ethernet", _("Any network between nodes (Ethernet / TCP or better)")
    RDMA = "rdma", _("RDMA class (InfiniBand or RoCE)")


class CardTier(models.TextChoices):
    """Card tiers by dense BF16 compute per card (apps.sizing.requirement.TIER_FLOORS)."""

    ENTRY = "entry", _("Entry: at least 100 dense BF16 TFLOP/s per card")
    MID = "mid", _("Mid: at least 300 dense BF16 TFLOP/s per card")
    HIGH = "high", _("High: at least 700 dense BF16 TFLOP/s per card")
    TOP = "top", _("Top: at least 2,000 dense BF16 TFLOP/s per card")


# Far past any real plan, and within PostgreSQL's integer columns.
COUNT_MAX = 10_000_000
# The widest tolerance a requirement spec may state, in percent: past half, a figure is
# no longer a floor.
TOLERANCE_MAX_PCT = 50
TOLERANCE_OUT_OF_RANGE = _("The tolerance is a share from 0 to 50 %%.")
TOLERANCE_VALIDATORS = (
    MinValueValidator(0, message=TOLERANCE_OUT_OF_RANGE),
    MaxValueValidator(TOLERANCE_MAX_PCT, message=TOLERANCE_OUT_OF_RANGE),
)


def _count(label, help_text=""):
    return models.PositiveIntegerField(
        label,
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(COUNT_MAX)],
        help_text=help_text,
    )


def _floor(label, *, digits: int, places: int, help_text=""):
    return models.DecimalField(
        label,
        max_digits=digits,
        decimal_places=places,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(1).scaleb(-places))],
        help_text=help_text,
    )


class RequirementSpec(TrackedModel):
    """The case's vendor-neutral requirement spec: what every offer is checked against.

    Every field is a floor; blank means the case sets none. Prefilled from the
    compute demand where the sizing decides the value (apps.sizing.requirement).
    """

    case = models.OneToOneField(
        "cases.ProcurementCase",
        on_delete=models.CASCADE,
        related_name="requirement_spec",
        verbose_name=_("case"),
    )
    card_tier = models.CharField(
        _("card tier"), max_length=10, choices=CardTier.choices, blank=True
    )
    memory_per_card_gib = _floor(_("memory per card (GiB)"), digits=7, places=2)
    card_count = _count(_("card count"))
    tensor_parallel = _count(
        _("tensor-parallel degree"), _("Cards that hold one copy of each layer; kept in one node.")
    )
    pipeline_parallel = _count(_("pipeline-parallel degree"), _("Stages the layers are cut into."))
    data_parallel = _count(
        _("data-parallel degree"), _("Copies of the model serving or training side by side.")
    )
    cards_per_node = _count(_("cards per node"))
    intra_node_interconnect = models.CharField(
        _("intra-node interconnect"),
        max_length=10,
        choices=RequiredInterconnect.choices,
        blank=True,
    )
    intra_node_bandwidth_gbps = _floor(
        _("intra-node bandwidth (GB/s per card)"), digits=8, places=1
    )
    inter_node_network = models.CharField(
        _("inter-node network"), max_length=10, choices=RequiredNetwork.choices, blank=True
    )
    inter_node_bandwidth_gbit = _floor(
        _("inter-node bandwidth floor (Gbit/s per node)"), digits=8, places=1
    )
    local_nvme_tb = _floor(_("local NVMe per node (TB)"), digits=8, places=2)
    term_months = _count(_("job duration or term (months)"))
    throughput_tokens_per_s = _floor(
        _("serving throughput (output tokens/s)"),
        digits=12,
        places=1,
        help_text=_("At the case's service-level objectives."),
    )
    throughput_requests_per_s = _floor(
        _("serving throughput (requests/s)"),
        digits=10,
        places=2,
        help_text=_("At the case's service-level objectives."),
    )
    # Not a floor: how far below a numeric floor an offer may fall and still be weighed by
    # the tech lead instead of blocking (docs/rules/sizing.md#requirement-spec).
    tolerance_pct = models.PositiveSmallIntegerField(
        _("tolerance (%)"),
        default=0,
        null=True,  # a history column added after rows were chained (apps.audit.chain)
        blank=True,
        validators=list(TOLERANCE_VALIDATORS),
        help_text=_(
            "An offer short of a numeric figure by at most this share needs the tech lead's "
            "acceptance instead of blocking."
        ),
    )
    history = HistoricalRecords()
    late_history_columns = ("tolerance_pct",)

    class Meta:
        verbose_name = _("requirement spec")
        verbose_name_plural = _("requirement specs")

    def __str__(self) -> str:
        return f"Requirement spec of {self.case}"

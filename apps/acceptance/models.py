"""Acceptance of the rented capacity against written criteria (docs/rules/acceptance.md).

One plan per offer holds the four layers' pass criteria; engineers record the
results the harness cannot measure (fault injections above all) with their
attachments; a second tech lead signs the acceptance off, bound to what it saw.
"""

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core import formats
from apps.core.bounds import TEXT_MAX_LENGTH
from apps.core.models import StoredFileRecord, TrackedModel
from apps.evidence.rules import baseline as baseline_rules

# docs/rules/acceptance.md layer one: 30 minutes without a restart.
DEFAULT_SOAK_MINUTES = 30
# Layer two: 100 % of the core sample set passes.
DEFAULT_CORRECTNESS_PASS_PCT = Decimal("100")
# Layer three: the documented concurrency ladder 1/4/8/16/32.
DEFAULT_LADDER = "1,4,8,16,32"
# Layer four: at least three fault injections.
DEFAULT_FAULT_MINIMUM = 3
# The most concurrent requests a plan may require to hold its SLOs.
SAFE_CONCURRENCY_MAX = 1_000_000
# A sign-off's comment, as the page and the API take it.
SIGN_OFF_COMMENT_MAX_LENGTH = 4_000
# Re-run after maintenance: the evidence rules' defaults (round-to-round noise).
DEFAULT_THROUGHPUT_TOLERANCE_PCT = baseline_rules.DEFAULT_THROUGHPUT_PCT
DEFAULT_LATENCY_TOLERANCE_PCT = baseline_rules.DEFAULT_LATENCY_PCT
DEFAULT_ERROR_RATE_TOLERANCE_POINTS = baseline_rules.DEFAULT_ERROR_RATE_POINTS
# The reference training step's thresholds: bounds no real figure comes near.
TRAINING_SAMPLES_PER_S_MAX = Decimal("1000000000")
CHECKPOINT_SECONDS_MAX = Decimal("86400")  # a day
TRAINING_FIELDS = (
    "training_min_samples_per_s_per_card",
    "training_min_scaling_pct",
    "checkpoint_max_save_s",
    "checkpoint_max_restore_s",
)


class Layer(models.TextChoices):
    CONNECTIVITY = "connectivity", _("Connectivity and environment")
    CORRECTNESS = "correctness", _("Correctness")
    PERFORMANCE = "performance", _("Performance baseline")
    STABILITY = "stability", _("Stability and recovery")
    MAINTENANCE = "maintenance", _("Re-run after maintenance")


class FaultKind(models.TextChoices):
    NETWORK = "network", _("Network jitter or a short disconnect")
    NODE_KILLED = "node_killed", _("A node killed")
    MAINTENANCE = "maintenance", _("Simulated maintenance window")
    OTHER = "other", _("Other")


REQUIRED_FAULT_KINDS = (FaultKind.NETWORK, FaultKind.NODE_KILLED, FaultKind.MAINTENANCE)


class AcceptancePlan(TrackedModel):
    """The pass criteria of the four verification layers for one offer of a case."""

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="acceptance_plans",
        verbose_name=_("case"),
    )
    offer = models.OneToOneField(
        "offers.Offer",
        on_delete=models.PROTECT,
        related_name="acceptance_plan",
        verbose_name=_("offer"),
    )
    soak_minutes = models.PositiveIntegerField(
        _("restart-free soak (minutes)"),
        default=DEFAULT_SOAK_MINUTES,
        validators=[MinValueValidator(1), MaxValueValidator(7 * 24 * 60)],
        help_text=_(
            "The soak must run this long with no restart, outage or vanished GPU anywhere in it."
        ),
    )
    expected_versions = models.CharField(
        _("expected versions"),
        max_length=300,
        blank=True,
        help_text=_("Driver, CUDA and framework versions the offer promised, in words."),
    )
    correctness_pass_pct = models.DecimalField(
        _("core set pass rate required (%)"),
        max_digits=5,
        decimal_places=2,
        default=DEFAULT_CORRECTNESS_PASS_PCT,
        validators=[MinValueValidator(Decimal("0.01")), MaxValueValidator(Decimal("100"))],
    )
    correctness_tolerance = models.CharField(
        _("correctness tolerance"),
        max_length=300,
        default="exact match at temperature 0 after whitespace trim",
        help_text=_("How the remote answers are compared with the local baseline's."),
    )
    ladder = models.CharField(
        _("concurrency ladder"),
        max_length=100,
        default=DEFAULT_LADDER,
        help_text=_("Concurrency levels to measure, comma-separated, e.g. 1,4,8,16,32."),
    )
    required_safe_concurrency = models.PositiveIntegerField(
        _("required safe operating level"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(SAFE_CONCURRENCY_MAX)],
        help_text=_(
            "The highest concurrency at which every SLO holds must reach this; blank: any level."
        ),
    )
    fault_minimum = models.PositiveSmallIntegerField(
        _("fault injections required"),
        default=DEFAULT_FAULT_MINIMUM,
        validators=[MinValueValidator(1), MaxValueValidator(50)],
    )
    # Re-run after maintenance: how much worse than the pinned baseline a later run
    # may be and still count as "equal or better" (docs/rules/evidence.md#baseline).
    baseline_throughput_tolerance_pct = models.DecimalField(
        _("baseline tolerance for throughput (%)"),
        max_digits=5,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
        help_text=_(
            "Output tokens/s, matmul TFLOP/s and memory bandwidth may fall this much (blank: 10 %)."
        ),
    )
    baseline_latency_tolerance_pct = models.DecimalField(
        _("baseline tolerance for latency (%)"),
        max_digits=6,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("1000"))],
        help_text=_(
            "P95 time to first token and time per output token may rise this much (blank: 10 %)."
        ),
    )
    baseline_error_rate_tolerance_points = models.DecimalField(
        _("baseline tolerance for the error rate (percentage points)"),
        max_digits=5,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
        help_text=_("The error rate may rise this many percentage points (blank: 0.1)."),
    )
    # The reference training step (docs/rules/acceptance.md#training-thresholds): what the
    # harness's training step must reach; blank: not required.
    training_min_samples_per_s_per_card = models.DecimalField(
        _("training: minimum samples/s per card"),
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[
            MinValueValidator(Decimal("0.01")),
            MaxValueValidator(TRAINING_SAMPLES_PER_S_MAX),
        ],
        help_text=_(
            "The reference training step over every card must reach this per card "
            "(blank: not required)."
        ),
    )
    training_min_scaling_pct = models.DecimalField(
        _("training: minimum scaling efficiency (%)"),
        max_digits=5,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.01")), MaxValueValidator(Decimal("100"))],
        help_text=_(
            "All cards' samples/s over the number of cards times one card's (blank: not required)."
        ),
    )
    checkpoint_max_save_s = models.DecimalField(
        _("checkpoint: maximum save time (s)"),
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.01")), MaxValueValidator(CHECKPOINT_SECONDS_MAX)],
        help_text=_("The reference checkpoint must be written within this (blank: not required)."),
    )
    checkpoint_max_restore_s = models.DecimalField(
        _("checkpoint: maximum restore time (s)"),
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.01")), MaxValueValidator(CHECKPOINT_SECONDS_MAX)],
        help_text=_(
            "The reference checkpoint must be read back, equal to what was saved, within "
            "this (blank: not required)."
        ),
    )
    notes = models.TextField(_("notes"), max_length=TEXT_MAX_LENGTH, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("created by"),
    )
    history = HistoricalRecords()
    late_history_columns = (
        "baseline_throughput_tolerance_pct",
        "baseline_latency_tolerance_pct",
        "baseline_error_rate_tolerance_points",
        *TRAINING_FIELDS,
    )

    class Meta:
        ordering = ["case_id", "pk"]
        verbose_name = _("acceptance plan")
        verbose_name_plural = _("acceptance plans")
        permissions = [("signoff_acceptanceplan", _("Can sign off an acceptance"))]

    def __str__(self) -> str:
        return f"Acceptance plan — {self.offer}"

    @property
    def baseline_tolerances(self) -> baseline_rules.Tolerances:
        """How much worse than the pinned baseline a re-run may be; blank: the defaults
        (plans made before the tolerances existed hold none)."""
        return baseline_rules.Tolerances(
            throughput_pct=_or(
                self.baseline_throughput_tolerance_pct, DEFAULT_THROUGHPUT_TOLERANCE_PCT
            ),
            latency_pct=_or(self.baseline_latency_tolerance_pct, DEFAULT_LATENCY_TOLERANCE_PCT),
            error_rate_points=_or(
                self.baseline_error_rate_tolerance_points, DEFAULT_ERROR_RATE_TOLERANCE_POINTS
            ),
            from_plan=True,
        )

    @property
    def training_thresholds(self) -> list[str]:
        """The reference training step's thresholds the plan sets, in words (empty: none)."""
        found = []
        if self.training_min_samples_per_s_per_card is not None:
            found.append(
                gettext("at least %(rate)s samples/s per card over every card")
                % {"rate": formats.number(self.training_min_samples_per_s_per_card, -2)}
            )
        if self.training_min_scaling_pct is not None:
            found.append(
                gettext("scaling from one card to all at least %(pct)s")
                % {"pct": formats.percent(self.training_min_scaling_pct, -2, ratio=False)}
            )
        if self.checkpoint_max_save_s is not None:
            found.append(
                gettext("checkpoint saved within %(seconds)s s")
                % {"seconds": formats.number(self.checkpoint_max_save_s, -2)}
            )
        if self.checkpoint_max_restore_s is not None:
            found.append(
                gettext("checkpoint restored within %(seconds)s s, equal to what was saved")
                % {"seconds": formats.number(self.checkpoint_max_restore_s, -2)}
            )
        return found


def _or(value: Decimal | None, default: Decimal) -> Decimal:
    return default if value is None else value


class AcceptanceResult(TrackedModel):
    """What an engineer did and saw for one layer, e.g. one fault injection."""

    class Outcome(models.TextChoices):
        PASSED = "passed", _("Passed")
        FAILED = "failed", _("Failed")

    plan = models.ForeignKey(
        AcceptancePlan, on_delete=models.PROTECT, related_name="results", verbose_name=_("plan")
    )
    layer = models.CharField(_("layer"), max_length=20, choices=Layer.choices)
    fault_kind = models.CharField(
        _("fault injected"), max_length=20, choices=FaultKind.choices, blank=True
    )
    activity = models.CharField(_("what was done"), max_length=300)
    outcome = models.CharField(_("outcome"), max_length=10, choices=Outcome.choices)
    notes = models.TextField(_("notes"), max_length=TEXT_MAX_LENGTH, blank=True)
    resumed_from_checkpoint = models.BooleanField(
        _("resumed from the latest checkpoint"), null=True, blank=True
    )
    duplicated_data = models.BooleanField(_("duplicated data"), null=True, blank=True)
    performed_at = models.DateTimeField(_("performed at"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("recorded by"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["plan_id", "performed_at", "pk"]
        verbose_name = _("acceptance result")
        verbose_name_plural = _("acceptance results")

    def __str__(self) -> str:
        return f"{self.get_layer_display()}: {self.activity}"


class AcceptanceAttachment(TrackedModel, StoredFileRecord):
    """A log or screenshot behind a result, stored once with its digest; never replaced."""

    plan = models.ForeignKey(
        AcceptancePlan, on_delete=models.PROTECT, related_name="attachments", verbose_name=_("plan")
    )
    result = models.ForeignKey(
        AcceptanceResult,
        on_delete=models.PROTECT,
        related_name="attachments",
        verbose_name=_("result"),
    )
    name = models.CharField(_("file name"), max_length=200)
    content_type = models.CharField(_("type"), max_length=100)
    storage_name = models.CharField(_("stored as"), max_length=300, unique=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("uploaded by"),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["result_id", "pk"]
        verbose_name = _("acceptance attachment")
        verbose_name_plural = _("acceptance attachments")

    def __str__(self) -> str:
        return self.name


class AcceptanceSignOff(TrackedModel):
    """A reviewer's sign-off, bound to the plan, results, attachments and evidence it saw.

    ``bound_state`` has the shape of ``Approval.bound_state`` (records and
    evidence), so the approvals app's binding finds what changed since; a
    change voids the sign-off. Never deleted.
    """

    plan = models.ForeignKey(
        AcceptancePlan, on_delete=models.PROTECT, related_name="signoffs", verbose_name=_("plan")
    )
    signed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("signed off by"),
    )
    signed_at = models.DateTimeField(_("signed off at"))
    comment = models.TextField(_("comment"), max_length=SIGN_OFF_COMMENT_MAX_LENGTH)
    layers = models.JSONField(_("layers at the sign-off"), default=list, blank=True)
    bound_state = models.JSONField(_("bound state"), default=dict, blank=True)
    voided_at = models.DateTimeField(_("voided at"), null=True, blank=True)
    void_reason = models.TextField(_("why it was voided"), blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-signed_at", "-pk"]
        verbose_name = _("acceptance sign-off")
        verbose_name_plural = _("acceptance sign-offs")

    def __str__(self) -> str:
        return f"Sign-off of {self.plan} ({self.signed_at:%Y-%m-%d})"

"""The procurement case: the aggregate root every other record hangs from."""

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.bounds import DAYS_MAX, REASON_MAX_LENGTH, TEXT_MAX_LENGTH
from apps.core.models import TrackedModel

# docs/rules/evidence.md#service-levels: SLO defaults for online inference.
DEFAULT_SLO_P95_TTFT_MS = 1500
DEFAULT_SLO_ERROR_RATE_PCT = Decimal("0.5")
DEFAULT_SLO_PEAK_MEMORY_PCT = 90
# A first token later than ten minutes is no service level.
SLO_TTFT_MS_MAX = 600_000

# docs/rules/offers.md#offer-minimum: a case compares at least three offers, or records a waiver.
MINIMUM_COMPARED_OFFERS = 3


class ProcurementCase(TrackedModel):
    """One decision to rent GPU compute, run end to end."""

    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        EVALUATING = "evaluating", _("Evaluating")
        PENDING_APPROVAL = "pending_approval", _("Pending approval")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")
        ACCEPTED = "accepted", _("Accepted")

    class Workload(models.TextChoices):
        INFERENCE = "inference", _("Inference")
        TRAINING = "training", _("Training")
        FINE_TUNING = "fine_tuning", _("Fine-tuning")

    name = models.CharField(_("name"), max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="owned_cases",
        verbose_name=_("owner"),
    )
    status = models.CharField(
        _("status"), max_length=20, choices=Status.choices, default=Status.DRAFT
    )
    workload = models.CharField(
        _("workload"), max_length=20, choices=Workload.choices, default=Workload.INFERENCE
    )
    requirements = models.TextField(_("requirements"), max_length=TEXT_MAX_LENGTH, blank=True)
    slo_p95_ttft_ms = models.PositiveIntegerField(
        _("SLO: P95 time to first token (ms)"),
        default=DEFAULT_SLO_P95_TTFT_MS,
        validators=[MinValueValidator(1), MaxValueValidator(SLO_TTFT_MS_MAX)],
    )
    slo_error_rate_pct = models.DecimalField(
        _("SLO: error rate (%)"),
        max_digits=5,
        decimal_places=2,
        default=DEFAULT_SLO_ERROR_RATE_PCT,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
    )
    slo_peak_memory_pct = models.PositiveSmallIntegerField(
        _("SLO: peak device memory (%)"),
        default=DEFAULT_SLO_PEAK_MEMORY_PCT,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
    )
    exit_window_days = models.PositiveIntegerField(
        _("exit window needed (days)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(DAYS_MAX)],
        help_text=_(
            "Within how many days we must be able to move off a provider. An offer whose "
            "stated exit takes longer cannot be approved."
        ),
    )
    availability_need_pct = models.DecimalField(
        _("availability needed (%)"),
        max_digits=6,
        decimal_places=3,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
        help_text=_(
            "The availability the service must have, e.g. 99.9. An offer whose contract's "
            "SLA promises less is approved only once procurement accepts the shortfall."
        ),
    )
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("submitted for approval by"),
        help_text=_("Whoever submitted the case for approval; they may not decide it."),
    )
    offer_minimum_waiver = models.TextField(
        _("waiver: fewer than three offers"),
        max_length=REASON_MAX_LENGTH,
        blank=True,
        help_text=_("Why this case may be decided with fewer than three compared offers."),
    )
    # ``submitted_by`` stays out of the history table: the submission's history row
    # names its author already, and a column added to a history table would change
    # the chained digest of every row written before it.
    history = HistoricalRecords(excluded_fields=["submitted_by"])
    late_history_columns = ("exit_window_days", "availability_need_pct")

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("procurement case")
        verbose_name_plural = _("procurement cases")
        permissions = [
            ("waive_offer_minimum", _("Can waive the three-offer minimum")),
            ("view_history", _("Can browse the audit history")),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(slo_peak_memory_pct__lte=100),
                name="case_slo_peak_memory_pct_lte_100",
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def decided(self) -> bool:
        """An offer is approved (and perhaps accepted): the case takes no new offer from
        its page. A rejected case is open to more offers before it is submitted again."""
        return self.status in {self.Status.APPROVED, self.Status.ACCEPTED}


class CaseStanding(models.Model):
    """Where a case stands, area by area, as its cockpit shows it to one kind of viewer.

    Stored by ``apps.casework.standing`` and read by the case page. ``variant`` digests
    everything besides the records that the reading depends on (the language, the time
    zone and today's date, the viewer's permissions, the deployed code and settings, the
    chain's last verification); ``seq`` is the audit chain head read before the records
    were. A tracked write touching the case raises its ``StandingMark``: a standing
    older than the mark is never shown.
    """

    case = models.ForeignKey(
        ProcurementCase, on_delete=models.CASCADE, related_name="+", verbose_name=_("case")
    )
    variant = models.CharField(_("variant"), max_length=64)
    seq = models.BigIntegerField(_("chain sequence read before"))
    valid_until = models.DateTimeField(_("valid until"), null=True, blank=True)
    # The cockpit as this kind of viewer sees it, rendered (no form, no token in it).
    html = models.TextField(_("rendered overview"))
    # What it was rendered from, area by area (what each lacks, its owners' permission,
    # until when it holds): a write recomputes the areas it can change and keeps these
    # for the others. Null: computed before areas were stored (recomputed whole).
    parts = models.JSONField(_("areas it was rendered from"), null=True, blank=True)
    # To compute it again for the same kind of viewer when a write touches the case.
    viewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("viewer"),
    )
    language = models.CharField(_("language"), max_length=20)
    time_zone = models.CharField(_("time zone"), max_length=100)
    computed_at = models.DateTimeField(_("computed at"), auto_now=True)

    class Meta:
        verbose_name = _("case standing")
        verbose_name_plural = _("case standings")
        constraints = [
            models.UniqueConstraint(fields=["case", "variant"], name="case_standing_variant")
        ]

    def __str__(self) -> str:
        return f"{self.case_id}:{self.variant[:8]}"


class StandingMark(models.Model):
    """The chain sequence of the last tracked write touching a case (``key`` = its id),
    or touching records that every case reads (``key`` = 0), and of the last one that
    could change each area of its standing (``areas``: area → sequence; ``"*"``: every
    area; null: every area, as of ``seq``)."""

    ALL = 0
    EVERY_AREA = "*"

    key = models.BigIntegerField(_("case, or 0 for every case"), primary_key=True)
    seq = models.BigIntegerField(_("chain sequence"))
    areas = models.JSONField(_("chain sequence by area"), null=True, blank=True)

    class Meta:
        verbose_name = _("standing mark")
        verbose_name_plural = _("standing marks")

    def __str__(self) -> str:
        return f"{self.key}@{self.seq}"

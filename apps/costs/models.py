"""A case's budget and rate card, imported usage and bills, and threshold alerts sent."""

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.bounds import CARDS_PER_NODE_MAX, CURRENCY_CHOICES
from apps.core.models import StoredFileRecord, TrackedModel
from apps.costs.rules import DEFAULT_THRESHOLDS_PCT

ZERO = Decimal("0")
# Input tokens of one request, as far as the sizing's longest context.
TOKENS_PER_REQUEST_MAX = 1_000_000_000


def default_thresholds() -> list[int]:
    return list(DEFAULT_THRESHOLDS_PCT)


def _money(label, **kwargs):
    return models.DecimalField(
        label, max_digits=16, decimal_places=2, validators=[MinValueValidator(ZERO)], **kwargs
    )


def _rate(label, **kwargs):
    return models.DecimalField(
        label,
        max_digits=14,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(ZERO)],
        **kwargs,
    )


class Budget(TrackedModel):
    """What a case may spend, its alert thresholds, and the rates the bill is checked against."""

    case = models.OneToOneField(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="budget"
    )
    # An ISO 4217 code; one saved before the list was enforced reads as stored.
    currency = models.CharField(
        _("currency"), max_length=3, choices=CURRENCY_CHOICES, default="USD"
    )
    total_amount = _money(_("total budget"))
    monthly_amount = _money(_("monthly budget"))
    # docs/rules/costs.md asks for daily as well as monthly budget alerts; added after
    # history rows were chained, so nullable (no daily budget: no daily alerts).
    daily_amount = _money(_("daily budget"), null=True, blank=True)
    # Percent of the budget at which the owner is told (docs/rules/costs.md: 70/90/100).
    thresholds_pct = models.JSONField(_("alert thresholds (%)"), default=default_thresholds)
    training_max_run_hours = models.DecimalField(
        _("training jobs: maximum run time (hours)"),
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("0.01"))],
    )
    training_max_spend = _money(_("training jobs: maximum spend"), null=True, blank=True)
    # The offer picked when none is approved yet; an approved offer always wins.
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("chosen offer"),
    )
    gpus_per_instance = models.PositiveIntegerField(
        _("GPUs per instance"),
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(CARDS_PER_NODE_MAX)],
        help_text=_("How many GPUs one billed instance-hour covers."),
    )
    price_per_million_tokens_in = _rate(_("price per million input tokens"))
    price_per_million_tokens_out = _rate(_("price per million output tokens"))
    storage_per_gib_month = _rate(_("storage, per GiB-month"))
    cross_region_per_gib = _rate(_("cross-region traffic, per GiB"))
    assumed_tokens_in_per_request = models.PositiveIntegerField(
        _("input tokens per request assumed by the sizing"),
        null=True,
        blank=True,
        validators=[MaxValueValidator(TOKENS_PER_REQUEST_MAX)],
    )
    history = HistoricalRecords()
    late_history_columns = ("daily_amount",)

    class Meta:
        verbose_name = _("budget")
        verbose_name_plural = _("budgets")

    def __str__(self) -> str:
        return f"{self.case} — budget"


class CostImport(TrackedModel, StoredFileRecord):
    """One accepted usage-and-bill or daily-spend file, kept byte for byte with its SHA-256."""

    class Source(models.TextChoices):
        UPLOAD = "upload", _("Upload")
        API_CSV = "api_csv", _("API (CSV)")
        API_JSON = "api_json", _("API (JSON)")

    class Kind(models.TextChoices):
        BILL = "bill", _("Monthly usage and bill")
        DAILY = "daily", _("Daily spend")

    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="cost_imports"
    )
    source = models.CharField(_("source"), max_length=10, choices=Source.choices)
    file_name = models.CharField(_("file name"), max_length=200)
    # The smaller integer column this table was created with.
    size_bytes = models.PositiveIntegerField(_("size (bytes)"))
    row_count = models.PositiveIntegerField(_("rows"))
    replaces_periods = models.BooleanField(_("replaces earlier periods"), default=False)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("imported by"),
    )
    note = models.CharField(_("note"), max_length=500, blank=True)
    # Added with daily spend; None on the files imported before it, all monthly bills.
    kind = models.CharField(_("kind"), max_length=10, choices=Kind.choices, null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = ("kind",)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("cost import")
        verbose_name_plural = _("cost imports")

    def __str__(self) -> str:
        return f"{self.file_name} ({self.sha256[:12]}…)"

    @property
    def is_daily(self) -> bool:
        return self.kind == self.Kind.DAILY


class CostPeriod(TrackedModel):
    """One month of usage and the vendor's bill; a replaced month stays, marked superseded."""

    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="cost_periods"
    )
    cost_import = models.ForeignKey(
        CostImport, on_delete=models.PROTECT, related_name="periods", verbose_name=_("import")
    )
    period = models.DateField(_("period (first day of the month)"))
    instance_hours = models.DecimalField(_("instance-hours"), max_digits=14, decimal_places=4)
    gpu_hours = models.DecimalField(_("GPU-hours of work"), max_digits=14, decimal_places=4)
    tokens_in = models.PositiveBigIntegerField(_("input tokens"))
    tokens_out = models.PositiveBigIntegerField(_("output tokens"))
    requests = models.PositiveBigIntegerField(_("requests"), null=True, blank=True)
    storage_gib_months = models.DecimalField(
        _("storage (GiB-months)"), max_digits=14, decimal_places=4
    )
    cross_region_gib = models.DecimalField(
        _("cross-region traffic (GiB)"), max_digits=14, decimal_places=4
    )
    amount = _money(_("billed amount"))
    # The vendor's list of the month's training jobs, where the bill gives one: the longest
    # job's run time and the costliest job's charge, held against the budget's training
    # caps (docs/rules/costs.md#guardrails-against-the-bills).
    training_job_hours_max = models.DecimalField(
        _("longest training job (hours)"), max_digits=14, decimal_places=4, null=True, blank=True
    )
    training_job_spend_max = _money(_("costliest training job"), null=True, blank=True)
    superseded_by = models.ForeignKey(
        CostImport,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("replaced by import"),
    )
    superseded_at = models.DateTimeField(_("replaced at"), null=True, blank=True)
    history = HistoricalRecords()
    late_history_columns = ("training_job_hours_max", "training_job_spend_max")

    class Meta:
        ordering = ["case_id", "period", "pk"]
        verbose_name = _("cost period")
        verbose_name_plural = _("cost periods")
        constraints = [
            models.UniqueConstraint(
                fields=["case", "period"],
                condition=models.Q(superseded_at__isnull=True),
                name="costperiod_one_current_per_month",
            )
        ]

    def __str__(self) -> str:
        return f"{self.case} — {self.period:%Y-%m}"


class SpendCharge(TrackedModel):
    """One charge of a daily-spend file, at the instant the vendor's usage export gives.

    Days are counted in ``settings.TIME_ZONE`` when read (apps.costs.rules.local_day),
    so a charge at 23:30 UTC falls on the next day in a zone east of UTC.
    """

    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="spend_charges"
    )
    cost_import = models.ForeignKey(
        CostImport, on_delete=models.PROTECT, related_name="charges", verbose_name=_("import")
    )
    charged_at = models.DateTimeField(_("charged at"))
    amount = _money(_("amount"))
    description = models.CharField(_("description"), max_length=200, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["case_id", "charged_at", "pk"]
        indexes = [models.Index(fields=["case", "charged_at"])]
        verbose_name = _("spend charge")
        verbose_name_plural = _("spend charges")

    def __str__(self) -> str:
        return f"{self.case} — {self.amount} at {self.charged_at:%Y-%m-%d %H:%M}"


class ThresholdAlert(TrackedModel):
    """A budget threshold crossed and the owner told; the unique key makes it once only."""

    class Scope(models.TextChoices):
        DAY = "day", _("Daily budget")
        MONTH = "month", _("Monthly budget")
        TOTAL = "total", _("Total budget")

    case = models.ForeignKey(
        "cases.ProcurementCase", on_delete=models.CASCADE, related_name="threshold_alerts"
    )
    scope = models.CharField(_("budget"), max_length=10, choices=Scope.choices)
    # The day or month of a daily or monthly crossing; for the total, the month it was
    # reached in.
    period = models.DateField(_("period"))
    # "" for the total budget (crossed once per threshold), "YYYY-MM" for a month,
    # "YYYY-MM-DD" for a day (in settings.TIME_ZONE).
    period_key = models.CharField(max_length=10, blank=True)
    threshold_pct = models.PositiveSmallIntegerField(_("threshold (%)"))
    spent = _money(_("spent"))
    limit = _money(_("budget"))
    recipients = models.JSONField(_("sent to"), default=list, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-period", "-threshold_pct", "-pk"]
        verbose_name = _("threshold alert")
        verbose_name_plural = _("threshold alerts")
        constraints = [
            models.UniqueConstraint(
                fields=["case", "scope", "period_key", "threshold_pct"],
                name="thresholdalert_once_per_crossing",
            )
        ]

    def __str__(self) -> str:
        return f"{self.case}: {self.threshold_pct} % of the {self.get_scope_display().lower()}"

    @property
    def period_text(self) -> str:
        """The day of a daily crossing, else the month."""
        if self.scope == self.Scope.DAY:
            return f"{self.period:%Y-%m-%d}"
        return f"{self.period:%Y-%m}"

"""Vendors: the providers that make offers."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.bounds import TEXT_MAX_LENGTH
from apps.core.models import TrackedModel


class VendorTier(models.TextChoices):
    """How much of the organisation rides on a vendor, and so how often it is reviewed."""

    CRITICAL = "critical", _("Critical")
    HIGH = "high", _("High")
    MEDIUM = "medium", _("Medium")
    LOW = "low", _("Low")


# Months between two reassessments of a vendor of each tier, unless the vendor names its own.
REVIEW_CYCLE_MONTHS: dict[str, int] = {
    VendorTier.CRITICAL: 6,
    VendorTier.HIGH: 12,
    VendorTier.MEDIUM: 24,
    VendorTier.LOW: 36,
}


class Vendor(TrackedModel):
    """A compute provider, independent of any case."""

    # Added after the first history rows were chained: nullable, digested only when set.
    late_history_columns = (
        "owner_id",
        "derived_tier",
        "tier_override",
        "tier_override_reason",
        "review_cycle_months",
    )

    name = models.CharField(_("name"), max_length=200, unique=True)
    jurisdiction = models.CharField(
        _("jurisdiction"),
        max_length=100,
        help_text=_("Country or region whose law governs the vendor, e.g. 'Singapore'."),
    )
    regions = models.CharField(
        _("regions"),
        max_length=300,
        blank=True,
        help_text=_("Data-centre regions offered, comma separated."),
    )
    contacts = models.TextField(_("contacts"), max_length=TEXT_MAX_LENGTH, blank=True)
    website = models.URLField(_("website"), blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="vendors_owned",
        verbose_name=_("owner"),
        help_text=_("The person who answers for the relationship with this vendor."),
    )
    derived_tier = models.CharField(
        _("tier from the cases"),
        max_length=10,
        choices=VendorTier.choices,
        null=True,
        blank=True,
        help_text=_("Kept from the data, spend and criticality of the vendor's cases."),
    )
    tier_override = models.CharField(
        _("tier set by hand"), max_length=10, choices=VendorTier.choices, null=True, blank=True
    )
    tier_override_reason = models.TextField(
        _("why the tier was set by hand"), max_length=TEXT_MAX_LENGTH, null=True, blank=True
    )
    review_cycle_months = models.PositiveSmallIntegerField(
        _("review cycle (months)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(60)],
        help_text=_("Leave empty to follow the tier's cycle."),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        verbose_name = _("vendor")
        verbose_name_plural = _("vendors")

    def __str__(self) -> str:
        return self.name

    @property
    def region_list(self) -> list[str]:
        return [r.strip() for r in self.regions.split(",") if r.strip()]

    @property
    def tier(self) -> str:
        """The tier in force: the one set by hand, else the one kept from the cases."""
        return self.tier_override or self.derived_tier or VendorTier.MEDIUM

    @property
    def review_cycle(self) -> int:
        """Months between two reassessments: the vendor's own, else its tier's."""
        return self.review_cycle_months or REVIEW_CYCLE_MONTHS[self.tier]

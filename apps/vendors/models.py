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
    def tier_label(self) -> str:
        return str(VendorTier(self.tier).label)

    @property
    def review_cycle(self) -> int:
        """Months between two reassessments: the vendor's own, else its tier's."""
        return self.review_cycle_months or REVIEW_CYCLE_MONTHS[self.tier]

    class Meta:
        ordering = ["name"]
        verbose_name = _("vendor")
        verbose_name_plural = _("vendors")
        permissions = [("override_vendor_tier", "Can set a vendor's tier by hand")]


class VendorContact(TrackedModel):
    """A person at the vendor, kept once and offered wherever the vendor is invited."""

    vendor = models.ForeignKey(
        Vendor, on_delete=models.CASCADE, related_name="contact_people", verbose_name=_("vendor")
    )
    name = models.CharField(_("name"), max_length=200)
    email = models.EmailField(_("e-mail"))
    role = models.CharField(_("role or title"), max_length=200, blank=True)
    language = models.CharField(
        _("language of the e-mails"), max_length=10, choices=settings.LANGUAGES, default="en"
    )
    active = models.BooleanField(_("active"), default=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["vendor_id", "-active", "name", "pk"]
        verbose_name = _("vendor contact")
        verbose_name_plural = _("vendor contacts")
        constraints = [
            models.UniqueConstraint(fields=["vendor", "email"], name="vendors_contact_one_email")
        ]

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


class SubProcessor(TrackedModel):
    """A company the vendor relies on to provide its service (a data centre, a network)."""

    vendor = models.ForeignKey(
        Vendor, on_delete=models.CASCADE, related_name="sub_processors", verbose_name=_("vendor")
    )
    name = models.CharField(_("name"), max_length=200)
    country = models.CharField(_("country"), max_length=100)
    service = models.CharField(
        _("service provided"),
        max_length=300,
        help_text=_("What it does for the vendor, e.g. 'data-centre colocation'."),
    )
    handles_data = models.BooleanField(
        _("handles the organisation's data"),
        default=False,
        help_text=_("Whether it stores, processes or can reach the data sent to the vendor."),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["vendor_id", "name", "pk"]
        verbose_name = _("sub-processor")
        verbose_name_plural = _("sub-processors")

    def __str__(self) -> str:
        return self.name


class CertificationKind(models.TextChoices):
    ISO_27001 = "iso_27001", "ISO/IEC 27001"
    SOC2_TYPE2 = "soc2_type2", "SOC 2 Type II"
    SOC1 = "soc1", "SOC 1"
    ISO_27701 = "iso_27701", "ISO/IEC 27701"
    CSA_STAR = "csa_star", "CSA STAR"
    PCI_DSS = "pci_dss", "PCI DSS"
    OTHER = "other", _("Other")


class Certification(TrackedModel):
    """A certificate or audit report the vendor holds, with its validity period and,
    optionally, the report itself stored with its SHA-256."""

    vendor = models.ForeignKey(
        Vendor, on_delete=models.CASCADE, related_name="certifications", verbose_name=_("vendor")
    )
    kind = models.CharField(_("kind"), max_length=20, choices=CertificationKind.choices)
    issuer = models.CharField(
        _("issuer"), max_length=200, help_text=_("The certification body or audit firm.")
    )
    scope = models.CharField(_("scope"), max_length=500, blank=True)
    issued_on = models.DateField(_("issued on"))
    expires_on = models.DateField(_("expires on"))
    report_name = models.CharField(_("report file"), max_length=200, blank=True)
    report_sha256 = models.CharField(_("report SHA-256"), max_length=64, blank=True)
    report_size_bytes = models.PositiveBigIntegerField(
        _("report size (bytes)"), null=True, blank=True
    )
    report_storage_name = models.CharField(_("report stored as"), max_length=300, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["vendor_id", "expires_on", "pk"]
        verbose_name = _("certification")
        verbose_name_plural = _("certifications")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(expires_on__gt=models.F("issued_on")),
                name="vendors_certification_expires_after_issue",
                violation_error_message=_("A certification expires after it is issued."),
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.issuer})"

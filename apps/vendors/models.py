"""Vendors: the providers that make offers."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.bounds import TEXT_MAX_LENGTH
from apps.core.models import TrackedModel


class Vendor(TrackedModel):
    """A compute provider, independent of any case."""

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

"""The whole-case layer's own record: a vendor's recurring reassessment
(docs/rules/reassessment.md).

A reassessment is about a vendor, not one case: it re-sends the portal to the vendor's
contact for one of its chosen offers, issues a harness credential to run the acceptance
again against the pinned baseline, and when it lapses it stands as a finding on every
open case with an offer from that vendor. It reads the portal, the evidence, the
acceptance, the approvals and the vendors, so it lives in the layer that may read them all.
"""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import TrackedModel


class ReassessmentState(models.TextChoices):
    DUE = "due", _("Due")
    STARTED = "started", _("Started")
    COMPLETED = "completed", _("Completed")
    LAPSED = "lapsed", _("Lapsed")


class Reassessment(TrackedModel):
    """One reassessment of a vendor, from the day it started until it completed.

    A record exists from the day the reassessment starts (on its due day, by the schedule,
    or earlier by hand); the next one's due day is worked out from the last one, so it is
    never stored ahead. Lapsing is read from the dates (``started_at`` plus the grace), so
    the finding stands on the day it lapses whether or not the schedule ran; ``lapsed_at``
    only records when the schedule told the owners.
    """

    # Its finding stands on every case of the vendor, not only on the offer's case its
    # keys name: a write to it makes every case's stored standing due again.
    standing_reaches_every_case = True

    vendor = models.ForeignKey(
        "vendors.Vendor",
        on_delete=models.PROTECT,
        related_name="reassessments",
        verbose_name=_("vendor"),
    )
    # The chosen offer whose portal and acceptance are run again, and its case.
    offer = models.ForeignKey(
        "offers.Offer",
        on_delete=models.PROTECT,
        related_name="reassessments",
        verbose_name=_("offer"),
    )
    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="reassessments",
        verbose_name=_("case"),
    )
    due_on = models.DateField(_("due on"))
    # The vendor's tier and review cycle when it started: a later change moves the next one.
    tier = models.CharField(_("tier"), max_length=10)
    cycle_months = models.PositiveSmallIntegerField(
        _("review cycle (months)"), validators=[MinValueValidator(1), MaxValueValidator(60)]
    )
    started_at = models.DateTimeField(_("started at"))
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("started by hand by"),
    )
    invitation = models.ForeignKey(
        "portal.VendorInvitation",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("portal invitation"),
    )
    # The portal sections the vendor answers again: those it answered before.
    sections = models.JSONField(_("portal sections"), default=list, blank=True)
    harness_token = models.ForeignKey(
        "evidence.HarnessToken",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("harness token"),
    )
    baseline = models.ForeignKey(
        "evidence.Baseline",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("pinned baseline"),
    )
    verification = models.ForeignKey(
        "evidence.SpecVerification",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("passing verification"),
    )
    completed_at = models.DateTimeField(_("completed at"), null=True, blank=True)
    lapsed_at = models.DateTimeField(_("lapse recorded at"), null=True, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-started_at", "-pk"]
        verbose_name = _("vendor reassessment")
        verbose_name_plural = _("vendor reassessments")
        permissions = [("start_reassessment", _("Can start a vendor reassessment early"))]
        constraints = [
            # One open reassessment per vendor: two schedulers at once start it once.
            models.UniqueConstraint(
                fields=["vendor"],
                condition=Q(completed_at__isnull=True),
                name="casework_reassessment_one_open_per_vendor",
            ),
            models.UniqueConstraint(
                fields=["vendor", "due_on"], name="casework_reassessment_one_per_due_day"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.vendor} ({self.due_on:%Y-%m-%d})"

"""Signed audit packets (DESIGN §2.9): the request that tracks one, and the issued PDF."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import TrackedModel

NUMBER_PREFIX = "DIL"


def packet_number(year: int, sequence: int) -> str:
    """The printed packet number, e.g. ``DIL-2026-000001``: sequential per organisation and year."""
    return f"{NUMBER_PREFIX}-{year}-{sequence:06d}"


class PacketRequest(TrackedModel):
    """One request to issue a packet: reserves its number and tracks the task's progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        FAILED = "failed", _("Failed")
        DONE = "done", _("Done")

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="packet_requests",
        verbose_name=_("case"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("requested by"),
    )
    organisation = models.CharField(_("organisation"), max_length=200)
    year = models.PositiveSmallIntegerField(_("year"))
    sequence = models.PositiveIntegerField(_("sequence"))
    number = models.CharField(_("packet number"), max_length=40)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.QUEUED
    )
    progress_pct = models.PositiveSmallIntegerField(
        _("progress (%)"), default=0, validators=[MaxValueValidator(100)]
    )
    step = models.CharField(_("step"), max_length=200, blank=True)
    # Each chapter as it is laid out: [{"title": …, "pages": n or null}, …]; null
    # before the layout starts (and for requests made before chapters were reported).
    chapters = models.JSONField(_("chapters"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    # The language the packet is written in; null for requests made before packets
    # could be issued in another language than the default (they are in English).
    language = models.CharField(
        _("language"), max_length=10, choices=settings.LANGUAGES, null=True, blank=True
    )
    history = HistoricalRecords()
    late_history_columns = ("chapters", "language")

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("packet request")
        verbose_name_plural = _("packet requests")
        constraints = [
            # A failed request keeps its number, so a gap in the sequence is explained.
            models.UniqueConstraint(
                fields=["organisation", "year", "sequence"], name="packetrequest_sequence"
            ),
            models.UniqueConstraint(fields=["organisation", "number"], name="packetrequest_number"),
        ]

    def __str__(self) -> str:
        return f"{self.number} ({self.get_status_display()})"

    @property
    def language_code(self) -> str:
        return self.language or settings.LANGUAGE_CODE

    @property
    def finished(self) -> bool:
        return self.status in {self.Status.DONE, self.Status.FAILED}

    @property
    def chapters_laid_out(self) -> int:
        return sum(1 for chapter in self.chapters or [] if chapter.get("pages") is not None)


class IssuedPacketError(Exception):
    """An issued packet is immutable: it is never changed, regenerated or deleted."""


class AuditPacket(TrackedModel):
    """An issued, signed PDF packet; stored once with its digest and never changed."""

    request = models.OneToOneField(
        PacketRequest,
        on_delete=models.PROTECT,
        related_name="packet",
        verbose_name=_("request"),
    )
    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="audit_packets",
        verbose_name=_("case"),
    )
    organisation = models.CharField(_("organisation"), max_length=200)
    number = models.CharField(_("packet number"), max_length=40)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("issued by"),
    )
    file = models.FileField(_("file"), max_length=300)
    sha256 = models.CharField(_("SHA-256"), max_length=64, unique=True)
    size_bytes = models.PositiveBigIntegerField(_("size (bytes)"))
    page_count = models.PositiveIntegerField(_("pages"))
    manifest_sha256 = models.CharField(_("manifest SHA-256"), max_length=64)
    signer_subject = models.CharField(_("signer"), max_length=500)
    signer_certificate_sha256 = models.CharField(_("signer certificate SHA-256"), max_length=64)
    signer_certificate_pem = models.TextField(_("signer certificate (PEM)"))
    signed_at = models.DateTimeField(_("signed at"))
    history = HistoricalRecords()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("audit packet")
        verbose_name_plural = _("audit packets")
        constraints = [
            models.UniqueConstraint(fields=["organisation", "number"], name="auditpacket_number"),
        ]

    def __str__(self) -> str:
        return self.number

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise IssuedPacketError(f"Packet {self.number} is issued and cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise IssuedPacketError(f"Packet {self.number} is issued and cannot be deleted.")

    def clean(self) -> None:
        if self.request_id and self.number and self.request.number != self.number:
            raise ValidationError({"number": _("The number must be the one its request reserved.")})

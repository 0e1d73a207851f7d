"""Shared models: the tracked base, the stored-file base, and the alarm any app raises
on a changed stored file.

No domain rules live here."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords


class TrackedModel(models.Model):
    """Base for every regulated record: timestamps and an edit version.

    ``version`` is bumped by every tracked write; a save that names an older
    version is refused, so a concurrent edit is never silently overwritten.
    """

    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)
    version = models.PositiveIntegerField(_("version"), default=1, editable=False)

    class Meta:
        abstract = True


class StoredFileRecord(models.Model):
    """Base for a record that keeps a file byte for byte: where it is stored, its size,
    and the SHA-256 recorded when it was stored, which every read checks
    (``apps.core.downloads``).

    A record whose column differs (unique, or named otherwise in its table) declares
    its own in place of the one here, or ``None`` where it has none.
    """

    sha256 = models.CharField(_("SHA-256"), max_length=64)
    size_bytes = models.PositiveBigIntegerField(_("size (bytes)"))
    storage_name = models.CharField(_("stored as"), max_length=300)

    class Meta:
        abstract = True


class FileIntegrityAlarm(TrackedModel):
    """A stored file found changed on disk: its bytes no longer hash to the digest recorded."""

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="file_integrity_alarms",
        verbose_name=_("case"),
    )
    record = models.CharField(_("record"), max_length=300)
    storage_name = models.CharField(_("stored as"), max_length=300)
    expected_sha256 = models.CharField(_("recorded SHA-256"), max_length=64, blank=True)
    found_sha256 = models.CharField(_("SHA-256 found"), max_length=64)
    detected_at = models.DateTimeField(_("detected at"))
    resolved_at = models.DateTimeField(_("resolved at"), null=True, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-detected_at", "-pk"]
        verbose_name = _("file integrity alarm")
        verbose_name_plural = _("file integrity alarms")
        indexes = [models.Index(fields=["case", "resolved_at"], name="core_alarm_case_open")]

    def __str__(self) -> str:
        return f"{self.record}: {self.found_sha256[:12]}… ≠ {self.expected_sha256[:12]}…"

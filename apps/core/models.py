"""Shared models: the tracked base, the stored-file base, the alarm any app raises
on a changed stored file, and how people and other systems are told of events.

No domain rules live here."""

import secrets

from django.conf import settings
from django.core.validators import URLValidator
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


# --- Notifications (apps.core.notifications) --------------------------------------------
# What a person chooses and what they were told: not regulated records, so no history.


class NotificationEvent(models.TextChoices):
    """What happened on a case that someone's role acts on."""

    VENDOR_ANSWERS_SUBMITTED = "vendor_answers_submitted", _("A vendor sent answers")
    FINDING_OPENED = "finding_opened", _("A finding is open again")
    FINDING_ACCEPTED = "finding_accepted", _("A finding was accepted")
    DECISION = "decision", _("An approval was decided")
    PACKET_ISSUED = "packet_issued", _("A packet was issued")
    ASSIGNMENT = "assignment", _("Work was assigned to you")
    MENTION = "mention", _("Someone mentioned you in a comment")
    DUE_SOON = "due_soon", _("Work assigned to you is due soon")
    OVERDUE = "overdue", _("Work assigned to you is overdue")
    REASSESSMENT_STARTED = "reassessment_started", _("A vendor's reassessment started")
    REASSESSMENT_LAPSED = "reassessment_lapsed", _("A vendor's reassessment lapsed")


class EmailChoice(models.TextChoices):
    IMMEDIATE = "immediate", _("At once: one e-mail for each event")
    DIGEST = "digest", _("Once a day: one e-mail with everything since the last")
    OFF = "off", _("Not at all")


class NotificationPreference(models.Model):
    """How one person hears by e-mail of the events their role acts on."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notification_preference",
        verbose_name=_("person"),
    )
    email = models.CharField(
        _("e-mail me about events on cases"),
        max_length=10,
        choices=EmailChoice.choices,
        default=EmailChoice.IMMEDIATE,
    )

    class Meta:
        verbose_name = _("notification preference")
        verbose_name_plural = _("notification preferences")

    def __str__(self) -> str:
        return str(self.user)


class Notification(models.Model):
    """One event told to one person: e-mailed at once, or waiting for their daily digest."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notifications",
        verbose_name=_("person"),
    )
    event = models.CharField(_("event"), max_length=40, choices=NotificationEvent.choices)
    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("case"),
    )
    summary = models.TextField(_("summary"))
    path = models.CharField(_("link"), max_length=500)
    occurred_at = models.DateTimeField(_("occurred at"))
    delivery = models.CharField(
        _("sent"),
        max_length=10,
        choices=[
            (EmailChoice.IMMEDIATE, EmailChoice.IMMEDIATE.label),
            (EmailChoice.DIGEST, EmailChoice.DIGEST.label),
        ],
    )
    emailed_at = models.DateTimeField(_("e-mailed at"), null=True, blank=True)

    class Meta:
        ordering = ["occurred_at", "pk"]
        verbose_name = _("notification")
        verbose_name_plural = _("notifications")
        indexes = [
            models.Index(fields=["delivery", "emailed_at"], name="core_notification_waiting")
        ]

    def __str__(self) -> str:
        return f"{self.recipient}: {self.summary}"


def webhook_secret() -> str:
    return secrets.token_urlsafe(32)


class Webhook(models.Model):
    """An address outside Diligence (a chat channel's incoming webhook, an integration) told
    of the events it subscribes to; managed by administrators in the admin."""

    name = models.CharField(_("name"), max_length=100)
    url = models.URLField(
        _("address"),
        max_length=500,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text=_("Where events are posted as JSON, e.g. a Slack or Teams incoming webhook."),
    )
    secret = models.CharField(
        _("signing secret"),
        max_length=200,
        default=webhook_secret,
        help_text=_(
            "Each delivery is signed with it (HMAC-SHA256, header X-Diligence-Signature): "
            "give it to the receiver so that it can check a delivery came from here."
        ),
    )
    events = models.JSONField(_("events"), default=list, blank=True)
    active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]
        verbose_name = _("webhook")
        verbose_name_plural = _("webhooks")

    def __str__(self) -> str:
        return self.name


class WebhookDelivery(models.Model):
    """One attempt at posting one event to a webhook, with the receiver's answer."""

    webhook = models.ForeignKey(
        Webhook, on_delete=models.CASCADE, related_name="deliveries", verbose_name=_("webhook")
    )
    delivery = models.UUIDField(
        _("delivery"), help_text=_("The same for every attempt at one event.")
    )
    event = models.CharField(_("event"), max_length=40, choices=NotificationEvent.choices)
    attempt = models.PositiveSmallIntegerField(_("attempt"))
    body = models.TextField(_("body sent"))
    attempted_at = models.DateTimeField(_("attempted at"))
    status_code = models.PositiveSmallIntegerField(_("answer"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    delivered = models.BooleanField(_("delivered"), default=False)
    retry_at = models.DateTimeField(_("next attempt"), null=True, blank=True)

    class Meta:
        ordering = ["-attempted_at", "-pk"]
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        constraints = [
            models.UniqueConstraint(
                fields=["delivery", "attempt"], name="core_webhook_one_row_per_attempt"
            )
        ]

    def __str__(self) -> str:
        return f"{self.webhook} #{self.attempt} {self.event}"

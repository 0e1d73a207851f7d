"""The tamper-evidence chain over every history row (docs/rules/audit.md#audit-trail).

These tables are not themselves history-tracked: they *are* the evidence about
history. ``ChainEntry`` is append-only (on PostgreSQL a trigger refuses UPDATE
and DELETE); ``ChainHead`` is the one row writers lock to take the next place
in the chain; ``ChainVerification`` records each run of the verifier, so pages
can show the last result without re-walking the whole chain.
"""

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils.translation import gettext_lazy as _

GENESIS_HASH = "0" * 64


class ChainHead(models.Model):
    """The last link of the chain: locked by every writer so links are taken one at a time."""

    seq = models.BigIntegerField(_("sequence"), default=0)
    entry_hash = models.CharField(_("entry hash"), max_length=64, default=GENESIS_HASH)

    class Meta:
        verbose_name = _("chain head")
        verbose_name_plural = _("chain heads")

    def __str__(self) -> str:
        return f"#{self.seq} {self.entry_hash[:12]}"


class ChainEntry(models.Model):
    """One history row's place in the chain: its digest and the hash linking it to the previous."""

    seq = models.BigIntegerField(_("sequence"), unique=True)
    content_type = models.ForeignKey(
        ContentType, on_delete=models.PROTECT, related_name="+", verbose_name=_("history table")
    )
    history_id = models.BigIntegerField(_("history row"))
    row_digest = models.CharField(_("row digest"), max_length=64)
    prev_hash = models.CharField(_("previous hash"), max_length=64)
    entry_hash = models.CharField(_("entry hash"), max_length=64)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        verbose_name = _("chain entry")
        verbose_name_plural = _("chain entries")
        constraints = [
            models.UniqueConstraint(
                fields=["content_type", "history_id"], name="chainentry_one_per_history_row"
            )
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.entry_hash[:12]}"


class ChainVerification(models.Model):
    """One run of the chain verifier and what it found."""

    started_at = models.DateTimeField(_("started at"))
    finished_at = models.DateTimeField(_("finished at"))
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("requested by"),
    )
    intact = models.BooleanField(_("intact"))
    rows_checked = models.PositiveBigIntegerField(_("rows checked"))
    head_seq = models.BigIntegerField(_("head sequence"))
    head_hash = models.CharField(_("head hash"), max_length=64)
    problem_count = models.PositiveIntegerField(_("problems found"), default=0)
    first_problem = models.JSONField(_("first problem"), null=True, blank=True)

    class Meta:
        ordering = ["-finished_at", "-pk"]
        get_latest_by = "finished_at"
        verbose_name = _("chain verification")
        verbose_name_plural = _("chain verifications")
        permissions = [
            ("verify_chain", _("Can run the audit chain verification")),
            ("export_case", _("Can export a case for auditors")),
        ]

    def __str__(self) -> str:
        return f"{'intact' if self.intact else 'BROKEN'} at #{self.head_seq}"

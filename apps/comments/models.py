"""Comments on a case's records, and the people they mention.

A comment is a tracked record: it joins the case's history, its timeline and
its export like any other. It is never edited or deleted; a correction is a
new comment. Only comments marked "for the record" go into the signed packet.
"""

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from apps.core.models import TrackedModel

BODY_MAX_LENGTH = 5000


class Comment(TrackedModel):
    """What one person said about one record of a case."""

    case = models.ForeignKey(
        "cases.ProcurementCase",
        on_delete=models.PROTECT,
        related_name="comments",
        verbose_name=_("case"),
    )
    target_type = models.ForeignKey(
        ContentType, on_delete=models.PROTECT, related_name="+", verbose_name=_("record type")
    )
    target_id = models.PositiveBigIntegerField(_("record"))
    target = GenericForeignKey("target_type", "target_id")
    # The record as it was named when the comment was made: the timeline, the export
    # and the packet name it without reading the record again.
    title = models.CharField(_("on"), max_length=300)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("author"),
    )
    body = models.TextField(_("comment"), max_length=BODY_MAX_LENGTH)
    for_the_record = models.BooleanField(
        _("for the record"),
        default=False,
        help_text=_("Comments for the record are printed in the signed audit packet."),
    )
    history = HistoricalRecords()
    # The timeline shows what a comment said, not only that one was added.
    shown_when_created = ("body", "for_the_record")

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name = _("comment")
        verbose_name_plural = _("comments")
        indexes = [models.Index(fields=["target_type", "target_id", "created_at"])]

    def __str__(self) -> str:
        return self.title

    @classmethod
    def in_packet(cls, history):
        """Of the comments' history, the rows the signed packet carries: those of comments
        put on the record."""
        return history.filter(id__in=cls.objects.filter(for_the_record=True).values("pk"))


class Mention(models.Model):
    """A person named in a comment: told by e-mail, and on their work list until they
    mark it read (what a person has read is not a regulated record: no history)."""

    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="mentions")
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mentions"
    )
    read_at = models.DateTimeField(_("read at"), null=True, blank=True)

    class Meta:
        verbose_name = _("mention")
        verbose_name_plural = _("mentions")
        constraints = [
            models.UniqueConstraint(fields=["comment", "person"], name="one_mention_per_person")
        ]
        indexes = [models.Index(fields=["person", "read_at"])]

    def __str__(self) -> str:
        return f"{self.person} — {self.comment}"

"""Shared abstract models. No domain rules live here."""

from django.db import models
from django.utils.translation import gettext_lazy as _


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

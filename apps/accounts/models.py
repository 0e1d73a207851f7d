"""What a person chooses for themselves (not a regulated record: no history)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class WorkPreferences(models.Model):
    """How a person hears of what waits for them."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="work_preferences"
    )
    daily_digest = models.BooleanField(
        _("daily e-mail digest"),
        default=True,
        help_text=_("Each morning, one e-mail listing what waits for you, overdue first."),
    )

    class Meta:
        verbose_name = _("work preferences")
        verbose_name_plural = _("work preferences")

    def __str__(self) -> str:
        return str(self.user)

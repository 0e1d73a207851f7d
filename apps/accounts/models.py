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


class ExternalIdentity(models.Model):
    """A person's account at the organisation's sign-in provider, linked to their account
    here: single sign-on finds a person by the provider (``iss``) and the account's
    unchanging identifier there (``sub``), never by a name or an e-mail address, which
    another account of the provider may also carry."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="external_identities",
        verbose_name=_("user"),
    )
    issuer = models.CharField(_("provider"), max_length=255)
    subject = models.CharField(_("account at the provider"), max_length=255)
    linked_at = models.DateTimeField(_("linked"), auto_now_add=True)
    last_sign_in_at = models.DateTimeField(_("last sign-in"), null=True, blank=True)

    class Meta:
        verbose_name = _("single sign-on identity")
        verbose_name_plural = _("single sign-on identities")
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="accounts_one_link_per_provider_account"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject} @ {self.issuer}"

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


# --- Administration (apps.accounts.people, apps.accounts.scim) ----------------------------
# People's accounts are Django's users; what the administrators do to them is kept here:
# invitations, the tokens an identity provider provisions with, and the log of each change.


class AccountInvitation(models.Model):
    """An invitation to set a password: its link's secret is e-mailed and forgotten, only
    its digest is kept. Used once, before it expires."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="account_invitations",
        verbose_name=_("person"),
    )
    email = models.EmailField(_("e-mail address"))
    link_digest = models.CharField(_("link SHA-256"), max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("invited by"),
    )
    created_at = models.DateTimeField(_("sent"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expires"))
    used_at = models.DateTimeField(_("used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("withdrawn"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("account invitation")
        verbose_name_plural = _("account invitations")

    def __str__(self) -> str:
        return self.email

    def state(self, now=None) -> str:
        from django.utils import timezone

        if self.used_at is not None:
            return "used"
        if self.revoked_at is not None:
            return "withdrawn"
        if self.expires_at <= (now or timezone.now()):
            return "expired"
        return "open"


class ProvisioningToken(models.Model):
    """A bearer token an identity provider uses for SCIM provisioning; stored hashed."""

    label = models.CharField(_("label"), max_length=200)
    token_hash = models.CharField(_("token SHA-256"), max_length=64, unique=True, editable=False)
    prefix = models.CharField(_("prefix"), max_length=16, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("provisioning token")
        verbose_name_plural = _("provisioning tokens")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.label})"


class AccountEvent(models.Model):
    """One change to a person's account, by an administrator or the identity provider:
    the account's history. Written once, never edited."""

    class Kind(models.TextChoices):
        INVITED = "invited", _("Invited")
        PASSWORD_SET = "password_set", _("Password set from an invitation")
        INVITATION_WITHDRAWN = "invitation_withdrawn", _("Invitation withdrawn")
        ROLES = "roles", _("Roles changed")
        DEACTIVATED = "deactivated", _("Deactivated")
        REACTIVATED = "reactivated", _("Reactivated")
        CREATED = "created", _("Created")
        DETAILS = "details", _("Name or e-mail changed")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="account_events",
        verbose_name=_("person"),
    )
    kind = models.CharField(_("change"), max_length=30, choices=Kind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("by"),
    )
    # Who acted when no person did: the provisioning token's label.
    via = models.CharField(_("through"), max_length=200, blank=True)
    detail = models.CharField(_("detail"), max_length=500, blank=True)
    at = models.DateTimeField(_("when"), auto_now_add=True)

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name = _("account change")
        verbose_name_plural = _("account changes")

    def __str__(self) -> str:
        return f"{self.user}: {self.get_kind_display()}"

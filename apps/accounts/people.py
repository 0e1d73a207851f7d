"""Administering people: who holds which role, invitations, deactivation, and the tokens an
identity provider provisions with (SCIM, ``apps.accounts.scim``).

Each write is one transaction and leaves one ``AccountEvent``: the account's history.
Two rules hold whoever acts (an administrator on the People page, or the provider):

- an administrator never deactivates their own account;
- the last active administrator is never deactivated, nor loses the role.

Deactivating ends the person's sessions at once, deletes their personal API token and
tells the other apps (``apps.core.signals.account_deactivated``), which revoke what they
issued to that person (harness tokens).
"""

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group, User
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.authtoken.models import Token

from apps.accounts.models import AccountEvent, AccountInvitation, ProvisioningToken
from apps.core.roles import Role
from apps.core.services import StateConflict
from apps.core.signals import account_deactivated

logger = logging.getLogger(__name__)

MAX_INVITATION_DAYS = 30
PROVISIONING_PREFIX = "dlp_"


class EmailNotSent(Exception):
    """The invitation's e-mail could not be handed to the mail server."""


class InvitationInvalid(Exception):
    """The link names no invitation, or one that is used, withdrawn or expired."""

    def __init__(self, message: str, status: int = 410):
        super().__init__(message)
        self.message = message
        self.status = status


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


# --- Reading --------------------------------------------------------------------------


def people(*, role: str = "", active: str = "") -> QuerySet[User]:
    """Everyone, with their role groups and whether they have an authenticator; only the
    holders of ``role`` if given (a superuser holds the administrator's), and only the
    active (``"yes"``) or the deactivated (``"no"``) if asked."""
    users = (
        get_user_model()
        .objects.annotate(
            has_authenticator=Exists(TOTPDevice.objects.filter(user=OuterRef("pk"), confirmed=True))
        )
        .prefetch_related(
            Prefetch("groups", queryset=Group.objects.filter(name__in=Role.values).order_by("name"))
        )
        .order_by("username")
    )
    if role == Role.ADMIN:
        users = users.filter(Q(groups__name=role) | Q(is_superuser=True)).distinct()
    elif role:
        users = users.filter(groups__name=role)
    if active == "yes":
        users = users.filter(is_active=True)
    elif active == "no":
        users = users.filter(is_active=False)
    return users


def has_authenticator(user: User) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def roles_held(user: User) -> list[str]:
    """The role keys of ``user``'s groups, in the order of ``Role`` (a superuser's
    administrator role included)."""
    names = {group.name for group in user.groups.all()}
    if user.is_superuser:
        names.add(Role.ADMIN)
    return [role for role in Role.values if role in names]


def _administrators() -> Q:
    return Q(is_active=True) & (Q(groups__name=Role.ADMIN) | Q(is_superuser=True))


def _other_active_administrators(user: User) -> int:
    """Locks every active administrator's row, then counts those who are not ``user``: two
    administrators removing each other at once are answered one after the other."""
    model = get_user_model()
    ids = set(model.objects.filter(_administrators()).values_list("pk", flat=True))
    list(model.objects.select_for_update().filter(pk__in=ids).values_list("pk", flat=True))
    ids = set(model.objects.filter(_administrators()).values_list("pk", flat=True))
    return len(ids - {user.pk})


def _is_administrator(user: User) -> bool:
    return user.is_superuser or user.groups.filter(name=Role.ADMIN).exists()


def _record(user: User, kind: str, *, actor: User | None, via: str = "", detail: str = ""):
    return AccountEvent.objects.create(
        user=user, kind=kind, actor=actor, via=via[:200], detail=detail[:500]
    )


def _role_list(roles) -> str:
    return ", ".join(str(Role(role).label) for role in Role.values if role in roles) or _("none")


# --- Roles ----------------------------------------------------------------------------


def roles_set(
    *, actor: User | None, user: User, roles, reason: str = "", via: str = ""
) -> list[str]:
    """Give ``user`` exactly ``roles`` (role keys); their other groups stay. Refused if it
    takes the administrator's role from the last active administrator."""
    wanted = set(roles)
    unknown = wanted - set(Role.values)
    if unknown:
        raise ValidationError({"roles": _("No such role: %s") % ", ".join(sorted(unknown))})
    if actor is not None and not (reason or "").strip():
        raise ValidationError({"reason": _("Say why the roles change.")})
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=user.pk)
        before = set(user.groups.filter(name__in=Role.values).values_list("name", flat=True))
        if before == wanted:
            return sorted(wanted)
        losing_admin = Role.ADMIN in before and Role.ADMIN not in wanted and not user.is_superuser
        if losing_admin and user.is_active and _other_active_administrators(user) == 0:
            raise StateConflict(
                _("%(name)s is the last active administrator: give the role to someone else first.")
                % {"name": user.get_username()}
            )
        groups = {group.name: group for group in Group.objects.filter(name__in=Role.values)}
        user.groups.remove(*[groups[name] for name in before - wanted if name in groups])
        user.groups.add(*[groups[name] for name in wanted - before])
        detail = _("%(before)s → %(after)s") % {
            "before": _role_list(before),
            "after": _role_list(wanted),
        }
        if reason:
            detail += f". {reason.strip()}"
        _record(user, AccountEvent.Kind.ROLES, actor=actor, via=via, detail=detail)
    return sorted(wanted)


def role_members_change(*, user: User, role: str, add: bool, via: str) -> None:
    """Add ``user`` to one role's group, or take them out of it (the provider's group
    membership); the same rules as ``roles_set``."""
    current = set(user.groups.filter(name__in=Role.values).values_list("name", flat=True))
    wanted = current | {role} if add else current - {role}
    roles_set(actor=None, user=user, roles=wanted, via=via)


# --- Deactivating ----------------------------------------------------------------------


def end_sessions(user: User) -> int:
    """Delete every stored session signed in as ``user``; how many."""
    ended = 0
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk):
            session.delete()
            ended += 1
    return ended


def deactivate(*, actor: User | None, user: User, reason: str = "", via: str = "") -> User:
    """Switch ``user``'s account off: they cannot sign in, their sessions end now, their
    API token is deleted and what other apps issued to them is revoked."""
    if actor is not None and actor.pk == user.pk:
        raise ValidationError(_("You cannot deactivate your own account."))
    if actor is not None and not (reason or "").strip():
        raise ValidationError({"reason": _("Say why the account is deactivated.")})
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=user.pk)
        if not user.is_active:
            raise StateConflict(_("This account is already deactivated."))
        if _is_administrator(user) and _other_active_administrators(user) == 0:
            raise StateConflict(
                _("%(name)s is the last active administrator and cannot be deactivated.")
                % {"name": user.get_username()}
            )
        user.is_active = False
        user.save(update_fields=["is_active"])
        sessions = end_sessions(user)
        tokens, _deleted = Token.objects.filter(user=user).delete()
        results = account_deactivated.send(
            sender=get_user_model(), user=user, actor=actor, reason=(reason or "").strip()
        )
        answers: list[Any] = [answer for _receiver, answer in results]
        revoked = sum(a for a in answers if isinstance(a, int))
        detail = _(
            "%(sessions)d session(s) ended, %(tokens)d API token(s) deleted, "
            "%(revoked)d harness token(s) revoked."
        ) % {"sessions": sessions, "tokens": tokens, "revoked": revoked}
        if reason:
            detail = f"{reason.strip()}. {detail}"
        _record(user, AccountEvent.Kind.DEACTIVATED, actor=actor, via=via, detail=detail)
    return user


def reactivate(*, actor: User | None, user: User, reason: str = "", via: str = "") -> User:
    if actor is not None and not (reason or "").strip():
        raise ValidationError({"reason": _("Say why the account is reactivated.")})
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=user.pk)
        if user.is_active:
            raise StateConflict(_("This account is already active."))
        user.is_active = True
        user.save(update_fields=["is_active"])
        _record(
            user, AccountEvent.Kind.REACTIVATED, actor=actor, via=via, detail=(reason or "").strip()
        )
    return user


# --- Invitations -----------------------------------------------------------------------


def email_taken(email: str, *, exclude_pk: int | None = None) -> bool:
    users = get_user_model().objects.filter(Q(email__iexact=email) | Q(username__iexact=email))
    if exclude_pk is not None:
        users = users.exclude(pk=exclude_pk)
    return users.exists()


def invite(
    *, actor: User, email: str, first_name: str, last_name: str, roles
) -> tuple[AccountInvitation, str]:
    """Make an account for ``email`` with ``roles`` and e-mail them a link to set their
    password; the invitation and the link's secret. Nothing is kept if the e-mail fails."""
    if not settings.LOCAL_PASSWORDS:
        raise ValidationError(
            _(
                "People sign in through single sign-on here, so there is no password to set: "
                "they get their account at their first sign-in, or from the identity "
                "provider through SCIM."
            )
        )
    email = email.strip().lower()
    if not email:
        raise ValidationError({"email": _("Enter the person's e-mail address.")})
    if email_taken(email):
        raise ValidationError({"email": _("An account with this e-mail address already exists.")})
    days = settings.ACCOUNT_INVITATION_DAYS
    if not 1 <= days <= MAX_INVITATION_DAYS:
        days = MAX_INVITATION_DAYS
    secret = secrets.token_urlsafe(32)
    with transaction.atomic():
        user = get_user_model().objects.create_user(
            username=email,
            email=email,
            first_name=first_name.strip()[:150],
            last_name=last_name.strip()[:150],
        )  # no usable password until the link sets one
        _record(user, AccountEvent.Kind.INVITED, actor=actor, detail=email)
        roles_set(actor=actor, user=user, roles=roles, reason=_("Invited"))
        invitation = AccountInvitation.objects.create(
            user=user,
            email=email,
            link_digest=digest(secret),
            invited_by=actor,
            expires_at=timezone.now() + timedelta(days=days),
        )
        _send_invitation(invitation, secret)
    return invitation, secret


def invitation_link(secret: str) -> str:
    return settings.SITE_URL + reverse("accounts:invitation", args=[secret])


def _send_invitation(invitation: AccountInvitation, secret: str) -> None:
    subject = _("You are invited to Diligence at %(organisation)s") % {
        "organisation": settings.ORGANISATION_NAME
    }
    body = render_to_string(
        "accounts/email/invited.txt",
        {
            "invitation": invitation,
            "name": invitation.user.get_full_name() or invitation.email,
            "inviter": invitation.invited_by.get_full_name() or invitation.invited_by.username,
            "organisation": settings.ORGANISATION_NAME,
            "roles": _role_list(roles_held(invitation.user)),
            "url": invitation_link(secret),
        },
    )
    try:
        send_mail(
            subject=subject[:200], message=body, from_email=None, recipient_list=[invitation.email]
        )
    except Exception as error:
        logger.warning("Could not e-mail the invitation of %s", invitation.email, exc_info=True)
        raise EmailNotSent(str(error)) from error


def invitation_of(secret: str, *, lock: bool = False) -> AccountInvitation:
    """The open invitation the link names; ``InvitationInvalid`` saying why if none is."""
    invitations = AccountInvitation.objects.select_related("user")
    if lock:
        invitations = invitations.select_for_update()
    invitation = invitations.filter(link_digest=digest(secret)).first()
    if invitation is None:
        raise InvitationInvalid(
            _("This link is not valid. Check that you copied the whole link from the e-mail."),
            status=404,
        )
    state = invitation.state()
    if state == "used":
        raise InvitationInvalid(
            _(
                "This link was already used to set a password: sign in with it, or ask an "
                "administrator for a new invitation."
            )
        )
    if state == "withdrawn":
        raise InvitationInvalid(_("This invitation was withdrawn. Ask an administrator."))
    if state == "expired":
        raise InvitationInvalid(
            _("This link has expired. Ask an administrator to invite you again.")
        )
    if not invitation.user.is_active:
        raise InvitationInvalid(_("This account is deactivated. Ask an administrator."))
    return invitation


def invitation_accept(*, secret: str, password: str) -> User:
    """Set the invitee's password from the link, once."""
    with transaction.atomic():
        invitation = invitation_of(secret, lock=True)
        user = invitation.user
        password_validation.validate_password(password, user)
        user.set_password(password)
        user.save(update_fields=["password"])
        invitation.used_at = timezone.now()
        invitation.save(update_fields=["used_at"])
        _record(user, AccountEvent.Kind.PASSWORD_SET, actor=user)
    return user


def invitation_withdraw(*, actor: User, invitation: AccountInvitation) -> AccountInvitation:
    with transaction.atomic():
        current = AccountInvitation.objects.select_for_update().get(pk=invitation.pk)
        if current.state() != "open":
            raise StateConflict(_("Only an open invitation can be withdrawn."))
        current.revoked_at = timezone.now()
        current.save(update_fields=["revoked_at"])
        _record(
            current.user, AccountEvent.Kind.INVITATION_WITHDRAWN, actor=actor, detail=current.email
        )
    return current


# --- Provisioning tokens ---------------------------------------------------------------


@dataclass(frozen=True)
class IssuedProvisioningToken:
    token: str
    record: ProvisioningToken


def provisioning_token_create(*, actor: User, label: str) -> IssuedProvisioningToken:
    label = (label or "").strip()
    if not label:
        raise ValidationError({"label": _("Name the identity provider this token is for.")})
    token = PROVISIONING_PREFIX + secrets.token_urlsafe(32)
    record = ProvisioningToken.objects.create(
        label=label[:200], token_hash=digest(token), prefix=token[:12], created_by=actor
    )
    return IssuedProvisioningToken(token=token, record=record)


def provisioning_token_revoke(*, actor: User, token: ProvisioningToken) -> ProvisioningToken:
    with transaction.atomic():
        current = ProvisioningToken.objects.select_for_update().get(pk=token.pk)
        if current.revoked_at is not None:
            raise StateConflict(_("This token is already revoked."))
        current.revoked_at = timezone.now()
        current.save(update_fields=["revoked_at"])
    return current


def provisioning_token_of(raw: str) -> ProvisioningToken | None:
    """The live token ``raw`` is, marked used now; None for any other."""
    if not raw.startswith(PROVISIONING_PREFIX):
        return None
    token = ProvisioningToken.objects.filter(
        token_hash=digest(raw), revoked_at__isnull=True
    ).first()
    if token is not None:
        # untracked: when the token was last used, bookkeeping of no one's decision
        ProvisioningToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token

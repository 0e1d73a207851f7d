"""Single sign-on through the organisation's OpenID Connect provider (mozilla-django-oidc).

The provider's group claim (``OIDC_GROUPS_CLAIM``) decides a person's roles through
``OIDC_ROLE_MAP`` ("their group=our role, ..."): a person none of whose groups is
mapped is refused, and no role is ever given without a mapping. A person signing in
for the first time is created and linked to their provider account (``iss`` and
``sub``), by which alone they are found again; at every sign-in their roles follow the
provider's groups again. No account here is ever taken over by a provider account that
carries its user name or e-mail address: that sign-in is refused and logged.

With ``LOCAL_PASSWORDS`` off, passwords sign in only the break-glass administrators
named in ``BREAK_GLASS_USERS``; everyone else signs in through the provider.
"""

import logging

import jwt
import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import Group
from django.contrib.auth.views import LoginView
from django.core.exceptions import PermissionDenied, SuspiciousOperation, ValidationError
from django.db import IntegrityError, transaction
from django.http import Http404, HttpResponse
from django.shortcuts import render, resolve_url
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from apps.accounts.models import ExternalIdentity
from apps.core.roles import Role

logger = logging.getLogger(__name__)


def role_map() -> dict[str, str]:
    """``OIDC_ROLE_MAP`` read: the provider's group → the role it gives."""
    mapping = {}
    for pair in settings.OIDC_ROLE_MAP:
        group, _sep, role = pair.partition("=")
        if role.strip() in Role.values and group.strip():
            mapping[group.strip()] = role.strip()
    return mapping


def roles_from_claims(claims: dict) -> set[str]:
    groups = claims.get(settings.OIDC_GROUPS_CLAIM) or []
    if isinstance(groups, str):
        groups = [groups]
    mapping = role_map()
    return {mapping[group] for group in groups if isinstance(group, str) and group in mapping}


def sso_username(claims: dict) -> str:
    """The user name a person is first created with: the provider's display name for
    them (or their identifier there). It names; it never finds anyone."""
    return str(claims.get("preferred_username") or claims.get("sub") or "")[:150]


def provider_account(claims: dict) -> tuple[str, str]:
    """The provider (``iss``) and the person's unchanging identifier there (``sub``)."""
    issuer, subject = claims.get("iss"), claims.get("sub")
    if not isinstance(issuer, str) or not isinstance(subject, str):
        return "", ""
    return issuer.strip(), subject.strip()


class RoleMappingOIDCBackend(OIDCAuthenticationBackend):
    """Signs in the provider's people with the roles their groups map to.

    A person is found by their provider account alone (``iss`` and ``sub``, kept in
    ``ExternalIdentity``). A provider account that is not linked yet gets a new account
    here, unless its user name or e-mail address is already another account's: that is
    refused (and logged), never merged, for the provider's display name and e-mail are
    not proof of being that person. An administrator links the two if they are one.
    """

    def get_userinfo(self, access_token, id_token, payload):
        # The user info endpoint's claims, with the ID token's provider and subject:
        # the response answers for the person of the ID token only if its own subject is
        # theirs (OpenID Connect Core 1.0, the UserInfo response).
        if settings.OIDC_OP_USER_ENDPOINT:
            claims = dict(super().get_userinfo(access_token, id_token, payload))
            if claims.get("sub") != payload.get("sub"):
                raise SuspiciousOperation("the user info answers for another subject")
        else:
            claims = dict(payload)
        claims["iss"] = payload.get("iss")
        claims["sub"] = payload.get("sub")
        return claims

    def verify_claims(self, claims) -> bool:
        issuer, subject = provider_account(claims)
        if not issuer or not subject or not sso_username(claims):
            logger.warning("Single sign-on refused: the provider named no account")
            return False
        if not roles_from_claims(claims):
            logger.warning(
                "Single sign-on refused %s at %s (%s): no mapped group",
                subject,
                issuer,
                sso_username(claims),
            )
            self._refuse(
                _(
                    "Your organisation's sign-in worked, but none of your groups gives a role "
                    "in Diligence. Ask an administrator to map your group to a role."
                )
            )
            return False
        return True

    def filter_users_by_claims(self, claims):
        issuer, subject = provider_account(claims)
        return get_user_model().objects.filter(
            external_identities__issuer=issuer, external_identities__subject=subject
        )

    def create_user(self, claims):
        issuer, subject = provider_account(claims)
        username = sso_username(claims)
        email = str(claims.get("email") or "")
        users = get_user_model().objects
        if users.filter(username__iexact=username).exists():
            return self._collision(claims, "user name", _name_taken_message(username))
        if email and users.filter(email__iexact=email).exists():
            return self._collision(claims, "e-mail address", _email_taken_message())
        try:
            with transaction.atomic():
                user = users.create_user(username=username, email=email)
                user.set_unusable_password()
                user.save(update_fields=["password"])
                ExternalIdentity.objects.create(
                    user=user, issuer=issuer, subject=subject, last_sign_in_at=timezone.now()
                )
        except IntegrityError:
            # The same name, or the same provider account, signing in at the same moment.
            return self._collision(claims, "user name", _name_taken_message(username))
        return self._update(user, claims)

    def update_user(self, user, claims):
        email = str(claims.get("email") or "")
        taken = get_user_model().objects.filter(email__iexact=email).exclude(pk=user.pk)
        if email and taken.exists():
            return self._collision(claims, "e-mail address", _email_taken_message())
        issuer, subject = provider_account(claims)
        identity = ExternalIdentity.objects.filter(issuer=issuer, subject=subject).first()
        if identity is not None:
            identity.last_sign_in_at = timezone.now()
            identity.save(update_fields=["last_sign_in_at"])
        return self._update(user, claims)

    def _update(self, user, claims):
        """The person's names, e-mail and roles, as the provider says at this sign-in (the
        user name stays the one they were created with)."""
        roles = roles_from_claims(claims)
        user.first_name = str(claims.get("given_name") or claims.get("name") or "")[:150]
        user.last_name = str(claims.get("family_name") or "")[:150]
        user.email = claims.get("email") or user.email
        user.is_staff = Role.ADMIN in roles
        user.save(update_fields=["first_name", "last_name", "email", "is_staff"])
        ours = Group.objects.filter(name__in=Role.values)
        user.groups.remove(*ours.exclude(name__in=roles))
        user.groups.add(*ours.filter(name__in=roles))
        return user

    def _collision(self, claims, what: str, message: str) -> None:
        issuer, subject = provider_account(claims)
        logger.warning(
            "Single sign-on refused %s at %s (%s): its %s belongs to another account here",
            subject,
            issuer,
            sso_username(claims),
            what,
        )
        self._refuse(message)
        return None

    def _refuse(self, message: str) -> None:
        if getattr(self, "request", None) is not None:
            messages.error(self.request, message)


def _name_taken_message(username: str) -> str:
    return _(
        "An account named %(name)s already exists here and is not linked to your sign-in. "
        "Nothing was changed: if it is yours, ask an administrator to link the two."
    ) % {"name": username}


def _email_taken_message() -> str:
    return _(
        "Another account here already uses your e-mail address. Nothing was changed: "
        "if it is yours, ask an administrator to link your sign-in to it."
    )


class LocalPasswordsOff:
    """Placed before the password backend: with ``LOCAL_PASSWORDS`` off, a password signs
    in no one but the break-glass administrators (raising stops Django's other backends).
    It loads no user and grants nothing: sessions stay with the backend that signed in."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if settings.LOCAL_PASSWORDS or username is None or password is None:
            return None
        if username in settings.BREAK_GLASS_USERS:
            return None
        raise PermissionDenied("local passwords are switched off")


class _Enabled(View):
    def dispatch(self, request, *args, **kwargs):
        if not settings.OIDC_ENABLED:
            raise Http404
        return super().dispatch(request, *args, **kwargs)


class SignInRequest(_Enabled, OIDCAuthenticationRequestView):
    """Sends the browser to the provider's sign-in page."""


class SignInCallback(_Enabled, OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back; a refusal returns to the sign-in page.

    A sign-in that cannot complete (the provider refuses the code, the state is not the
    one this browser was given, the provider's answer does not verify, or the provider
    cannot be reached) gets a page that says so, never a server error: 400, or 502 when
    the provider did not answer.
    """

    @property
    def failure_url(self) -> str:
        return resolve_url(settings.LOGIN_REDIRECT_URL_FAILURE)

    def get(self, request):
        if request.GET.get("error"):
            logger.warning("Single sign-on: the provider answered %s", request.GET["error"][:100])
            messages.error(request, _sign_in_failed_message())
        try:
            return super().get(request)
        except (requests.ConnectionError, requests.Timeout) as error:
            logger.warning("Single sign-on: the provider could not be reached: %s", error)
            return self._failed(
                _("%(name)s did not answer. Try again in a few minutes.")
                % {"name": settings.OIDC_PROVIDER_NAME},
                status=502,
            )
        except (SuspiciousOperation, requests.RequestException, jwt.PyJWTError) as error:
            logger.warning("Single sign-on refused at the callback: %s", error)
            return self._failed(_sign_in_failed_message(), status=400)

    def _failed(self, message: str, *, status: int) -> HttpResponse:
        return render(
            self.request,
            "accounts/sign_in_failed.html",
            {"message": message, "sso_name": settings.OIDC_PROVIDER_NAME},
            status=status,
        )


def _sign_in_failed_message() -> str:
    return _(
        "Signing in with %(name)s did not complete, and you are not signed in. "
        "Start again from the sign-in page; if it happens again, tell an administrator."
    ) % {"name": settings.OIDC_PROVIDER_NAME}


class SignInForm(AuthenticationForm):
    def clean(self):
        username = self.cleaned_data.get("username")
        if not settings.LOCAL_PASSWORDS and username not in settings.BREAK_GLASS_USERS:
            raise ValidationError(
                _("Passwords are switched off here: sign in with %(name)s.")
                % {"name": settings.OIDC_PROVIDER_NAME},
                code="local_passwords_off",
            )
        return super().clean()


class SignInView(LoginView):
    """Django's sign-in page, offering the organisation's sign-in where it is set up."""

    form_class = SignInForm

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["sso"] = settings.OIDC_ENABLED
        context["sso_name"] = settings.OIDC_PROVIDER_NAME
        context["local_passwords"] = settings.LOCAL_PASSWORDS
        return context

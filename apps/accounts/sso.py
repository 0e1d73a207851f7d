"""Single sign-on through the organisation's OpenID Connect provider (mozilla-django-oidc).

The provider's group claim (``OIDC_GROUPS_CLAIM``) decides a person's roles through
``OIDC_ROLE_MAP`` ("their group=our role, ..."): a person none of whose groups is
mapped is refused, and no role is ever given without a mapping. A person signing in
for the first time is created; at every sign-in their roles follow the provider's
groups again. An account that signs in with a local password is never taken over by
a provider's account of the same user name.

With ``LOCAL_PASSWORDS`` off, passwords sign in only the break-glass administrators
named in ``BREAK_GLASS_USERS``; everyone else signs in through the provider.
"""

import logging

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import Group
from django.contrib.auth.views import LoginView
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import resolve_url
from django.utils.translation import gettext as _
from django.views import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

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
    return str(claims.get("preferred_username") or claims.get("sub") or "")[:150]


class RoleMappingOIDCBackend(OIDCAuthenticationBackend):
    """Signs in the provider's people with the roles their groups map to."""

    def verify_claims(self, claims) -> bool:
        if not sso_username(claims):
            return False
        if not roles_from_claims(claims):
            logger.warning("Single sign-on refused %s: no mapped group", sso_username(claims))
            self._refuse(
                _(
                    "Your organisation's sign-in worked, but none of your groups gives a role "
                    "in Diligence. Ask an administrator to map your group to a role."
                )
            )
            return False
        return True

    def filter_users_by_claims(self, claims):
        # Only accounts the provider made: a password account is never taken over.
        return get_user_model().objects.filter(
            username=sso_username(claims), password__startswith=UNUSABLE_PASSWORD_PREFIX
        )

    def create_user(self, claims):
        if get_user_model().objects.filter(username=sso_username(claims)).exists():
            self._refuse(
                _(
                    "An account with your user name signs in with its password here; "
                    "ask an administrator to join the two."
                )
            )
            return None
        user = get_user_model().objects.create_user(
            username=sso_username(claims), email=claims.get("email") or ""
        )
        user.set_unusable_password()
        user.save(update_fields=["password"])
        return self.update_user(user, claims)

    def update_user(self, user, claims):
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

    def _refuse(self, message: str) -> None:
        if getattr(self, "request", None) is not None:
            messages.error(self.request, message)


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
    """Where the provider sends the browser back; a refusal returns to the sign-in page."""

    @property
    def failure_url(self) -> str:
        return resolve_url(settings.LOGIN_REDIRECT_URL_FAILURE)


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

"""Harness tokens on the API: ``Authorization: Token dlh_…`` on the evidence upload only.

A harness token is not a user. It authenticates as a principal with no
permissions (so every role-checked endpoint refuses it), and it is accepted
only by the upload endpoint; elsewhere the user-token authenticator does not
know it and answers 401. Tokens are stored as SHA-256 digests and looked up
by digest, so no stored secret is ever compared character by character.
"""

from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from apps.evidence.models import HarnessToken
from apps.evidence.services import TOKEN_PREFIX, token_hash


class HarnessPrincipal(AnonymousUser):
    """Who a harness upload acts as: no user, no permissions, one token."""

    def __init__(self, token: HarnessToken) -> None:
        super().__init__()
        self.token = token

    def __str__(self) -> str:
        return f"harness token {self.token.prefix}…"


class HarnessTokenAuthentication(BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if len(parts) != 2 or parts[0].lower() != self.keyword.lower().encode():
            return None
        try:
            key = parts[1].decode("ascii")
        except UnicodeError:
            return None
        if not key.startswith(TOKEN_PREFIX):
            return None  # a user's API token: the next authenticator decides
        token = (
            HarnessToken.objects.select_related("case", "offer__declared_spec")
            .filter(token_hash=token_hash(key))
            .first()
        )
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown harness token.")
        state = token.state(timezone.now())
        if state == "revoked":
            raise exceptions.PermissionDenied("This harness token was revoked.")
        if state == "expired":
            raise exceptions.PermissionDenied(
                f"This harness token expired at {token.expires_at:%Y-%m-%d %H:%M} UTC; "
                "ask for a new one."
            )
        return HarnessPrincipal(token), token

    def authenticate_header(self, request) -> str:
        return self.keyword


class HarnessTokenScheme(OpenApiAuthenticationExtension):
    target_class = "apps.evidence.authentication.HarnessTokenAuthentication"
    name = "harnessToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token dlh_…`: a harness token issued for one case; upload only.",
        }

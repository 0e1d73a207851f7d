"""The second factor a decision or a waiver asks for, where the organisation requires one.

A permission check for pages and API endpoints, like the role checks beside it: an
approval decision or a red-flag waiver made by a person whose role is in
``TWO_FACTOR_REQUIRED_ROLES`` (superusers and staff count as administrators), with a
session (or a personal API token) that did not pass the second factor, is refused by
:func:`require_second_factor`, the one check the pages and endpoints call. Signing in
with the second factor itself is the accounts app's (``apps.accounts.twofactor``).
"""

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.utils.translation import gettext as _

from apps.core.roles import Role, roles_of

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def required_roles() -> set[str]:
    return set(settings.TWO_FACTOR_REQUIRED_ROLES)


def is_required_for(user) -> bool:
    """Whether the organisation requires a second factor of this person (by role).

    A superuser, and anyone who may open the Django admin (staff), counts as an
    administrator here whatever their groups: an account made with ``createsuperuser``
    is in none, and must not slip past the administrators' requirement.

    Only of local accounts: a person who signs in through the organisation's provider
    (single sign-on; no password here) passes its own second factor there.
    """
    roles = required_roles()
    if not roles or user is None or not user.is_authenticated:
        return False
    if not user.has_usable_password():
        return False
    held = roles_of(user)
    if user.is_staff:
        held.add(Role.ADMIN)
    return bool(held & roles)


def is_verified(request) -> bool:
    """Whether this request's session passed the second factor.

    A request authenticated otherwise (a personal API token) never did.
    """
    verified = getattr(request.user, "is_verified", None)
    return bool(verified and verified())


def refusal_message() -> str:
    return _(
        "Your organisation requires two-factor sign-in for this: sign in with a code "
        "from your authenticator app (or a recovery code) and try again. Nothing was saved."
    )


class SecondFactorRequired(PermissionDenied):
    """403: the person's role requires a verified second factor, and this request has none."""


def require_second_factor(request) -> None:
    """Refuse (403) a decision or waiver the organisation requires a second factor for.

    The one check, called by the approval decision, red-flag waiver and finding
    acceptance pages and endpoints before anything is stored.
    """
    if is_required_for(request.user) and not is_verified(request):
        raise SecondFactorRequired(refusal_message())


def second_factor_for_writes(view: Callable) -> Callable:
    """A page whose POST records a decision or waiver: refused, with a 403 page that
    says why, where the organisation requires a second factor the session lacks."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method not in SAFE_METHODS and request.user.is_authenticated:
            try:
                require_second_factor(request)
            except SecondFactorRequired as refused:
                return render(
                    request,
                    "core/second_factor_refused.html",
                    {"message": str(refused)},
                    status=403,
                )
        return view(request, *args, **kwargs)

    return wrapped

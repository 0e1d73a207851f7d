"""Two-factor sign-in: a code from an authenticator app (TOTP), or a one-time recovery code.

django-otp keeps the devices (``otp_totp`` for the app, ``otp_static`` for the ten
recovery codes) and marks a session verified (``OTPMiddleware``,
``request.user.is_verified()``). What is added here is the organisation's policy:

- a person with a confirmed authenticator is asked for a code after the password,
  before any page (or API call made with the session) opens;
- a person whose role is in ``TWO_FACTOR_REQUIRED_ROLES`` and has no authenticator
  yet is sent to set one up first;
- an approval decision or a red-flag waiver made by such a person with a session
  (or a personal API token) that did not pass the second factor is refused, by
  :func:`require_second_factor`, the one check the pages and endpoints call.

Harness tokens are not people: they never reach the decision and waiver endpoints,
and the middleware does not see them (API authentication happens in the view).
"""

from collections.abc import Callable
from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django_otp.plugins.otp_totp.models import TOTPDevice

# The session remembers whether its person has an authenticator (set at sign-in and
# by the set-up page), so that pages cost no extra query.
HAS_DEVICE_SESSION_KEY = "two_factor_has_device"

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def required_roles() -> set[str]:
    return set(settings.TWO_FACTOR_REQUIRED_ROLES)


def is_required_for(user) -> bool:
    """Whether the organisation requires a second factor of this person (by role).

    Only of local accounts: a person who signs in through the organisation's provider
    (single sign-on; no password here) passes its own second factor there.
    """
    roles = required_roles()
    if not roles or user is None or not user.is_authenticated:
        return False
    if not user.has_usable_password():
        return False
    return user.groups.filter(name__in=roles).exists()


def confirmed_device(user) -> TOTPDevice | None:
    return TOTPDevice.objects.filter(user=user, confirmed=True).order_by("pk").first()


def session_has_device(request: HttpRequest) -> bool:
    """Whether the signed-in person has an authenticator, as the session remembers it."""
    if HAS_DEVICE_SESSION_KEY not in request.session:
        remember_device(request, confirmed_device(request.user) is not None)
    return bool(request.session[HAS_DEVICE_SESSION_KEY])


def remember_device(request: HttpRequest, has_device: bool) -> None:
    request.session[HAS_DEVICE_SESSION_KEY] = has_device


def is_verified(request) -> bool:
    """Whether this request's session passed the second factor.

    A request authenticated otherwise (a personal API token) never did.
    """
    verified = getattr(request.user, "is_verified", None)
    return bool(verified and verified())


@receiver(user_logged_in, dispatch_uid="accounts.two_factor_remember_device")
def _remember_device_at_sign_in(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        remember_device(request, confirmed_device(user) is not None)


def refusal_message() -> str:
    return _(
        "Your organisation requires two-factor sign-in for this: sign in with a code "
        "from your authenticator app (or a recovery code) and try again. Nothing was saved."
    )


class SecondFactorRequired(PermissionDenied):
    """403: the person's role requires a verified second factor, and this request has none."""


def require_second_factor(request) -> None:
    """Refuse (403) a decision or waiver the organisation requires a second factor for.

    The one check, called by the approval decision and red-flag waiver pages and
    endpoints before anything is stored.
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
                    "accounts/two_factor_refused.html",
                    {"message": str(refused)},
                    status=403,
                )
        return view(request, *args, **kwargs)

    return wrapped


def _exempt(path: str) -> bool:
    """Paths open before the second factor: signing in and out, the language, static
    files, the health probe, and the two-factor pages themselves."""
    open_paths = [
        reverse("login"),
        reverse("logout"),
        reverse("set_language"),
        reverse("healthz"),
        reverse("accounts:two_factor_verify"),
        reverse("accounts:two_factor"),
    ]
    return path in open_paths or path.startswith(settings.STATIC_URL)


class TwoFactorMiddleware:
    """Before any page: the code for those with an authenticator, set-up for those
    whose role requires one. After ``OTPMiddleware``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self._intercept(request)
        return response if response is not None else self.get_response(request)

    def _intercept(self, request) -> HttpResponse | None:
        user = request.user
        if not user.is_authenticated or is_verified(request):
            return None
        path = request.path_info
        if session_has_device(request):
            # The header offers no pages until the code is in.
            request.two_factor_pending = True
            # Not even the set-up page: it would show the person's recovery state.
            if _exempt(path) and path != reverse("accounts:two_factor"):
                return None
            return self._send(request, "accounts:two_factor_verify", _needs_code_message())
        if is_required_for(user) and not _exempt(path):
            return self._send(request, "accounts:two_factor", _needs_setup_message())
        return None

    @staticmethod
    def _send(request, name: str, message: str) -> HttpResponse:
        if request.path_info.startswith("/api/"):
            return JsonResponse({"detail": message}, status=403)
        url = reverse(name)
        if request.method in SAFE_METHODS:
            url += "?" + urlencode({"next": request.get_full_path()})
        return redirect(url)


def _needs_code_message() -> str:
    return _("Enter the code from your authenticator app first.")


def _needs_setup_message() -> str:
    return _("Your organisation requires two-factor sign-in: set it up first.")

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
  ``apps.core.second_factor.require_second_factor``, the one check the pages and
  endpoints call.

Harness tokens are not people: they never reach the decision and waiver endpoints,
and the middleware does not see them (API authentication happens in the view).
"""

from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django_otp.plugins.otp_totp.models import TOTPDevice

from apps.core.second_factor import SAFE_METHODS, is_required_for, is_verified

# The session remembers whether its person has an authenticator (set at sign-in and
# by the set-up page), so that pages cost no extra query.
HAS_DEVICE_SESSION_KEY = "two_factor_has_device"


def confirmed_device(user) -> TOTPDevice | None:
    return TOTPDevice.objects.filter(user=user, confirmed=True).order_by("pk").first()


def session_has_device(request: HttpRequest) -> bool:
    """Whether the signed-in person has an authenticator, as the session remembers it."""
    if HAS_DEVICE_SESSION_KEY not in request.session:
        remember_device(request, confirmed_device(request.user) is not None)
    return bool(request.session[HAS_DEVICE_SESSION_KEY])


def remember_device(request: HttpRequest, has_device: bool) -> None:
    request.session[HAS_DEVICE_SESSION_KEY] = has_device


@receiver(user_logged_in, dispatch_uid="accounts.two_factor_remember_device")
def _remember_device_at_sign_in(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        remember_device(request, confirmed_device(user) is not None)


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

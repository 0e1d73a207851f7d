"""A person's own account pages: two-factor sign-in (set it up or remove it, and enter the
code after the password), and how they hear of events on cases.

All are open to every signed-in person (``login_required``): each acts only on the
person's own devices and choices, never on another's.
"""

import time
from base64 import b32encode
from binascii import unhexlify

import django_otp
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_login_failed
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.models import Device
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp.util import random_hex

from apps.accounts import qr
from apps.accounts.forms import AppCodeForm, CodeForm, NotificationChoiceForm
from apps.accounts.twofactor import confirmed_device, remember_device
from apps.core.access import AuthenticatedHttpRequest
from apps.core.notifications import email_choice, email_choice_set
from apps.core.second_factor import is_required_for, is_verified

PENDING_KEY_SESSION_KEY = "two_factor_pending_key"
RECOVERY_CODES = 10


def _secret(hex_key: str) -> str:
    """The key as people type it into an app: base32, in groups of four."""
    text = b32encode(unhexlify(hex_key)).decode()
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


def _pending_device(request: HttpRequest) -> TOTPDevice:
    """The authenticator being set up, not yet stored: its key waits in the session."""
    key = request.session.get(PENDING_KEY_SESSION_KEY)
    if not key:
        key = random_hex(20)
        request.session[PENDING_KEY_SESSION_KEY] = key
    return TOTPDevice(user=request.user, name=_("Authenticator app"), key=key, confirmed=True)


def _code_matches_new_key(device: TOTPDevice, code: str) -> bool:
    if not code.isdigit():
        return False
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time()
    if not totp.verify(int(code), device.tolerance):
        return False
    device.last_t = totp.t()  # the code that confirmed it cannot sign in too
    device.drift = totp.drift
    return True


def _new_recovery_codes(user: User) -> list[str]:
    """Ten new one-time recovery codes; those given before stop working."""
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=_("Recovery codes"), confirmed=True)
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    for code in codes:
        StaticToken.objects.create(device=device, token=code)
    return codes


def _show_codes(request: HttpRequest, codes: list[str]) -> HttpResponse:
    return render(request, "accounts/two_factor_codes.html", {"codes": codes})


def _throttled(device: Device) -> bool:
    allowed, _details = device.verify_is_allowed()
    return not allowed


@login_required
def two_factor(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Set up the authenticator app; once on, remove it or renew the recovery codes."""
    device = confirmed_device(request.user)
    if device is None:
        return _set_up(request)
    action = request.POST.get("action")
    form = AppCodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        if _throttled(device):
            form.add_error("code", _too_many())
        elif not device.verify_token(form.cleaned_data["code"]):
            form.add_error("code", _refused(device, form.cleaned_data["code"]))
        elif action == "remove":
            with transaction.atomic():
                TOTPDevice.objects.filter(user=request.user).delete()
                StaticDevice.objects.filter(user=request.user).delete()
            request.session.pop(DEVICE_ID_SESSION_KEY, None)
            remember_device(request, False)
            messages.success(request, _("Two-factor sign-in is off."))
            return redirect("accounts:two_factor")
        else:
            return _show_codes(request, _new_recovery_codes(request.user))
    remaining = StaticToken.objects.filter(device__user=request.user).count()
    return render(
        request,
        "accounts/two_factor.html",
        {
            "device": device,
            "form": form,
            "remaining": remaining,
            "required": is_required_for(request.user),
        },
    )


def _set_up(request: AuthenticatedHttpRequest) -> HttpResponse:
    pending = _pending_device(request)
    form = AppCodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        if _code_matches_new_key(pending, form.cleaned_data["code"]):
            with transaction.atomic():
                TOTPDevice.objects.filter(user=request.user).delete()
                pending.save()
                codes = _new_recovery_codes(request.user)
            request.session.pop(PENDING_KEY_SESSION_KEY, None)
            django_otp.login(request, pending)  # this session has just passed it
            remember_device(request, True)
            return _show_codes(request, codes)
        form.add_error("code", _wrong_code())
    return render(
        request,
        "accounts/two_factor_setup.html",
        {
            "form": form,
            "secret": _secret(pending.key),
            "config_url": pending.config_url,
            "qr_code": _qr_code(pending.config_url),
            "required": is_required_for(request.user),
        },
    )


@login_required
def two_factor_verify(request: HttpRequest) -> HttpResponse:
    """After the password: a code from the app, or one recovery code (used up)."""
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""
    next_url = next_url or resolve_url(settings.LOGIN_REDIRECT_URL)
    app = confirmed_device(request.user)
    if app is None:
        remember_device(request, False)
        return redirect(next_url)
    if is_verified(request):
        return redirect(next_url)
    form = CodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        code = form.cleaned_data["code"]
        with transaction.atomic():  # two requests with one code: one signs in
            devices: list = [
                *TOTPDevice.objects.select_for_update().filter(pk=app.pk),
                *StaticDevice.objects.select_for_update().filter(user=request.user, confirmed=True),
            ]
            throttled = all(_throttled(device) for device in devices)
            matched = next((d for d in devices if d.verify_token(code)), None)
        if matched is not None:
            django_otp.login(request, matched)
            if isinstance(matched, StaticDevice):
                messages.warning(request, _recovery_code_used(matched))
            return redirect(next_url)
        form.add_error("code", _too_many() if throttled else _refused(app, code))
        # A refused code counts as a failed sign-in for the lock-out, as a wrong password does.
        user_login_failed.send(
            sender=__name__,
            credentials={"username": request.user.get_username()},
            request=request,
        )
        if getattr(request, "axes_locked_out", False):
            logout(request)  # the lock-out page follows (AxesMiddleware)
            return redirect("login")
    return render(
        request,
        "accounts/two_factor_verify.html",
        {"form": form, "next": next_url},
    )


def _qr_code(config_url: str) -> SafeString | None:
    """The set-up link as a QR code for the app to scan; None for a link too long to draw
    (the key and the link are shown whatever)."""
    try:
        code = qr.encode(config_url)
    except qr.TooLong:
        return None
    return code.svg(label=_("QR code of the setup link: scan it with your authenticator app"))


def _recovery_code_used(device: StaticDevice) -> str:
    left = device.token_set.count()
    return ngettext(
        "You signed in with a recovery code; it cannot be used again. "
        "%(left)s recovery code is left: renew them on the two-factor sign-in page.",
        "You signed in with a recovery code; it cannot be used again. "
        "%(left)s recovery codes are left: renew them on the two-factor sign-in page.",
        left,
    ) % {"left": left}


def _already_used(device: TOTPDevice, code: str) -> bool:
    """Whether ``code`` is the app's code for a time step that already signed in: right,
    but taken (a code works once, so one seen over a shoulder cannot be used again)."""
    code = code.replace(" ", "")
    if not code.isdigit() or device.last_t < 0:
        return False
    now = time.time()
    # The steps the device accepts around now (its tolerance), not after the last one used.
    for offset in range(-device.tolerance, device.tolerance + 1):
        totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift + offset)
        totp.time = now
        if totp.t() <= device.last_t and totp.token() == int(code):
            return True
    return False


def _refused(device: TOTPDevice, code: str) -> str:
    if _already_used(device, code):
        return _used_code()
    return _wrong_code()


def _used_code() -> str:
    return _(
        "That code has already been used: each code works once. Wait for your authenticator "
        "app to show the next one, then enter it."
    )


def _wrong_code() -> str:
    return _("That code is not right. Check your authenticator app's clock and try again.")


def _too_many() -> str:
    return _("Too many wrong codes. Wait a minute, then try again.")


@login_required
def notifications(request: AuthenticatedHttpRequest) -> HttpResponse:
    """How the signed-in person hears of events by e-mail: at once, once a day, or not."""
    if request.method == "POST":
        form = NotificationChoiceForm(request.POST)
        if form.is_valid():
            email_choice_set(user=request.user, email=form.cleaned_data["email"])
            messages.success(request, _("Your choice is saved."))
            return redirect("accounts:notifications")
    else:
        form = NotificationChoiceForm(initial={"email": email_choice(request.user)})
    return render(
        request,
        "accounts/notifications.html",
        {"form": form, "address": request.user.email},
    )

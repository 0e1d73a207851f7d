"""One-time codes: what opens an invitation's link in a browser.

A code is six digits, sent to the invited address, valid ``PORTAL_CODE_MINUTES``
and once. Only its digest is stored (keyed with the invitation's link digest, so
a code table read alone gives nothing away). Guessing is bounded twice: a code
takes five wrong tries and is then void, and an invitation is sent at most five
codes an hour. Every code sent, every sign-in and every refused code is a use of
the invitation, in the case's history.
"""

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from apps.portal.models import InvitationUse, OneTimeCode, UseKind, VendorInvitation
from apps.portal.services.invitations import EmailNotSent, use_record

MAX_TRIES = 5
MAX_CODES_PER_HOUR = 5
# Refused codes put in the history, per invitation and hour: as many as the live codes of
# an hour can be refused. Past that the history says once that it stops counting them, so
# a stream of guesses fills no table (the guesses themselves stay refused all the same).
REFUSALS_RECORDED_PER_HOUR = MAX_TRIES * MAX_CODES_PER_HOUR


def _digest(invitation: VendorInvitation, code: str) -> str:
    return hmac.new(invitation.link_digest.encode(), code.encode(), hashlib.sha256).hexdigest()


def code_send(*, invitation: VendorInvitation) -> OneTimeCode:
    """Send a fresh code to the invited address; earlier unused codes stop working."""
    now = timezone.now()
    with transaction.atomic():
        locked = VendorInvitation.objects.select_for_update().get(pk=invitation.pk)
        recent = OneTimeCode.objects.filter(invitation=locked, sent_at__gt=now - timedelta(hours=1))
        if recent.count() >= MAX_CODES_PER_HOUR:
            raise ValidationError(
                _("Too many codes were asked for this link in the last hour. Try again later.")
            )
        for earlier in OneTimeCode.objects.filter(invitation=locked, used_at__isnull=True):
            earlier.used_at = now
            earlier.save(update_fields=["used_at"])
        code = f"{secrets.randbelow(10**6):06d}"
        record = OneTimeCode.objects.create(
            invitation=locked,
            code_digest=_digest(locked, code),
            sent_at=now,
            expires_at=now + timedelta(minutes=settings.PORTAL_CODE_MINUTES),
        )
        use_record(invitation=locked, kind=UseKind.CODE_SENT, detail=locked.email)
        _send_code(locked, code)
    return record


def _send_code(invitation: VendorInvitation, code: str) -> None:
    with translation.override(invitation.language):
        subject = _("Your code for %(organisation)s's offer review") % {
            "organisation": settings.ORGANISATION_NAME
        }
        body = render_to_string(
            "portal/email/code.txt",
            {"invitation": invitation, "code": code, "minutes": settings.PORTAL_CODE_MINUTES},
        )
    try:
        send_mail(
            subject=subject[:200], message=body, from_email=None, recipient_list=[invitation.email]
        )
    except Exception as error:
        raise EmailNotSent(str(error)) from error


def code_check(*, invitation: VendorInvitation, code: str) -> bool:
    """Whether ``code`` is the invitation's live code; a right one is used up by this call."""
    code = "".join(code.split())
    now = timezone.now()
    with transaction.atomic():
        live = (
            OneTimeCode.objects.select_for_update()
            .filter(invitation=invitation, used_at__isnull=True, expires_at__gt=now)
            .order_by("-sent_at")
            .first()
        )
        right = (
            live is not None
            and code.isdigit()
            and hmac.compare_digest(live.code_digest, _digest(invitation, code))
        )
        if live is not None:
            if right:
                live.used_at = now
            else:
                live.attempts += 1
                if live.attempts >= MAX_TRIES:
                    live.used_at = now
            live.save(update_fields=["used_at", "attempts"])
        if right:
            use_record(invitation=invitation, kind=UseKind.SIGNED_IN)
        else:
            _refusal_record(invitation, now=now)
    return right


def _refusal_record(invitation: VendorInvitation, *, now) -> None:
    """A refused code in the history, within ``REFUSALS_RECORDED_PER_HOUR`` an hour."""
    recorded = InvitationUse.objects.filter(
        invitation=invitation,
        kind=UseKind.CODE_REFUSED,
        created_at__gt=now - timedelta(hours=1),
    ).count()
    if recorded < REFUSALS_RECORDED_PER_HOUR - 1:
        use_record(invitation=invitation, kind=UseKind.CODE_REFUSED)
    elif recorded == REFUSALS_RECORDED_PER_HOUR - 1:
        use_record(
            invitation=invitation,
            kind=UseKind.CODE_REFUSED,
            detail=(
                f"{REFUSALS_RECORDED_PER_HOUR} codes refused within an hour: further "
                "refusals this hour are refused without a record each"
            ),
        )

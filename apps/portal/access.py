"""Who may use a portal page: the holder of an open invitation's link who typed its code.

The link names an invitation by a secret; only the secret's SHA-256 is stored, so
the database alone opens nothing. A link that names nothing answers 404; a revoked
or expired one 410, saying only that (never which offer it was for). A valid link
opens nothing either until the contact types the one-time code sent to the invited
address: that marks the browser's session for that one invitation (and no other)
for ``PORTAL_SESSION_SECONDS``. Every portal view is wrapped in ``portal_required``,
which sets ``request.invitation``; nothing in the portal looks a record up by an id
from the request without going through the invitation.
"""

import hashlib
import secrets
from functools import wraps

from django.conf import settings
from django.http import HttpRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

from apps.portal.models import InvitationState, VendorInvitation

SESSION_KEY = "vendor_portal"


class PortalRequest(HttpRequest):
    """A request past ``portal_required``, which sets the invitation whose link was opened."""

    invitation: VendorInvitation


def new_link_secret() -> str:
    return secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def invitation_for_link(token: str) -> VendorInvitation | None:
    if not token or len(token) > 100:
        return None
    return (
        VendorInvitation.objects.select_related("offer__vendor", "offer__case")
        .filter(link_digest=digest(token))
        .first()
    )


def refused(request, invitation: VendorInvitation | None):
    """The page for a link that opens nothing (404) or no longer opens anything (410)."""
    if invitation is None:
        return render(request, "portal/link_refused.html", {"state": None}, status=404)
    return render(request, "portal/link_refused.html", {"state": invitation.state}, status=410)


def sign_in(request, invitation: VendorInvitation) -> None:
    """Mark this browser's session as holding ``invitation`` (after a correct code)."""
    request.session.cycle_key()
    request.session[SESSION_KEY] = {
        "invitation": invitation.pk,
        "link": invitation.link_digest,
        "until": timezone.now().timestamp() + settings.PORTAL_SESSION_SECONDS,
    }


def sign_out(request) -> None:
    request.session.pop(SESSION_KEY, None)


def signed_in(request, invitation: VendorInvitation) -> bool:
    held = request.session.get(SESSION_KEY)
    return (
        isinstance(held, dict)
        and held.get("invitation") == invitation.pk
        and held.get("link") == invitation.link_digest
        and isinstance(held.get("until"), (int, float))
        and held["until"] > timezone.now().timestamp()
    )


def portal_link(token: str) -> str:
    """The absolute address of an invitation's portal (for the e-mail)."""
    return settings.SITE_URL + reverse("portal:start", args=[token])


def portal_required(view):
    """Open ``view`` only to the signed-in holder of an open invitation's link.

    The view is called as ``view(request, token, ...)`` with ``request.invitation`` set.
    Answers are never cached (a shared computer's back button shows nothing).
    """

    @wraps(view)
    def wrapped(request, token: str, *args, **kwargs):
        invitation = invitation_for_link(token)
        if invitation is None or invitation.state != InvitationState.OPEN:
            if invitation is not None and signed_in(request, invitation):
                sign_out(request)
            response = refused(request, invitation)
        elif not signed_in(request, invitation):
            response = redirect("portal:start", token)
        else:
            request.invitation = invitation
            response = view(request, token, *args, **kwargs)
        add_never_cache_headers(response)
        return response

    return wrapped


def portal_render(request, template: str, context: dict | None = None, *, status: int = 200):
    """Render a page behind the code: the invitation, its link and the organisation's name
    are in every such page's context."""
    return render(
        request,
        template,
        {
            "invitation": request.invitation,
            "token": request.resolver_match.kwargs["token"],
            "signed_in": True,
            "organisation_name": settings.ORGANISATION_NAME,
            **(context or {}),
        },
        status=status,
    )

"""The vendor's pages. Each one is reached only through its invitation's link."""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.portal import access, codes, selectors
from apps.portal.invitations import EmailNotSent
from apps.portal.models import InvitationState


def start(request: HttpRequest, token: str) -> HttpResponse:
    """Where the e-mailed link lands: ask for a code, then type it.

    Open to anyone holding the link (there is no account); it shows the vendor's and
    the organisation's names only, and nothing of the offer until the code is typed.
    """
    invitation = access.invitation_for_link(token)
    if invitation is None or invitation.state != InvitationState.OPEN:
        response = access.refused(request, invitation)
        add_never_cache_headers(response)
        return response
    if access.signed_in(request, invitation) and request.method == "GET":
        return redirect("portal:home", token)
    status = 200
    if request.method == "POST":
        if "send" in request.POST:
            try:
                codes.code_send(invitation=invitation)
            except ValidationError as error:
                messages.error(request, " ".join(error.messages))
                status = 429
            except EmailNotSent:
                messages.error(request, _("The code could not be e-mailed. Try again shortly."))
                status = 503
            else:
                messages.success(
                    request,
                    _("A code is on its way to %(email)s.") % {"email": _masked(invitation.email)},
                )
                return redirect("portal:start", token)
        elif codes.code_check(invitation=invitation, code=request.POST.get("code", "")[:20]):
            access.sign_in(request, invitation)
            return redirect("portal:home", token)
        else:
            messages.error(
                request,
                _("That code is wrong, used or expired. Ask for a new one if it keeps failing."),
            )
            status = 400
    response = render(
        request,
        "portal/start.html",
        {
            "invitation": invitation,
            "vendor": invitation.offer.vendor,
            "masked": _masked(invitation.email),
            "organisation_name": settings.ORGANISATION_NAME,
        },
        status=status,
    )
    add_never_cache_headers(response)
    return response


def _masked(email: str) -> str:
    """``li.wei@vendor.example`` → ``l•••••@vendor.example``: enough to recognise, not to read."""
    local, _at, domain = email.partition("@")
    return f"{local[:1]}{'•' * max(len(local) - 1, 1)}@{domain}"


@require_POST
@access.portal_required
def sign_out(request: HttpRequest, token: str) -> HttpResponse:
    access.sign_out(request)
    messages.success(request, _("Signed out. The link asks for a new code next time."))
    return redirect("portal:start", token)


@access.portal_required
def home(request: access.PortalRequest, token: str) -> HttpResponse:
    """The vendor's overview: what is asked, what was answered, and how each answer stands."""
    return access.portal_render(
        request, "portal/home.html", {"sections": selectors.sections_of(request.invitation)}
    )

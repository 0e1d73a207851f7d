"""Invitations made through the service, and portal sessions opened as a correct code opens them."""

from importlib import import_module

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from apps.portal import access
from apps.portal.services.invitations import invitation_create
from tests.contracts.factories import make_checklist
from tests.factories import make_case, make_offer


def make_offer_with_checklist(actor, case=None, *, legal=None, **fields):
    """An offer (by procurement's ``actor``) with an empty declared spec and a clause
    checklist started by the legal reviewer (lena of the personas unless given)."""
    offer = make_offer(actor, case or make_case(actor), **fields)
    make_checklist(legal or get_user_model().objects.get(username="lena"), offer=offer)
    return offer


def make_invitation(actor, offer=None, *, email="li.wei@vendor.example", **fields):
    """An invitation (the e-mail goes to Django's test outbox) and its link's secret."""
    offer = offer or make_offer_with_checklist(actor)
    fields.setdefault("contact_name", "Li Wei")
    return invitation_create(actor=actor, offer=offer, email=email, **fields)


def open_portal(client, invitation) -> None:
    """Give ``client`` the session a correct one-time code gives (for tests of the pages
    behind the code; the code itself is tested through its own pages)."""
    engine = import_module(settings.SESSION_ENGINE)
    session = client.session if client.session.session_key else engine.SessionStore()
    session[access.SESSION_KEY] = {
        "invitation": invitation.pk,
        "link": invitation.link_digest,
        "until": timezone.now().timestamp() + settings.PORTAL_SESSION_SECONDS,
    }
    session.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key

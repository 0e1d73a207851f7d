"""Every page of the vendor's side, read from the URL configuration, refuses the holder
of a link that no longer works or is not theirs, and keeps nothing it was sent.

For each route whose path starts with the invitation's link (so a route added later is
covered without touching this file), GET and POST with a filled-in body: a revoked and
an expired invitation's link (with the session its code had opened) answer 410, a link
of another offer's invitation sends the browser to that link's code page, a link that
names nothing answers 404; and a record of another invitation, named through one's own
link, answers 404. Nothing is written by any of these: no proposal, document, use, code
or e-mail.
"""

import copy
import re
from datetime import timedelta

import pytest
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, get_resolver
from django.utils import timezone

from apps.portal.models import (
    InvitationUse,
    OneTimeCode,
    Proposal,
    ProposalStatus,
    QuestionnaireAnswer,
    SentQuestionnaire,
    VendorDocument,
    VendorInvitation,
)
from apps.portal.services.invitations import invitation_revoke
from tests.portal.factories import make_invitation, open_portal
from tests.portal.review_factories import make_proposal

pytestmark = pytest.mark.django_db


def _portal_routes() -> list[URLPattern]:
    resolver = get_resolver()
    routes = []
    for pattern in resolver.url_patterns:
        for inner in getattr(pattern, "url_patterns", []):
            if (
                isinstance(inner, URLPattern)
                and str(inner.pattern).startswith("portal/<str:token>/")
                and getattr(pattern, "namespace", None) == "portal"
            ):
                routes.append(inner)
    return routes


ROUTES = _portal_routes()


def _path(route: URLPattern, token: str, proposal: Proposal) -> str:
    path = "/" + str(route.pattern)
    return (
        path.replace("<str:token>", token)
        .replace("<slug:section>", proposal.section)
        .replace("<int:pk>", str(proposal.pk))
    )


def _get(browser: Client, path: str):
    """GET, except where the page only takes a form (it answers 405 before anything else,
    naming nothing)."""
    response = browser.get(path)
    if response.status_code == 405:
        assert response["Allow"] == "POST"
        return None
    return response


def _body() -> dict:
    """Everything a vendor's form could carry: answers, a reply, a code, a document."""
    return {
        "send": "1",
        "code": "123456",
        "cards_per_node": "8",
        "unit_price": "2.5",
        "sla": "99.9 %",
        "sla.reference": "MSA 7.2",
        "reply": "As stated.",
        "value": "16",
        "kind": "sla",
        "file": SimpleUploadedFile("sla.pdf", b"%PDF-1.4 sla\n", "application/pdf"),
        "submit": "1",
    }


def _written() -> tuple[int, ...]:
    return (
        Proposal.history.count(),
        VendorDocument.objects.count(),
        QuestionnaireAnswer.history.count(),
        SentQuestionnaire.history.count(),
        InvitationUse.objects.count(),
        OneTimeCode.objects.count(),
        len(mail.outbox),
    )


def test_the_walk_finds_the_vendor_s_pages():
    names = {route.name for route in ROUTES}
    assert {
        "start",
        "home",
        "section",
        "reply",
        "documents",
        "sign_out",
        "questionnaire-answer",
    } <= names


@pytest.fixture(scope="module")
def _world(module_people):
    priya = module_people["priya"]
    mine, mine_secret = make_invitation(priya)
    theirs, theirs_secret = make_invitation(priya, email="ops@other.example")
    revoked, revoked_secret = make_invitation(priya, email="gone@vendor.example")
    expired, expired_secret = make_invitation(priya, email="late@vendor.example")
    mine_answer = make_proposal(mine, "spec", "cards_per_node", "8")
    their_answer = make_proposal(theirs, "spec", "cards_per_node", "16")
    for proposal in (mine_answer, their_answer):
        proposal.status = ProposalStatus.QUESTIONED  # a reply is open on both
        proposal.save(update_fields=["status"])
    invitation_revoke(actor=priya, invitation=revoked, reason="Wrong contact")
    VendorInvitation.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    return {
        "mine": (mine, mine_secret, mine_answer),
        "theirs": (theirs, theirs_secret, their_answer),
        "revoked": (revoked, revoked_secret, mine_answer),
        "expired": (expired, expired_secret, mine_answer),
    }


@pytest.fixture
def world(_world, people, settings, tmp_path):
    """Four invitations (one's own, another offer's, a revoked and an expired one) with an
    open question on two answers, built once for the module; each test its copy."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return copy.deepcopy(_world)


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.name)
@pytest.mark.parametrize("state", ["revoked", "expired"])
def test_a_closed_link_answers_410_and_keeps_nothing(world, route, state):
    invitation, secret, proposal = world[state]
    browser = Client()
    open_portal(browser, invitation)  # the session its code opened while it was open
    before = _written()
    path = _path(route, secret, proposal)
    read = _get(browser, path)
    assert read is None or read.status_code == 410
    assert browser.post(path, _body()).status_code in (410, 413)
    assert _written() == before


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.name)
def test_another_offer_s_link_is_not_opened_by_this_session(world, route):
    mine, _secret, _answer = world["mine"]
    _theirs, their_secret, their_answer = world["theirs"]
    browser = Client()
    open_portal(browser, mine)
    before = _written()
    path = _path(route, their_secret, their_answer)
    for response in (_get(browser, path), browser.post(path, _body())):
        if response is None:
            continue
        if route.name == "start":
            # The code page of their link: it asks for their code, shows nothing of theirs.
            assert response.status_code in (200, 302, 400)
            # Random tokens (the form's CSRF token, the page's nonces, the link itself) and
            # other numbers on the page (a vendor called "Vendor 1630") may hold "16" too:
            # their answer is the number 16 standing alone.
            page = re.sub(
                r'(csrfmiddlewaretoken" value|nonce)="[^"]*"', "", response.content.decode()
            ).replace(their_secret, "")
            assert not re.search(r"(?<![\w.,-])16(?![\w.,-])", page)
        else:
            assert response.status_code == 302
            assert response.url.endswith(f"/portal/{their_secret}/")
    if route.name != "start":
        assert _written() == before


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.name)
def test_a_link_that_names_nothing_answers_404(world, route):
    _mine, _secret, answer = world["mine"]
    before = _written()
    path = _path(route, "no-such-link", answer)
    read = _get(Client(), path)
    assert read is None or read.status_code == 404
    assert Client().post(path, _body()).status_code in (404, 413)
    assert _written() == before


def test_another_invitation_s_answer_is_not_found_through_one_s_own_link(world):
    mine, secret, _answer = world["mine"]
    _theirs, _their_secret, their_answer = world["theirs"]
    browser = Client()
    open_portal(browser, mine)
    before = _written()
    reply = [route for route in ROUTES if route.name == "reply"][0]
    path = _path(reply, secret, their_answer)
    assert _get(browser, path) is None  # a reply is only ever posted
    assert browser.post(path, _body()).status_code == 404
    assert _written() == before
    assert Proposal.objects.get(pk=their_answer.pk).vendor_reply == ""

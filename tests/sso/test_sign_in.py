"""Single sign-on's code flow over HTTP against a real OpenID Connect provider (no browser):
a person is found by their provider account (issuer and subject) alone; another provider
account carrying the same display name or e-mail address takes nothing over; a sign-in
the provider refuses ends on a page that says so, never a server error.

docs/roles.md#single-sign-on
"""

import logging
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from apps.accounts.models import ExternalIdentity
from tests.sso.oidc import (
    TEST_CLIENT_CALLBACK,
    authorization_redirect,
    running_provider,
    sign_in_through,
)

ACCOUNTS = {
    "wei.tech": {"groups": ["gpu-tech-leads"], "email": "wei@example.com"},
    # Another person at the provider whose display name is Wei's.
    "mallory": {
        "preferred_username": "wei.tech",
        "groups": ["gpu-admins"],
        "email": "mallory@example.com",
    },
    # Another whose e-mail address is Wei's.
    "copycat": {"groups": ["gpu-legal"], "email": "wei@example.com"},
    # A provider account named as a person who signs in here with a password.
    "priya": {"groups": ["gpu-buyers"], "email": "priya@example.com"},
}


@pytest.fixture
def issuer(settings):
    with running_provider(settings, ACCOUNTS, TEST_CLIENT_CALLBACK) as issuer:
        settings.OIDC_ROLE_MAP = [*settings.OIDC_ROLE_MAP, "gpu-buyers=procurement_reviewer"]
        yield issuer


def signed_in(client) -> str | None:
    return client.session.get("_auth_user_id")


def refusal(client, response) -> str:
    """The sign-in page the refused person lands on, with its message."""
    assert response.status_code == 302
    assert response["Location"] == reverse("login")
    return client.get(response["Location"]).content.decode()


def test_a_person_is_found_by_their_provider_account(client, db, issuer):
    first = sign_in_through(client, "wei.tech")
    assert first.status_code == 302 and first["Location"] == reverse("approvals:dashboard")
    wei = get_user_model().objects.get(username="wei.tech")
    assert signed_in(client) == str(wei.pk)
    assert set(wei.groups.values_list("name", flat=True)) == {"tech_lead"}
    identity = ExternalIdentity.objects.get(user=wei)
    assert (identity.issuer, identity.subject) == (issuer, "wei.tech")
    assert identity.last_sign_in_at is not None
    client.logout()
    again = sign_in_through(client, "wei.tech")
    assert again.status_code == 302 and signed_in(client) == str(wei.pk)
    assert get_user_model().objects.filter(username__startswith="wei").count() == 1


def test_another_account_with_the_same_display_name_takes_nothing_over(client, db, issuer, caplog):
    sign_in_through(client, "wei.tech")
    client.logout()
    with caplog.at_level(logging.WARNING, logger="apps.accounts.sso"):
        response = sign_in_through(client, "mallory")
    page = refusal(client, response)
    assert "An account named wei.tech already exists here" in page
    assert "ask an administrator to link the two" in page
    assert signed_in(client) is None
    wei = get_user_model().objects.get(username="wei.tech")
    assert wei.email == "wei@example.com" and not wei.is_staff
    assert set(wei.groups.values_list("name", flat=True)) == {"tech_lead"}
    assert list(ExternalIdentity.objects.values_list("subject", flat=True)) == ["wei.tech"]
    assert "Single sign-on refused mallory" in caplog.text
    assert "user name belongs to another account" in caplog.text


def test_another_account_with_the_same_email_address_is_refused(client, db, issuer, caplog):
    sign_in_through(client, "wei.tech")
    client.logout()
    with caplog.at_level(logging.WARNING, logger="apps.accounts.sso"):
        response = sign_in_through(client, "copycat")
    assert "Another account here already uses your e-mail address" in refusal(client, response)
    assert signed_in(client) is None
    assert not get_user_model().objects.filter(username="copycat").exists()
    assert "e-mail address belongs to another account" in caplog.text


def test_a_password_account_is_not_taken_over_by_its_name(client, people, issuer):
    response = sign_in_through(client, "priya")
    assert "An account named priya already exists here" in refusal(client, response)
    priya = get_user_model().objects.get(username="priya")
    assert priya.has_usable_password() and not priya.external_identities.exists()
    assert set(priya.groups.values_list("name", flat=True)) == {"procurement_reviewer"}


def test_an_administrator_links_an_existing_account_to_its_provider_account(client, people, issuer):
    ada = people["ada"]
    ada.is_staff = True
    ada.save(update_fields=["is_staff"])
    admin = client.__class__()
    admin.force_login(ada)
    added = admin.post(
        reverse("admin:accounts_externalidentity_add"),
        {"user": people["priya"].pk, "issuer": issuer, "subject": "priya"},
    )
    assert added.status_code == 302
    response = sign_in_through(client, "priya")
    assert response.status_code == 302 and signed_in(client) == str(people["priya"].pk)


def _state(client) -> str:
    return parse_qs(urlsplit(authorization_redirect(client)).query)["state"][0]


def test_a_refused_code_exchange_ends_on_a_page_that_says_so(client, db, issuer, caplog):
    state = _state(client)
    with caplog.at_level(logging.WARNING, logger="apps.accounts.sso"):
        response = client.get("/oidc/callback/", {"code": "made-up", "state": state})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Signing in with Example SSO did not complete" in page
    assert reverse("login") in page
    assert signed_in(client) is None
    assert "refused at the callback" in caplog.text


def test_a_state_this_browser_was_not_given_ends_on_a_page_that_says_so(client, db, issuer):
    _state(client)
    response = client.get("/oidc/callback/", {"code": "made-up", "state": "someone-elses"})
    assert response.status_code == 400
    assert "did not complete" in response.content.decode()
    assert signed_in(client) is None


def test_an_unreachable_provider_ends_on_a_page_that_says_so(client, db, issuer, settings):
    state = _state(client)
    settings.OIDC_OP_TOKEN_ENDPOINT = "http://127.0.0.1:9/token"  # nothing listens there
    response = client.get("/oidc/callback/", {"code": "made-up", "state": state})
    assert response.status_code == 502
    assert "Example SSO did not answer" in response.content.decode()


def test_a_sign_in_the_provider_refused_returns_with_a_message(client, db, issuer):
    state = _state(client)
    response = client.get("/oidc/callback/", {"error": "access_denied", "state": state})
    assert "did not complete, and you are not signed in" in refusal(client, response)

"""Single sign-on, end to end in the browser, against a real OpenID Connect provider
(the oidc-provider package from npm) started on 127.0.0.1 by the test."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from apps.accounts.models import ExternalIdentity
from tests.sso.oidc import running_provider

pytestmark = [pytest.mark.whole_case]

ACCOUNTS = {
    "wei.tech": {"groups": ["staff", "gpu-tech-leads"], "email": "wei@example.com"},
    "outsider": {"groups": ["marketing"]},
    # Another person at the provider, whose display name is Wei's.
    "mallory": {"preferred_username": "wei.tech", "groups": ["gpu-admins"]},
}


@pytest.fixture
def provider(live_server, settings):
    with running_provider(settings, ACCOUNTS, f"{live_server.url}/oidc/callback/") as issuer:
        yield issuer


def _sign_in_at_the_provider(page, live_server, login: str) -> None:
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/accounts/login/")
    page.click("a:has-text('Sign in with Example SSO')")
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "anything")
    page.click("button[type=submit]")
    # The provider asks once for consent to share the scopes.
    page.click("button[type=submit]")


def test_a_mapped_person_signs_in_through_the_provider_with_their_role(
    transactional_db, page, live_server, provider, screenshot
):
    _sign_in_at_the_provider(page, live_server, "wei.tech")
    page.wait_for_url(f"{live_server.url}/dashboard/")
    expect(page.locator("header")).to_contain_text("Tech lead")
    screenshot("sso-signed-in")
    user = get_user_model().objects.get(username="wei.tech")
    assert list(user.groups.values_list("name", flat=True)) == ["tech_lead"]
    assert user.email == "wei@example.com" and not user.has_usable_password()


def test_a_person_without_a_mapped_group_is_refused(transactional_db, page, live_server, provider):
    _sign_in_at_the_provider(page, live_server, "outsider")
    page.wait_for_url(f"{live_server.url}/accounts/login/")
    expect(page.locator("body")).to_contain_text("none of your groups gives a role")
    assert not get_user_model().objects.filter(username="outsider").exists()


def test_another_provider_account_with_the_same_name_is_refused(
    transactional_db, page, live_server, provider
):
    _sign_in_at_the_provider(page, live_server, "wei.tech")
    page.wait_for_url(f"{live_server.url}/dashboard/")
    _sign_in_at_the_provider(page, live_server, "mallory")
    page.wait_for_url(f"{live_server.url}/accounts/login/")
    expect(page.locator("body")).to_contain_text("An account named wei.tech already exists here")
    wei = get_user_model().objects.get(username="wei.tech")
    assert list(wei.groups.values_list("name", flat=True)) == ["tech_lead"] and not wei.is_staff
    assert list(ExternalIdentity.objects.values_list("subject", flat=True)) == ["wei.tech"]

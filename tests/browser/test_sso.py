"""Single sign-on, end to end in the browser, against a real OpenID Connect provider
(the oidc-provider package from npm) started on 127.0.0.1 by the test."""

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

pytestmark = [pytest.mark.whole_case]

NODE = shutil.which("node")
PROVIDER = Path(__file__).resolve().parents[1] / "sso" / "provider.mjs"
ACCOUNTS = {
    "wei.tech": {"groups": ["staff", "gpu-tech-leads"], "email": "wei@example.com"},
    "outsider": {"groups": ["marketing"]},
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _callback(live_server) -> str:
    return f"{live_server.url}/oidc/callback/"


@pytest.fixture
def provider(live_server, settings):
    if NODE is None:
        pytest.skip("needs Node.js for the OpenID Connect provider")
    port = _free_port()
    process = subprocess.Popen(
        [
            NODE,
            str(PROVIDER),
            str(port),
            "diligence",
            "s3cret",
            f"{live_server.url}/oidc/callback/",
        ],
        env={**os.environ, "ACCOUNTS": json.dumps(ACCOUNTS)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert json.loads(process.stdout.readline())["event"] == "listening"
    issuer = f"http://127.0.0.1:{port}"
    settings.OIDC_RP_CLIENT_ID = "diligence"
    settings.OIDC_RP_CLIENT_SECRET = "s3cret"
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = f"{issuer}/auth"
    settings.OIDC_OP_TOKEN_ENDPOINT = f"{issuer}/token"
    settings.OIDC_OP_USER_ENDPOINT = f"{issuer}/me"
    settings.OIDC_OP_JWKS_ENDPOINT = f"{issuer}/jwks"
    settings.OIDC_PROVIDER_NAME = "Example SSO"
    settings.OIDC_ROLE_MAP = ["gpu-tech-leads=tech_lead", "gpu-legal=legal_reviewer"]
    settings.OIDC_ENABLED = True
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "apps.accounts.sso.RoleMappingOIDCBackend",
    ]
    yield issuer
    process.terminate()
    process.wait(timeout=10)


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

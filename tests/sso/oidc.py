"""A real OpenID Connect provider for the single sign-on tests: the oidc-provider package
from npm (``provider.mjs``), started on 127.0.0.1, and Diligence's settings pointed at it.

``sign_in_through`` walks its sign-in and consent pages with plain HTTP, as a browser
would, and hands the provider's answer to Diligence's callback through the Django test
client: the whole code flow without a browser.
"""

import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests

NODE = shutil.which("node")
PROVIDER = Path(__file__).resolve().parent / "provider.mjs"
CLIENT_ID = "diligence"
CLIENT_SECRET = "s3cret"  # the test provider's client, on 127.0.0.1 only
TEST_CLIENT_CALLBACK = "http://testserver/oidc/callback/"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_provider(settings, accounts: dict, *callbacks: str) -> Iterator[str]:
    """The provider, with ``accounts``, sending people back to ``callbacks``; Diligence's
    single sign-on is set up for it (two groups mapped). Yields the issuer."""
    if NODE is None:
        pytest.skip("needs Node.js for the OpenID Connect provider")
    port = _free_port()
    process = subprocess.Popen(
        [NODE, str(PROVIDER), str(port), CLIENT_ID, CLIENT_SECRET, ",".join(callbacks)],
        env={**os.environ, "ACCOUNTS": json.dumps(accounts)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert json.loads(process.stdout.readline())["event"] == "listening"
        issuer = f"http://127.0.0.1:{port}"
        settings.OIDC_RP_CLIENT_ID = CLIENT_ID
        settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
        settings.OIDC_OP_AUTHORIZATION_ENDPOINT = f"{issuer}/auth"
        settings.OIDC_OP_TOKEN_ENDPOINT = f"{issuer}/token"
        settings.OIDC_OP_USER_ENDPOINT = f"{issuer}/me"
        settings.OIDC_OP_JWKS_ENDPOINT = f"{issuer}/jwks"
        settings.OIDC_PROVIDER_NAME = "Example SSO"
        settings.OIDC_ROLE_MAP = [
            "gpu-tech-leads=tech_lead",
            "gpu-legal=legal_reviewer",
            "gpu-admins=admin",
        ]
        settings.OIDC_ENABLED = True
        settings.AUTHENTICATION_BACKENDS = [
            *settings.AUTHENTICATION_BACKENDS,
            "apps.accounts.sso.RoleMappingOIDCBackend",
        ]
        yield issuer
    finally:
        process.terminate()
        process.wait(timeout=10)


def authorization_redirect(client) -> str:
    """Diligence's "Sign in with …": the provider's address it sends the browser to."""
    response = client.get("/oidc/authenticate/")
    assert response.status_code == 302, response
    return response["Location"]


def code_for(login: str, authorization_url: str) -> str:
    """Signs in at the provider as ``login`` (any password) and consents; returns the
    query string the provider sends back to the callback (its code and the state)."""
    browser = requests.Session()
    url = authorization_url
    for _step in range(12):
        response = browser.get(url, allow_redirects=False, timeout=10)
        if response.is_redirect:
            url = urljoin(url, response.headers["Location"])
            if url.startswith(TEST_CLIENT_CALLBACK):
                return urlsplit(url).query
            continue
        assert response.status_code == 200, response.text
        prompt = re.search(r'name="prompt" value="(\w+)"', response.text)
        assert prompt is not None, response.text
        data = {"prompt": prompt.group(1)}
        if prompt.group(1) == "login":
            data |= {"login": login, "password": "anything"}
        submitted = browser.post(url, data=data, allow_redirects=False, timeout=10)
        assert submitted.is_redirect, submitted.text
        url = urljoin(url, submitted.headers["Location"])
    raise AssertionError("the provider never sent the browser back")


def sign_in_through(client, login: str):
    """The whole sign-in as ``login``: Diligence's callback's response."""
    query = code_for(login, authorization_redirect(client))
    return client.get(f"/oidc/callback/?{query}")

"""Login throttling, Content-Security-Policy and security headers."""

import pytest
from django.urls import reverse


@pytest.mark.django_db
def test_repeated_failed_sign_ins_lock_the_account_out(client, priya, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(3):
        failed = client.post(reverse("login"), {"username": "priya", "password": "wrong"})
        assert failed.status_code in (200, 429)
    locked = client.post(reverse("login"), {"username": "priya", "password": "pw"})
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_a_successful_sign_in_works_below_the_limit(client, priya):
    client.post(reverse("login"), {"username": "priya", "password": "wrong"})
    response = client.post(reverse("login"), {"username": "priya", "password": "pw"})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(priya.pk)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/accounts/login/", "/cases/", "/api/docs/"])
def test_every_page_carries_a_csp_without_inline_scripts(browser_as, people, url):
    response = browser_as("aude").get(url)
    policy = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    html = response.content.decode()
    assert "<script>" not in html and '<script type="text/javascript">' not in html
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"

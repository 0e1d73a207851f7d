"""Login throttling, Content-Security-Policy and security headers."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

# An inline style: a style attribute inside a tag, or a <style> element. Rendered user
# text cannot match: autoescaping turns its "<" into "&lt;".
INLINE_STYLE = re.compile(r"<style[\s>]|<[a-zA-Z][^<>]*\sstyle\s*=", re.IGNORECASE)


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
def test_every_page_carries_a_csp_without_inline_scripts_or_styles(browser_as, people, url):
    response = browser_as("aude").get(url)
    policy = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"  # no 'unsafe-inline': styles come from files
    assert directives["frame-ancestors"] == "'none'"
    html = response.content.decode()
    assert "<script>" not in html and '<script type="text/javascript">' not in html
    assert not INLINE_STYLE.search(html), INLINE_STYLE.search(html)[0]
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def _our_templates() -> list[Path]:
    base = Path(settings.BASE_DIR)
    roots = [base / "templates", *sorted((base / "apps").glob("*/templates"))]
    return sorted(path for root in roots for path in root.rglob("*.html"))


def test_no_template_holds_an_inline_style():
    """The CSP blocks inline styles, so pages and packets alike style by class, in the
    stylesheets (static/css/diligence.css, packets/packet.css); a value computed per
    record (a chart's colour) is an SVG attribute, which is no style."""
    templates = _our_templates()
    assert len(templates) > 100
    found = [
        f"{path.relative_to(settings.BASE_DIR)}: {match[0]}"
        for path in templates
        for match in INLINE_STYLE.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not found, "inline styles (use a class):\n" + "\n".join(found)


@pytest.mark.django_db
def test_the_browsable_api_and_a_refused_form_bring_no_style_element(browser_as, people):
    client = browser_as("aude")
    api = client.get("/api/v1/cases/", HTTP_ACCEPT="text/html")
    assert api.status_code == 200 and "text/html" in api["Content-Type"]
    # Django REST framework's own few style attributes are blocked; our stylesheet
    # (static/css/browsable-api.css) lays those elements out instead.
    assert "<style" not in api.content.decode()
    assert "/static/css/browsable-api.css" in api.content.decode()
    client.handler.enforce_csrf_checks = True
    refused = client.post(reverse("cases:list"), {})
    assert refused.status_code == 403
    assert "This form could not be sent" in refused.content.decode()
    assert not INLINE_STYLE.search(refused.content.decode())

"""In a real browser the CSRF check reads the body before the view runs: the size must come first.

The test client skips CSRF by default, which hides this; here it is enforced, as in production.
"""

import pytest
from django.test import Client
from django.urls import reverse

from apps.audit.forms import max_export_upload_bytes
from apps.packets.forms import MAX_UPLOAD_BYTES
from tests.badinput.refusal import CountingInput, stored_state

BOUNDARY = "multipart/form-data; boundary=BoUnDaRy"
PAGES = {
    "packet": (reverse("packets:verify"), "aude", lambda settings: MAX_UPLOAD_BYTES),
    "export": (
        reverse("audit:verify-export"),
        "aude",
        lambda settings: max_export_upload_bytes(),
    ),
}


def _body(size: int) -> bytes:
    return (
        b"--BoUnDaRy\r\n"
        b'Content-Disposition: form-data; name="file"; filename="f.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n" + b"x" * size + b"\r\n--BoUnDaRy--\r\n"
    )


@pytest.fixture
def browser(people):
    """A signed-in browser that must send the CSRF token it was given."""

    def sign_in(username, url):
        client = Client(enforce_csrf_checks=True)
        client.force_login(people[username])
        client.get(url)
        return client, client.cookies["csrftoken"].value

    return sign_in


@pytest.mark.parametrize("page", sorted(PAGES))
def test_an_oversize_upload_is_refused_before_the_csrf_check_reads_it(
    browser, media_root, settings, page
):
    url, username, limit = PAGES[page]
    client, token = browser(username, url)
    before = stored_state(media_root)
    declared = limit(settings) + 1024 * 1024
    stream = CountingInput(_body(1000))
    response = client.generic(
        "POST",
        url,
        b"",
        content_type=BOUNDARY,
        HTTP_X_CSRFTOKEN=token,
        **{"wsgi.input": stream, "CONTENT_LENGTH": str(declared), "CONTENT_TYPE": BOUNDARY},
    )
    assert response.status_code == 413
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_small_upload_still_needs_its_csrf_token(browser, page):
    url, username, _limit = PAGES[page]
    client, _token = browser(username, url)
    body = _body(10)
    response = client.generic(
        "POST", url, body, content_type=BOUNDARY, **{"CONTENT_LENGTH": str(len(body))}
    )
    assert response.status_code == 403


def test_the_assessment_form_is_bounded_before_the_csrf_check_reads_it(browser, priya, media_root):
    from apps.assessments.views import FORM_UPLOAD_POLICY

    most = FORM_UPLOAD_POLICY.limit() + FORM_UPLOAD_POLICY.envelope_bytes
    from tests.factories import make_case

    url = reverse("assessments:create", args=[make_case(priya).pk])
    client, token = browser("lena", url)
    before = stored_state(media_root)
    stream = CountingInput(_body(1000))
    response = client.generic(
        "POST",
        url,
        b"",
        content_type=BOUNDARY,
        HTTP_X_CSRFTOKEN=token,
        **{
            "wsgi.input": stream,
            "CONTENT_LENGTH": str(most + 1),
            "CONTENT_TYPE": BOUNDARY,
        },
    )
    assert response.status_code == 413
    assert "larger than the" in response.content.decode()
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


def _post_declaring(client, url, token, declared: int) -> tuple:
    stream = CountingInput(_body(1000))
    response = client.generic(
        "POST",
        url,
        b"",
        content_type=BOUNDARY,
        HTTP_X_CSRFTOKEN=token,
        **{"wsgi.input": stream, "CONTENT_LENGTH": str(declared), "CONTENT_TYPE": BOUNDARY},
    )
    return response, stream


def test_the_cost_bill_import_is_refused_before_the_csrf_check_reads_it(browser, priya, media_root):
    from apps.costs.bill_rows import MAX_FILE_BYTES
    from tests.costs.factories import make_budget
    from tests.factories import make_case, make_offer

    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    client, token = browser("priya", reverse("costs:case", args=[case.pk]))
    before = stored_state(media_root)
    response, stream = _post_declaring(
        client, reverse("costs:import", args=[case.pk]), token, MAX_FILE_BYTES + 1024 * 1024
    )
    assert response.status_code == 413
    assert "larger than" in response.content.decode()
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before


def test_an_acceptance_attachment_is_refused_before_the_csrf_check_reads_it(
    browser, people, tariq, media_root, settings
):
    from tests.acceptance.factories import approved_offer, make_plan, record_faults

    settings.ACCEPTANCE_ATTACHMENT_MAX_BYTES = 4096
    _case, offer = approved_offer(people)
    [result] = record_faults(tariq, make_plan(tariq, offer), kinds=("network",))
    url = reverse("acceptance:attachment_add", args=[result.pk])
    client, token = browser("tariq", url)
    before = stored_state(media_root)
    response, stream = _post_declaring(client, url, token, 4096 + 1024 * 1024)
    assert response.status_code == 413
    assert stream.bytes_read == 0
    assert stored_state(media_root) == before

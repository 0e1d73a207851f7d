"""Error pages and reports never show a secret setting, the PKCS#11 PIN included."""

from django.test import RequestFactory, override_settings
from django.views.debug import ExceptionReporter, get_exception_reporter_filter

MASK = "********************"
# Made at run time: the error page also shows the source lines around the failure.
PIN = str(123405 * 2)


@override_settings(PACKET_SIGNING_PKCS11_PIN=PIN, PACKET_SIGNING_PKCS12_PASSPHRASE="s3cret")
def test_settings_shown_on_error_pages_mask_the_pin_and_passphrase():
    shown = get_exception_reporter_filter(None).get_safe_settings()
    assert shown["PACKET_SIGNING_PKCS11_PIN"] == MASK
    assert shown["PACKET_SIGNING_PKCS12_PASSPHRASE"] == MASK
    assert shown["PACKET_SIGNING_PKCS11_MODULE"] != MASK


@override_settings(PACKET_SIGNING_PKCS11_PIN=PIN)
def test_a_debug_error_page_does_not_print_the_pin():
    request = RequestFactory().get("/")
    try:
        raise RuntimeError("boom")
    except RuntimeError as error:
        reporter = ExceptionReporter(request, type(error), error, error.__traceback__)
        html = reporter.get_traceback_html()
    assert "PACKET_SIGNING_PKCS11_PIN" in html
    at = html.find(PIN)
    assert at == -1, html[at - 300 : at + 30]

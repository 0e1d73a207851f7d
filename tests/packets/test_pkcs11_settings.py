"""PKCS#11 signing settings: an incomplete or conflicting combination stops start-up."""

import sys

import pytest

from tests.core.test_settings import manage

TOKEN = {
    "PACKET_SIGNING_PKCS11_MODULE": sys.executable,  # any existing file passes start-up
    "PACKET_SIGNING_PKCS11_TOKEN_LABEL": "diligence",
    "PACKET_SIGNING_PKCS11_PIN": "1234",
    "PACKET_SIGNING_PKCS11_KEY_LABEL": "packet-signing",
}


def test_a_complete_token_configuration_starts():
    result = manage("check", env=TOKEN)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "missing",
    [
        "PACKET_SIGNING_PKCS11_TOKEN_LABEL",
        "PACKET_SIGNING_PKCS11_PIN",
        "PACKET_SIGNING_PKCS11_KEY_LABEL",
    ],
)
def test_an_incomplete_token_configuration_names_what_is_missing(missing):
    result = manage("check", env={**TOKEN, missing: ""})
    assert result.returncode != 0
    assert f"A PKCS#11 signing key also needs {missing}" in result.stderr


def test_a_certificate_label_alone_is_incomplete():
    result = manage("check", env={"PACKET_SIGNING_PKCS11_CERT_LABEL": "packet-certificate"})
    assert result.returncode != 0
    assert "also needs PACKET_SIGNING_PKCS11_MODULE" in result.stderr


def test_a_token_and_a_pkcs12_file_together_are_refused():
    result = manage("check", env={**TOKEN, "PACKET_SIGNING_PKCS12_PATH": "/etc/signing.p12"})
    assert result.returncode != 0
    assert "not both" in result.stderr


@pytest.mark.parametrize("module", ["libsofthsm2.so", "/nonexistent/libpkcs11.so"])
def test_the_module_must_be_an_existing_absolute_path(module):
    result = manage("check", env={**TOKEN, "PACKET_SIGNING_PKCS11_MODULE": module})
    assert result.returncode != 0
    assert "PACKET_SIGNING_PKCS11_MODULE must be the absolute path" in result.stderr
    assert "1234" not in result.stderr

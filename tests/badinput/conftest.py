"""The bad-input tests reuse the evidence fixtures (a real harness bundle) and keep keys in tmp."""

import pytest

from tests.evidence.conftest import cpu_bundle, mock_endpoint  # noqa: F401 - pytest fixtures


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def _signing_keys_in_tmp(settings, tmp_path_factory):
    # The development signing key is made on first use; keep the tests' own.
    settings.PACKET_SIGNING_DIR = str(tmp_path_factory.getbasetemp() / "badinput-signing")
    settings.PACKET_SIGNING_PKCS12_PATH = ""
    settings.PACKET_TSA_URL = ""

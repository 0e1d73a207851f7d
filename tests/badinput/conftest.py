"""The bad-input tests reuse the evidence fixtures (a real harness bundle) and keep keys in tmp."""

import pytest

from tests.evidence.conftest import cpu_bundle, mock_endpoint  # noqa: F401 - pytest fixtures


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def signing_in_tmp(tmp_path_factory) -> dict:
    """The settings that keep the tests' own signing key (made on first use) in tmp."""
    return {
        "PACKET_SIGNING_DIR": str(tmp_path_factory.getbasetemp() / "badinput-signing"),
        "PACKET_SIGNING_PKCS12_PATH": "",
        "PACKET_TSA_URL": "",
    }


@pytest.fixture(autouse=True)
def _signing_keys_in_tmp(settings, tmp_path_factory):
    # The development signing key is made on first use; keep the tests' own.
    for name, value in signing_in_tmp(tmp_path_factory).items():
        setattr(settings, name, value)

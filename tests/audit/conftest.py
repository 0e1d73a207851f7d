import pytest


@pytest.fixture(autouse=True)
def _signing_key_in_tmp(settings, tmp_path_factory):
    # The development signing key is made on first use; keep the tests' own.
    settings.PACKET_SIGNING_DIR = str(tmp_path_factory.getbasetemp() / "audit-signing")
    settings.PACKET_SIGNING_PKCS12_PATH = ""
    settings.PACKET_TSA_URL = ""

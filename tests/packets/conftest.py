import pytest

from tests.packets.factories import ORGANISATION_NAME


@pytest.fixture(autouse=True)
def _packet_dirs(settings, tmp_path):
    # Signing keys and stored packets live in a per-test directory, never in var/.
    settings.PACKET_SIGNING_DIR = tmp_path / "signing"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.ORGANISATION_NAME = ORGANISATION_NAME

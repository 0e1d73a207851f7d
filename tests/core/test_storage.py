"""Saved files are synced to disk before ``save`` returns: the file, and the names."""

import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage, storages

from apps.core import storage

pytestmark = pytest.mark.local_storage  # the file system's own guarantees


@pytest.fixture
def synced(monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    real, paths = os.fsync, []

    def fsync(descriptor):
        paths.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real(descriptor)

    monkeypatch.setattr(storage.os, "fsync", fsync)
    return tmp_path, paths


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads descriptors' paths")
def test_a_saved_file_and_the_folders_that_name_it_are_synced(synced):
    root, paths = synced
    assert isinstance(storages["default"], storage.DurableFileSystemStorage)

    name = default_storage.save("evidence/ab/first.json", ContentFile(b'{"a": 1}'))
    assert (root / name).read_bytes() == b'{"a": 1}'
    # Two new folders: the file, then each folder holding a new name, up to the root.
    assert paths == [str(root / name), str(root / "evidence/ab"), str(root / "evidence"), str(root)]

    paths.clear()
    second = default_storage.save("evidence/ab/second.json", ContentFile(b"{}"))
    assert paths == [str(root / second), str(root / "evidence/ab")]

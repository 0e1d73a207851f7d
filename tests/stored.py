"""Stored files as the tests see them, whichever the default storage is (disk or bucket)."""

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage


def stored_names(folder: str = "") -> list[str]:
    """Every name the default storage holds under ``folder``, whichever it is (disk or bucket)."""
    try:
        folders, files = default_storage.listdir(folder)
    except FileNotFoundError:
        return []
    prefix = f"{folder}/" if folder else ""
    found = [prefix + name for name in files]
    for sub in folders:
        found += stored_names(prefix + sub)
    return sorted(found)


class StoredObject:
    """One stored file, read through the default storage (``name`` is its last part)."""

    def __init__(self, storage_name: str) -> None:
        self.storage_name = storage_name
        self.name = storage_name.rsplit("/", 1)[-1]

    def read_bytes(self) -> bytes:
        with default_storage.open(self.storage_name, "rb") as handle:
            return handle.read()

    def __eq__(self, other) -> bool:
        return isinstance(other, StoredObject) and other.storage_name == self.storage_name

    def __repr__(self) -> str:
        return f"StoredObject({self.storage_name!r})"


def replace_stored(name: str, content: bytes) -> None:
    """Change a stored file behind the application's back, on disk or in the bucket."""
    default_storage.delete(name)
    assert default_storage.save(name, ContentFile(content)) == name

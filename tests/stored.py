"""Stored files as the tests see them, whichever the default storage is (disk or bucket)."""

from pathlib import Path

from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage


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


def store_folder(folder: Path) -> None:
    """The files under ``folder`` put in the default storage under the same names (their
    paths below it): copied under the media root on disk, or stored one by one where the
    default storage is a bucket (an empty one per test, so each name is free). A world
    built once for a module stores its files in a folder of its own; each test then
    finds them in its storage, as if the world had been built in it."""
    import shutil

    from django.conf import settings

    if not folder.is_dir():
        return
    if isinstance(default_storage, FileSystemStorage):
        shutil.copytree(folder, Path(settings.MEDIA_ROOT), dirs_exist_ok=True)
        return
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        with open(path, "rb") as handle:
            stored = default_storage.save(name, File(handle))
        if stored != name:
            raise RuntimeError(f"the file {name} was stored as {stored}")

"""File storage whose saved files are on disk, not only in the page cache, once saved.

Evidence bundles, packets and attachments are records: an upload answered 202, or a
row that names a file, must not point at bytes a power cut took away. Django's
``FileSystemStorage`` writes without ``fsync``; this one syncs each saved file and the
directory that holds its name (and each folder above it that the save created).
"""

import os

from django.core.files.storage import FileSystemStorage


def _fsync(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class DurableFileSystemStorage(FileSystemStorage):
    def _save(self, name, content):
        folder = os.path.dirname(self.path(name))
        existing = folder  # the deepest folder already there: new ones hang from it
        while not os.path.isdir(existing) and os.path.dirname(existing) != existing:
            existing = os.path.dirname(existing)
        name = super()._save(name, content)
        _fsync(self.path(name))
        if os.name == "posix":  # a directory opens for syncing on POSIX only
            _fsync(folder)
            while folder != existing:  # each new folder's name, in the folder above it
                folder = os.path.dirname(folder)
                _fsync(folder)
        return name

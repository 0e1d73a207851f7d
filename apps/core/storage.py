"""File storage whose saved files are on disk, not only in the page cache, once saved.

(Or in an S3-compatible bucket: ``apps.core.s3``, chosen with ``DILIGENCE_STORAGE=s3``.)

Evidence bundles, packets and attachments are records: an upload answered 202, or a
row that names a file, must not point at bytes a power cut took away. Django's
``FileSystemStorage`` writes without ``fsync``; this one syncs each saved file and the
directory that holds its name (and each folder above it that the save created).
"""

import os

from django.core.files.storage import FileSystemStorage
from django.forms import ClearableFileInput
from django.utils.translation import gettext as _


def _fsync(path: str) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class DurableFileSystemStorage(FileSystemStorage):
    # Storage._save is Django's documented hook for a custom storage; the stubs leave it out.
    def _save(self, name, content):
        folder = os.path.dirname(self.path(name))
        existing = folder  # the deepest folder already there: new ones hang from it
        while not os.path.isdir(existing) and os.path.dirname(existing) != existing:
            existing = os.path.dirname(existing)
        name = super()._save(name, content)  # type: ignore[misc]
        _fsync(self.path(name))
        if os.name == "posix":  # a directory opens for syncing on POSIX only
            _fsync(folder)
            while folder != existing:  # each new folder's name, in the folder above it
                folder = os.path.dirname(folder)
                _fsync(folder)
        return name


class StorageUnavailable(OSError):
    """The object store could not be reached or refused the request; nothing was changed."""


def unavailable_message() -> str:
    """What a person or the harness is told when the file store is down."""
    return _(
        "The file store cannot be reached just now, so nothing was stored or sent. "
        "Try again in a few minutes."
    )


def storage_location(storage, name: str) -> str:
    """Where a stored file is, for an operator: its path on disk, or its bucket and key."""
    try:
        return storage.path(name)
    except NotImplementedError:
        bucket = getattr(storage, "bucket_name", "")
        location = getattr(storage, "location", "")
        key = f"{location.strip('/')}/{name}" if location else name
        return f"s3://{bucket}/{key}"


class StoredFileInput(ClearableFileInput):
    """A file input that names the file already stored, without a link to the storage.

    Django's own links to ``storage.url()``: a folder nothing serves, or on S3 a URL
    that would bypass the permission-checked download (which the bucket refuses to
    make). The stored file is downloaded from its record's page instead.
    """

    template_name = "core/widgets/stored_file_input.html"

    def is_initial(self, value):
        return bool(value and getattr(value, "name", ""))

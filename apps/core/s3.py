"""Stored files in an S3-compatible bucket (``DILIGENCE_STORAGE=s3``), through django-storages.

Kept apart from ``apps.core.storage`` so that boto3 is imported only where the bucket is used.
"""

from botocore.exceptions import BotoCoreError, ClientError
from storages.backends.s3 import S3Storage
from storages.utils import clean_name, is_seekable

from apps.core.storage import StorageUnavailable

NAME_ATTEMPTS = 10


def _unavailable(error: Exception) -> StorageUnavailable:
    return StorageUnavailable(
        "The file store could not be reached, so nothing was stored or read. Try again shortly."
    )


class PrivateS3Storage(S3Storage):
    """Stored files in an S3-compatible bucket: private, and never overwritten.

    - A name already taken gets a new one, as on disk (``file_overwrite`` off); the write
      itself is conditional (``If-None-Match: *``) where the store supports it, so two
      saves racing for one name cannot replace each other's object.
    - An object appears whole or not at all: it is written in one PUT, which leaves
      nothing behind when it fails (a failed task, or a refused upload, holds no object).
    - No ACL is sent (the bucket's own stays private) and no URL is made: files leave
      only through the app's download views, which check who asks and the SHA-256.
    - A store that cannot be reached raises ``StorageUnavailable`` (an ``OSError``), which
      the pages and the API answer with 503; a missing object is ``FileNotFoundError``.
    """

    conditional_writes = True  # off once the store answers that it has none

    def __init__(self, **settings):
        settings.setdefault("file_overwrite", False)
        settings.setdefault("default_acl", None)
        super().__init__(**settings)

    def url(self, name, parameters=None, expire=None, http_method=None):
        raise NotImplementedError(
            "Stored files are sent only through the app's permission-checked downloads."
        )

    def _save(self, name, content):
        try:
            if self.file_overwrite:
                return super()._save(name, content)
            return self._save_new(name, content)
        except (BotoCoreError, ClientError) as error:
            raise _unavailable(error) from error

    def _save_new(self, name, content):
        """One PUT that succeeds only while the key is free (5 GiB at most, far above any
        upload limit here); a key taken meanwhile gets another name, as on disk."""
        for _attempt in range(NAME_ATTEMPTS):
            cleaned = clean_name(name)
            key = self._normalize_name(cleaned)
            params = self._get_write_parameters(key, content)
            if is_seekable(content):
                content.seek(0)
            condition = {"IfNoneMatch": "*"} if self.conditional_writes else {}
            try:
                self.bucket.Object(key).put(Body=content, **condition, **params)
            except ClientError as error:
                code = error.response.get("Error", {}).get("Code", "")
                if code == "NotImplemented" and condition:
                    # A store without conditional writes: the name was free when looked
                    # up just before (get_available_name), which is all it can offer.
                    self.conditional_writes = False
                    continue
                if code not in {"PreconditionFailed", "ConditionalRequestConflict"}:
                    raise
                name = self.get_available_name(cleaned)
                continue
            return cleaned
        raise StorageUnavailable(f"No free name in the file store for {name}")

    def _open(self, name, mode="rb"):
        try:
            handle = super()._open(name, mode)
            if "r" in mode:
                handle.file  # noqa: B018 - fetch now, so a failure is raised here
            return handle
        except (BotoCoreError, ClientError) as error:
            raise _unavailable(error) from error

    def delete(self, name):
        try:
            return super().delete(name)
        except (BotoCoreError, ClientError) as error:
            raise _unavailable(error) from error

    def exists(self, name):
        try:
            return super().exists(name)
        except (BotoCoreError, ClientError) as error:
            raise _unavailable(error) from error

    def listdir(self, name):
        try:
            return super().listdir(name)
        except (BotoCoreError, ClientError) as error:
            raise _unavailable(error) from error

    def size(self, name):
        try:
            return super().size(name)
        except (BotoCoreError, ClientError) as error:
            raise _unavailable(error) from error

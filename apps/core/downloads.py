"""Stored files leave only through views that check who asks and that the bytes are intact.

Evidence bundles, packets, cost bills and attachments are records kept with their
SHA-256; nothing serves the storage folder itself. A download reads the stored file
once, hashing it into a spool, and sends that spool only when its digest is the one
recorded: the bytes sent are the bytes checked, even if the file changes meanwhile. A
file whose bytes changed on disk is refused (409), logged at CRITICAL with both
digests, and raised on its case as a ``FileIntegrityAlarm``, so people see it on the
case page and in its history instead of being handed the altered file.

Every download view checks its role permission and the record's visibility first
(through its app's selector), then calls ``stored_file_response`` (pages) or
``stored_file_api_response`` (the API) with a ``StoredFile``.
"""

import hashlib
import logging
import tempfile
from dataclasses import dataclass

from django.core.files.storage import Storage, default_storage
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.exceptions import APIException

from apps.core.models import FileIntegrityAlarm
from apps.core.services import tracked_create

logger = logging.getLogger(__name__)

CHUNK_BYTES = 1024 * 1024
# A spool this small stays in memory; a larger file is spooled to a temporary file.
SPOOL_MEMORY_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class StoredFile:
    """One record's stored file, as its download sends it."""

    case_id: int  # the case the record belongs to
    record: str  # how people name the record, e.g. "Packet DD-2026-0001"
    name: str  # the name in storage
    sha256: str  # the digest recorded when the file was stored
    filename: str  # offered to the browser
    content_type: str | None = None  # None: guessed from the file name
    storage: Storage = default_storage


class StoredFileChanged(Exception):
    """The stored bytes no longer hash to the recorded digest; ``alarm`` says so on the case."""

    def __init__(self, alarm: FileIntegrityAlarm) -> None:
        super().__init__(str(alarm))
        self.alarm = alarm


class StoredFileConflict(APIException):
    status_code = 409
    default_code = "stored_file_changed"


def changed_message() -> str:
    return _(
        "The stored file no longer matches its recorded checksum, so it is not sent. "
        "This has been recorded on the case."
    )


def stored_file_read(stored: StoredFile, *, actor) -> tempfile.SpooledTemporaryFile:
    """The stored bytes, verified against the recorded SHA-256, positioned at the start.

    Raises ``Http404`` when the file is missing and ``StoredFileChanged`` (after
    raising the alarm) when its digest is not the recorded one.
    """
    if not stored.name:
        raise Http404(_("The stored file is missing."))
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES)  # noqa: SIM115 - returned
    digest = hashlib.sha256()
    try:
        with stored.storage.open(stored.name, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
                spool.write(chunk)
    except FileNotFoundError:
        spool.close()
        raise Http404(_("The stored file is missing.")) from None
    except BaseException:
        spool.close()
        raise
    found = digest.hexdigest()
    if found != stored.sha256.strip().lower():
        spool.close()
        raise StoredFileChanged(
            file_integrity_alarm_raise(stored=stored, found_sha256=found, actor=actor)
        )
    spool.seek(0)
    return spool


def file_integrity_alarm_raise(
    *, stored: StoredFile, found_sha256: str, actor
) -> FileIntegrityAlarm:
    """Log the changed file and record it on its case, once per file and digest found.

    Kept beside the download that detects it (the shared services module is the
    tracked-write machinery only); written through ``tracked_create``, so the alarm
    has its history row and advances the audit chain like any regulated record.
    """
    logger.critical(
        "Stored file changed on disk: %s of case %s, stored as %s, hashes to %s; "
        "recorded SHA-256 %s. Download refused.",
        stored.record,
        stored.case_id,
        stored.name,
        found_sha256,
        stored.sha256 or "(none)",
    )
    open_alarm = FileIntegrityAlarm.objects.filter(
        case_id=stored.case_id,
        storage_name=stored.name[:300],
        found_sha256=found_sha256,
        resolved_at__isnull=True,
    ).first()
    if open_alarm is not None:
        return open_alarm
    return tracked_create(
        FileIntegrityAlarm,
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        reason="Detected when the file was downloaded",
        case_id=stored.case_id,
        record=stored.record[:300],
        storage_name=stored.name[:300],
        expected_sha256=stored.sha256[:64],
        found_sha256=found_sha256,
        detected_at=timezone.now(),
    )


def _file_response(spool, stored: StoredFile, *, as_attachment: bool) -> FileResponse:
    response = FileResponse(
        spool,
        as_attachment=as_attachment,
        filename=stored.filename,
        content_type=stored.content_type,
    )
    response["X-Content-SHA256"] = stored.sha256
    return response


def stored_file_response(
    request: HttpRequest, stored: StoredFile, *, as_attachment: bool = True
) -> HttpResponse | FileResponse:
    """A page's download: the verified file, or a 409 page saying it no longer matches."""
    try:
        spool = stored_file_read(stored, actor=request.user)
    except StoredFileChanged as changed:
        return render(
            request,
            "core/stored_file_changed.html",
            {"alarm": changed.alarm, "message": changed_message()},
            status=409,
        )
    return _file_response(spool, stored, as_attachment=as_attachment)


def stored_file_api_response(
    request, stored: StoredFile, *, as_attachment: bool = True
) -> FileResponse:
    """An API download: the verified file, or 409 with the reason (404 when it is missing)."""
    try:
        spool = stored_file_read(stored, actor=request.user)
    except StoredFileChanged:
        raise StoredFileConflict(changed_message()) from None
    return _file_response(spool, stored, as_attachment=as_attachment)


def open_file_integrity_alarms(case) -> list[FileIntegrityAlarm]:
    """The case's stored files found changed and not yet resolved, newest first."""
    return list(FileIntegrityAlarm.objects.filter(case=case, resolved_at__isnull=True))

"""The packet's manifest: digests a machine can check the packet against.

Two kinds of entries:

- **records** — for every record of the case, its latest history row: the
  record type (``app.model``), record id, history row id, and the SHA-256 of
  the row's *canonical JSON*: every concrete column of the history row by
  column name (``history_user_id``, ``history_change_reason`` … included),
  datetimes and dates in ISO 8601, decimals and UUIDs as strings, keys
  sorted, no whitespace (``separators=(",", ":")``), UTF-8, non-ASCII kept.
  An export of the same rows hashed the same way must give the same digests.
- **evidence files** — each file a section names, re-hashed from storage while
  the packet is built and compared with the digest recorded at upload, so a
  file swapped in storage shows as a mismatch in the packet.

- **attachments** — every file attached inside the PDF besides the manifest
  (the full change history, a CSV and a JSON file per record type): name,
  media type, size, rows and the SHA-256 of the file's bytes, so anyone who
  saves an attachment can check it, and ``verify_packet`` checks them all.

It names what the document is (``document``: ``packet`` for the whole-case
packet, or the kind of a deliverable issued on its own) and states the audit
chain's head when the packet was built (``chain``: sequence number and
hash), so a chain later moved back — a database restored from an older
backup — is found by the chain verifier, and by anyone holding
the packet.

The manifest travels as ``manifest.json`` attached inside the PDF (before it
is signed, like every attachment) and is printed as the packet's last section.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from uuid import UUID

from django.core.files.storage import default_storage
from django.db.models import Max

from apps.audit.selectors import chain_status

MANIFEST_FORMAT = "diligence.packet-manifest/2"
MANIFEST_NAME = "manifest.json"
CHUNK_BYTES = 1024 * 1024


class FileStatus:
    OK = "ok"
    MISMATCH = "mismatch"
    MISSING = "missing"


@dataclass(frozen=True)
class RecordDigest:
    record_type: str
    record_id: int
    history_id: int
    history_date: datetime
    action: str
    sha256: str


@dataclass(frozen=True)
class FileDigest:
    name: str
    path: str
    expected_sha256: str
    sha256: str | None
    status: str


def _plain(value):
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal | UUID):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    return value


def canonical_history_row(row) -> bytes:
    values = {f.attname: _plain(getattr(row, f.attname)) for f in row._meta.concrete_fields}
    return json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def history_row_sha256(row) -> str:
    return hashlib.sha256(canonical_history_row(row)).hexdigest()


def latest_history_rows(queryset):
    """The newest history row of each record in ``queryset``, in one query."""
    newest = queryset.order_by().values("id").annotate(newest=Max("history_id")).values("newest")
    return queryset.filter(history_id__in=newest).order_by("id")


def record_digests(history_querysets) -> list[RecordDigest]:
    digests = []
    for queryset in history_querysets:
        record_type = queryset.model.instance_type._meta.label_lower
        for row in latest_history_rows(queryset):
            digests.append(
                RecordDigest(
                    record_type=record_type,
                    record_id=row.id,
                    history_id=row.history_id,
                    history_date=row.history_date,
                    action=row.history_type,
                    sha256=history_row_sha256(row),
                )
            )
    return digests


def file_digests(files) -> list[FileDigest]:
    """Re-hash each ``(name, storage path, expected sha256)`` from default storage."""
    digests = []
    for name, path, expected in files:
        try:
            actual = _storage_sha256(path)
        except FileNotFoundError:
            digests.append(FileDigest(name, path, expected, None, FileStatus.MISSING))
            continue
        status = FileStatus.OK if actual == expected.lower() else FileStatus.MISMATCH
        digests.append(FileDigest(name, path, expected, actual, status))
    return digests


def _storage_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with default_storage.open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def manifest_document(
    *,
    number,
    organisation,
    case,
    generated_at,
    generated_by,
    records,
    files,
    attachments=(),
    kind="packet",
) -> dict:
    chain = chain_status()
    return {
        "format": MANIFEST_FORMAT,
        "packet": number,
        # What the document is: "packet" for the whole case, or the deliverable's kind.
        "document": kind,
        "organisation": organisation,
        "case": {"id": case.pk, "name": case.name},
        "generated_at": generated_at.isoformat(),
        "generated_by": generated_by,
        "chain": {"head_seq": chain.head_seq, "head_hash": chain.head_hash},
        "records": [
            {
                "record_type": r.record_type,
                "record_id": r.record_id,
                "history_id": r.history_id,
                "history_date": r.history_date.isoformat(),
                "action": r.action,
                "sha256": r.sha256,
            }
            for r in records
        ],
        "evidence_files": [
            {
                "name": f.name,
                "path": f.path,
                "expected_sha256": f.expected_sha256,
                "sha256": f.sha256,
                "status": f.status,
            }
            for f in files
        ],
        "attachments": list(attachments),
    }


def manifest_bytes(document: dict) -> bytes:
    return json.dumps(document, indent=1, ensure_ascii=False, sort_keys=True).encode()

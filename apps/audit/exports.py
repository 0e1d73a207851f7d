"""The auditor's export of a case: every record, its full history, evidence and packets, signed.

``build_case_export(case, target, actor=…)`` writes a ZIP:

- ``records/<app.model>.json`` and ``.csv`` — the case's current records (in
  the CSV, text a spreadsheet would run as a formula starts with a single
  quote; the JSON holds every value exactly);
- ``history/<app.model>.json`` and ``.csv`` — every history row, with its chain
  entry: the very files a packet carries as attachments (``apps.audit.history_files``);
- ``evidence/<sha256>.json`` — each evidence bundle, byte for byte as uploaded;
- ``packets/<number>.pdf`` — each issued, signed packet;
- ``manifest.json`` — every file's SHA-256 and size, the case, the time, the chain head
  (also kept in file storage, so the chain verifier can tell if it moves back);
- ``manifest.json.sig`` — a detached CMS signature over ``manifest.json`` by the
  organisation's packet-signing key.

Files are streamed into the archive and hashed as they are written, so memory
stays bounded whatever the case's size.
"""

import hashlib
import io
import json
import zipfile
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.storage import default_storage
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from apps.audit.history_files import WRITERS, export_path
from apps.audit.selectors import chain_status
from apps.audit.services import chain_head_record
from apps.audit.signing import sign_detached
from apps.audit.sources import case_history_sources
from apps.core import csv_safe
from apps.evidence.models import EvidenceBundle
from apps.packets.models import AuditPacket

FORMAT = "diligence.case-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"
CHUNK = 2000
COPY_BLOCK = 1024 * 1024


class _HashingWriter:
    def __init__(self, handle):
        self.handle, self.digest, self.size = handle, hashlib.sha256(), 0

    def write(self, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.handle.write(data)
        self.digest.update(data)
        self.size += len(data)
        return len(data)


class _Archive:
    def __init__(self, target) -> None:
        self.zip = zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED)
        self.files: list[dict] = []

    def member(self, path: str):
        return _Member(self, path)

    def close(self):
        self.zip.close()


class _Member:
    def __init__(self, archive: _Archive, path: str):
        self.archive, self.path = archive, path

    def __enter__(self) -> _HashingWriter:
        self.handle = self.archive.zip.open(self.path, "w", force_zip64=True)
        self.writer = _HashingWriter(self.handle)
        return self.writer

    def __exit__(self, *exc):
        self.handle.close()
        self.archive.files.append(
            {"path": self.path, "sha256": self.writer.digest.hexdigest(), "size": self.writer.size}
        )


def _json_rows(writer, rows) -> int:
    count = 0
    writer.write("[")
    for row in rows:
        writer.write(("," if count else "") + "\n" + json.dumps(row, cls=DjangoJSONEncoder))
        count += 1
    writer.write("\n]\n")
    return count


def _chunked(queryset, key: str):
    last = None
    while True:
        page = queryset if last is None else queryset.filter(**{f"{key}__gt": last})
        batch = list(page.order_by(key)[:CHUNK])
        yield from batch
        if len(batch) < CHUNK:
            return
        last = batch[-1][key]


def _write_records(archive: _Archive, source, case) -> int:
    model = source.model
    pk = model._meta.pk.attname
    columns = [f.attname for f in model._meta.concrete_fields]
    if source.case_path == "":
        queryset = model._base_manager.filter(pk=case.pk)
    else:
        queryset = model._base_manager.filter(**{source.case_path: case.pk})
    queryset = queryset.values(*columns)
    with archive.member(f"records/{source.key}.json") as writer:
        count = _json_rows(writer, _chunked(queryset, pk))
    with archive.member(f"records/{source.key}.csv") as writer:
        # typeshed wants the wrapped buffer to have a ``name`` (read only by
        # TextIOWrapper.name and its repr), which io.RawIOBase does not declare.
        text = io.TextIOWrapper(_Sink(writer), encoding="utf-8", newline="")  # type: ignore[type-var]
        out = csv_safe.DictWriter(text, fieldnames=columns)
        out.writeheader()
        for row in _chunked(queryset, pk):
            out.writerow({k: _csv_value(v) for k, v in row.items()})
        text.flush()
        text.detach()
    return count


class _Sink(io.RawIOBase):
    def __init__(self, writer):
        self.writer = writer

    def writable(self):
        return True

    def write(self, data):
        return self.writer.write(bytes(data))


def _csv_value(value):
    if isinstance(value, dict | list):
        return json.dumps(value, cls=DjangoJSONEncoder, sort_keys=True)
    return value


def _write_history(archive: _Archive, source, queryset) -> int:
    # The same writer, and so the same bytes, as the history files attached to packets.
    count = 0
    for extension, write in WRITERS.items():
        with archive.member(export_path(source.key, extension)) as writer:
            count = write(writer, queryset)
    return count


def _copy_file(archive: _Archive, path: str, handle) -> str:
    with archive.member(path) as writer:
        while block := handle.read(COPY_BLOCK):
            writer.write(block)
    return archive.files[-1]["sha256"]


def _write_evidence(archive: _Archive, case) -> list[dict]:
    listed = []
    for bundle in EvidenceBundle.objects.filter(case=case).order_by("pk"):
        path: str | None
        actual: str | None
        if default_storage.exists(bundle.storage_name):
            path = f"evidence/{bundle.sha256}.json"
            with default_storage.open(bundle.storage_name, "rb") as handle:
                actual = _copy_file(archive, path, handle)
        else:
            # A stored file that went missing is itself a finding: the export says so
            # (and does not fail), so the auditor sees the gap instead of no export.
            path, actual = None, None
        listed.append(
            {
                "path": path,
                "recorded_sha256": bundle.sha256,
                "matches_recorded": actual == bundle.sha256,
                "missing_from_storage": actual is None,
                "offer_id": bundle.offer_id,
                "received_at": bundle.received_at.isoformat(),
            }
        )
    return listed


def _write_packets(archive: _Archive, case) -> list[dict]:
    listed = []
    for packet in AuditPacket.objects.filter(case=case).order_by("pk"):
        path: str | None
        actual: str | None
        name = packet.file.name
        assert name is not None  # a file field loaded from the database holds a string
        if packet.file.storage.exists(name):
            path = f"packets/{PurePosixPath(packet.number).name}.pdf"
            with packet.file.open("rb") as handle:
                actual = _copy_file(archive, path, handle)
        else:
            path, actual = None, None
        listed.append(
            {
                "path": path,
                "number": packet.number,
                "recorded_sha256": packet.sha256,
                "matches_recorded": actual == packet.sha256,
                "missing_from_storage": actual is None,
            }
        )
    return listed


def build_case_export(case, target, *, actor=None) -> dict:
    """Write the signed export of ``case`` to ``target`` (path or file); return the manifest."""
    archive = _Archive(target)
    try:
        counts = {}
        for source, history in case_history_sources(case):
            records = _write_records(archive, source, case)
            counts[source.key] = {
                "records": records,
                "history": _write_history(archive, source, history),
            }
        evidence = _write_evidence(archive, case)
        packets = _write_packets(archive, case)
        created_at = timezone.now()
        chain = chain_status().as_dict()
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "organisation": settings.ORGANISATION_NAME,
            "case": {"id": case.pk, "name": case.name},
            "created_at": created_at.isoformat(),
            "created_by": actor.get_username() if actor else None,
            "chain": chain,
            "counts": counts,
            "evidence": evidence,
            "packets": packets,
            "files": sorted(archive.files, key=lambda f: f["path"]),
        }
        body = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8")
        archive.zip.writestr(MANIFEST, body)
        archive.zip.writestr(SIGNATURE, sign_detached(body))
    finally:
        archive.close()
    chain_head_record(
        source="export",
        reference=f"case-{case.pk}-{created_at:%Y%m%dT%H%M%SZ}",
        head_seq=chain["head_seq"],
        head_hash=chain["head_hash"],
    )
    return manifest

"""Checking an auditor's export: signature, every digest, nothing missing or extra, safe names.

Shared by ``manage.py verify_export`` and the upload page. The archive's own
headers are not trusted: member names are checked before anything is read,
and every member is hashed as it is read, stopping once it exceeds the size
the manifest states (a decompression bomb is never expanded in full); a manifest
whose signature does not hold may make us inflate no more than an upload's limit.
"""

import hashlib
import json
import re
import zipfile
import zlib
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from apps.audit.exports import FORMAT, MANIFEST, SIGNATURE
from apps.audit.forms import max_export_upload_bytes
from apps.audit.signing import SignatureCheck, verify_detached

MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_SIGNATURE_BYTES = 1024 * 1024
READ_BLOCK = 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
# What a damaged or hostile member can raise while it is read: bad data, an encrypted or
# unsupported compression method, a stream shorter than its header says.
UNREADABLE = (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError, NotImplementedError)


@dataclass
class ExportCheck:
    """What the verifier can say about one export file."""

    signature: SignatureCheck | None = None
    manifest: dict | None = None
    files_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return (
            not self.problems
            and self.signature is not None
            and self.signature.valid
            and self.manifest is not None
        )

    @property
    def case(self) -> str:
        case = (self.manifest or {}).get("case") or {}
        return f"#{case.get('id')} {case.get('name', '')}".strip() if case else ""


def _size(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(value)
    return value


def unsafe_name(name: str) -> bool:
    parts = name.split("/")
    return (
        not name
        or name.startswith("/")
        or "\\" in name
        or "\x00" in name
        or bool(_DRIVE.match(name))
        or any(part in ("", ".", "..") for part in parts)
    )


def _read_limited(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes | None:
    with archive.open(info) as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def _digest(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with archive.open(info) as handle:
        while block := handle.read(READ_BLOCK):
            size += len(block)
            if size > limit:
                break
            digest.update(block)
    return digest.hexdigest(), size


def verify_export(fileobj) -> ExportCheck:
    check = ExportCheck()
    try:
        archive = zipfile.ZipFile(fileobj)
    except (zipfile.BadZipFile, OSError):
        check.problems.append(_("This file is not a ZIP archive."))
        return check
    with archive:
        members = {}
        for info in archive.infolist():
            # zipfile cuts a name at a NUL; the name as stored is the one to judge.
            if unsafe_name(info.orig_filename) or info.is_dir():
                check.problems.append(
                    _("Unsafe or unexpected member name: %(name)r") % {"name": info.orig_filename}
                )
                continue
            if info.filename in members:
                check.problems.append(
                    _("The archive holds %(name)s twice.") % {"name": info.filename}
                )
            members[info.filename] = info
        manifest_bytes = _special(check, archive, members, MANIFEST, MAX_MANIFEST_BYTES)
        signature = _special(check, archive, members, SIGNATURE, MAX_SIGNATURE_BYTES)
        if manifest_bytes is None:
            return check
        if signature is not None:
            check.signature = verify_detached(manifest_bytes, signature)
            check.problems.extend(check.signature.problems)
        try:
            manifest = json.loads(manifest_bytes)
            listed = {entry["path"]: entry for entry in manifest["files"]}
            sizes = {path: _size(entry["size"]) for path, entry in listed.items()}
            if manifest.get("format") != FORMAT:
                raise ValueError
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            check.problems.append(_("manifest.json is not a case export manifest."))
            return check
        check.manifest = manifest
        signed = check.signature is not None and check.signature.valid
        _compare(check, archive, members, listed, sizes, budget=None if signed else _budget())
    return check


def _budget() -> int:
    """Bytes an unsigned manifest may make us inflate: no more than the largest upload."""
    return max_export_upload_bytes()


def _special(check, archive, members, name, limit) -> bytes | None:
    info = members.pop(name, None)
    if info is None:
        check.problems.append(_("%(name)s is missing.") % {"name": name})
        return None
    try:
        data = _read_limited(archive, info, limit)
    except UNREADABLE:
        check.problems.append(
            _("%(path)s cannot be read: the archive is damaged.") % {"path": name}
        )
        return None
    if data is None:
        check.problems.append(_("%(name)s is implausibly large.") % {"name": name})
    return data


def _altered(path: str) -> str:
    return _("%(path)s does not match its SHA-256 in the manifest: it was altered.") % {
        "path": path
    }


def _compare(check: ExportCheck, archive, members: dict, listed: dict, sizes, budget) -> None:
    for path in sorted(set(members) - set(listed)):
        check.problems.append(
            _("%(path)s is in the archive but not in the manifest.") % {"path": path}
        )
    for path, entry in sorted(listed.items()):
        info = members.get(path)
        if info is None:
            check.problems.append(
                _("%(path)s is listed in the manifest but missing.") % {"path": path}
            )
            continue
        if budget is not None and sizes[path] > budget:
            check.problems.append(
                _(
                    "Reading %(path)s would inflate the archive to more than an upload may "
                    "hold, and the manifest is not signed: not checked further."
                )
                % {"path": path}
            )
            return
        if info.file_size != sizes[path]:
            # Not the file listed, whatever its bytes; not inflated (it may be a bomb).
            check.problems.append(_altered(path))
            continue
        try:
            digest, size = _digest(archive, info, sizes[path])
        except UNREADABLE:
            check.problems.append(
                _("%(path)s cannot be read: the archive is damaged.") % {"path": path}
            )
            continue
        if budget is not None:
            budget -= size
        check.files_checked += 1
        if size != sizes[path] or digest != entry.get("sha256"):
            check.problems.append(_altered(path))

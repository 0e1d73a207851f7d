"""Checking an auditor's export: signature, every digest, nothing missing or extra, safe names.

Shared by ``manage.py verify_export`` and the upload page. The archive's own
headers are not trusted: member names are checked before anything is read,
and every member is hashed as it is read, stopping once it exceeds the size
the manifest states (a decompression bomb is never expanded in full).
"""

import hashlib
import json
import re
import zipfile
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from apps.audit.exports import FORMAT, MANIFEST, SIGNATURE
from apps.audit.signing import SignatureCheck, verify_detached

MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_SIGNATURE_BYTES = 1024 * 1024
READ_BLOCK = 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")


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
            if unsafe_name(info.filename) or info.is_dir():
                check.problems.append(
                    _("Unsafe or unexpected member name: %(name)r") % {"name": info.filename}
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
            if manifest.get("format") != FORMAT:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            check.problems.append(_("manifest.json is not a case export manifest."))
            return check
        check.manifest = manifest
        _compare(check, archive, members, listed)
    return check


def _special(check, archive, members, name, limit) -> bytes | None:
    info = members.pop(name, None)
    if info is None:
        check.problems.append(_("%(name)s is missing.") % {"name": name})
        return None
    data = _read_limited(archive, info, limit)
    if data is None:
        check.problems.append(_("%(name)s is implausibly large.") % {"name": name})
    return data


def _compare(check: ExportCheck, archive, members: dict, listed: dict) -> None:
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
        try:
            digest, size = _digest(archive, info, int(entry["size"]))
        except (zipfile.BadZipFile, OSError, ValueError, KeyError):
            check.problems.append(
                _("%(path)s cannot be read: the archive is damaged.") % {"path": path}
            )
            continue
        check.files_checked += 1
        if size != int(entry["size"]) or digest != entry.get("sha256"):
            check.problems.append(
                _("%(path)s does not match its SHA-256 in the manifest: it was altered.")
                % {"path": path}
            )

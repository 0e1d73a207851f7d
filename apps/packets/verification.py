"""Is this PDF a packet issued by this system, signed and unchanged?

Shared by ``manage.py verify_packet`` and the upload page. Three independent
checks must all hold: the PAdES signature is intact, covers the whole file
and was made by a key this system signs with; the file's SHA-256 is the one
recorded when a packet was issued; and every file attached inside it (the
full change history) has the SHA-256 its attached manifest lists, the
manifest being the one the packet was issued with, with no file missing and
none unlisted. One changed byte fails the first two, and the third names the
attachment when the byte is in one.
"""

import hashlib
import io
import json
import logging
import re
import zlib
from dataclasses import dataclass, field
from datetime import datetime

from asn1crypto import cms
from django.utils.translation import gettext as _
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext

from apps.packets.manifest import MANIFEST_NAME
from apps.packets.models import AuditPacket
from apps.packets.signing import certificate_from_pem, outside_event_loop

logger = logging.getLogger(__name__)

PDF_MAGIC = b"%PDF-"
INFLATE_BLOCK = 1024 * 1024


class AttachmentStatus:
    OK = "ok"
    MISMATCH = "mismatch"
    UNREADABLE = "unreadable"
    MISSING = "missing"
    UNLISTED = "unlisted"


@dataclass(frozen=True)
class AttachmentCheck:
    """One attached file checked against the manifest."""

    name: str
    status: str
    expected_sha256: str | None = None
    sha256: str | None = None


@dataclass
class PacketVerification:
    """What a verifier can say about one uploaded file."""

    sha256: str
    size_bytes: int
    is_pdf: bool = False
    signed: bool = False
    intact: bool = False
    covers_whole_document: bool = False
    trusted: bool = False
    signer_subject: str = ""
    signing_time: datetime | None = None
    issued_packet: AuditPacket | None = None
    attachments: list[AttachmentCheck] = field(default_factory=list)
    attachments_ok: bool = False
    # The signed bytes were changed, or bytes were added or cut, after the signature was
    # made: read from the file's own signature, even where the file no longer opens.
    changed_after_signing: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return (
            self.intact
            and self.covers_whole_document
            and self.trusted
            and self.issued_packet is not None
            and self.attachments_ok
        )


def verify_packet_bytes(content: bytes) -> PacketVerification:
    digest = hashlib.sha256(content).hexdigest()
    result = PacketVerification(sha256=digest, size_bytes=len(content))
    result.issued_packet = (
        AuditPacket.objects.select_related("case", "issued_by", "request")
        .filter(sha256=digest)
        .first()
    )
    if result.issued_packet is None:
        result.problems.append(
            _("This file is not byte-identical to any packet issued by this system.")
        )
    if not content.lstrip()[:1024].startswith(PDF_MAGIC):
        result.problems.append(_("This file is not a PDF."))
        return result
    result.is_pdf = True
    result.changed_after_signing = changed_after_signing(content)
    if result.changed_after_signing:
        result.problems.append(changed_message())
    try:
        _check_signature(content, result)
    except Exception as error:  # a corrupted file can make the validator raise anywhere
        logger.info("Packet signature validation raised: %r", error)
        result.intact = result.covers_whole_document = result.trusted = False
        if not result.changed_after_signing:
            result.problems.append(_("The signature could not be validated: the file is damaged."))
    try:
        _check_attachments(content, result)
    except Exception as error:  # as above: a damaged file's structure can be anything
        logger.info("Packet attachment check raised: %r", error)
        result.attachments_ok = False
        result.problems.append(_("The attached files could not be read: the file is damaged."))
    return result


def _check_signature(content: bytes, result: PacketVerification) -> None:
    reader = PdfFileReader(io.BytesIO(content), strict=False)
    # A document timestamp, if one was added, is not the organisation's signature.
    signatures = list(reader.embedded_regular_signatures)
    if not signatures:
        result.problems.append(_("The file carries no signature."))
        return
    result.signed = True
    if len(signatures) > 1:
        result.problems.append(_("The file carries more than one signature; packets carry one."))
        return
    status = outside_event_loop(validate_pdf_signature, signatures[0], _validation_context())
    result.signer_subject = status.signing_cert.subject.human_friendly
    result.signing_time = status.signer_reported_dt
    result.intact = bool(status.intact and status.valid)
    result.covers_whole_document = (
        status.coverage == SignatureCoverageLevel.ENTIRE_FILE and status.docmdp_ok is not False
    )
    result.trusted = bool(status.trusted)
    changed = result.changed_after_signing  # already said, in the words a reader knows
    if not result.intact and not changed:
        result.problems.append(_("The signature does not match the content: the file was altered."))
    if not result.covers_whole_document and not changed:
        result.problems.append(_("The signature does not cover the whole file."))
    # Whose key made a broken signature cannot be told: said only of an intact one.
    if result.intact and not result.trusted:
        result.problems.append(_("The signer is not a key this system signs packets with."))


def changed_message() -> str:
    return _(
        "This file was changed after it was signed: the bytes the signature covers are not "
        "the ones it was made over, or bytes were added or cut since. It is not the document "
        "that was issued."
    )


_BYTE_RANGE = re.compile(rb"/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]")
_CONTENTS = re.compile(rb"\s*<([0-9A-Fa-f\s]*)>")


def changed_after_signing(content: bytes) -> bool:
    """Whether a signed file was changed since its signature was made, read from the raw
    bytes: the signature's byte range must run from the first byte to the last, around the
    signature itself, and the digest the signature states must be that of those bytes.

    A file without a signature, or whose signature states no digest, is not judged here.
    """
    found = list(_BYTE_RANGE.finditer(content))
    if not found:
        return False
    start, first, second, rest = (int(n) for n in found[-1].groups())
    if start != 0 or second + rest != len(content) or first >= second:
        return True  # bytes added or cut around what was signed
    contents = _CONTENTS.match(content[first:second])
    if contents is None:
        return True  # the signature itself was overwritten
    try:
        signed = cms.ContentInfo.load(bytes.fromhex(contents.group(1).decode()), strict=False)
        signer = signed["content"]["signer_infos"][0]
        algorithm = signer["digest_algorithm"]["algorithm"].native
        stated = next(
            attribute["values"][0].native
            for attribute in signer["signed_attrs"]
            if attribute["type"].native == "message_digest"
        )
        digest = hashlib.new(algorithm)
    except Exception:  # a damaged signature: its bytes were changed
        return True
    digest.update(content[start:first])
    digest.update(content[second : second + rest])
    return digest.digest() != stated


def _check_attachments(content: bytes, result: PacketVerification) -> None:
    reader = PdfFileReader(io.BytesIO(content), strict=False)
    files = dict(_embedded_files(reader))
    manifest_stream = files.pop(MANIFEST_NAME, None)
    if manifest_stream is None:
        result.problems.append(
            _("The file carries no manifest.json: its attached files cannot be checked.")
        )
        return
    manifest_bytes = _inflate(manifest_stream)[1]
    try:
        manifest = json.loads(manifest_bytes)
    except (TypeError, ValueError):
        result.problems.append(_("The attached manifest.json cannot be read: it is damaged."))
        return
    problems_before = len(result.problems)
    manifest_sha256 = hashlib.sha256(manifest_bytes).hexdigest()
    issued = result.issued_packet or (
        AuditPacket.objects.filter(number=str(manifest.get("packet", ""))).first()
    )
    if issued is not None and issued.manifest_sha256 != manifest_sha256:
        result.problems.append(
            _("The attached manifest is not the one packet %(number)s was issued with.")
            % {"number": issued.number}
        )
    listed = {
        str(entry.get("name")): str(entry.get("sha256"))
        for entry in manifest.get("attachments", [])
        if isinstance(entry, dict)
    }
    for name, expected in sorted(listed.items()):
        stream = files.pop(name, None)
        if stream is None:
            check = AttachmentCheck(name, AttachmentStatus.MISSING, expected)
            result.problems.append(
                _("%(name)s is listed in the manifest but not attached.") % {"name": name}
            )
        else:
            readable, data_sha256 = _sha256_of(stream)
            if not readable:
                check = AttachmentCheck(name, AttachmentStatus.UNREADABLE, expected)
                result.problems.append(
                    _("The attached %(name)s cannot be read: it was altered or damaged.")
                    % {"name": name}
                )
            elif data_sha256 != expected:
                check = AttachmentCheck(name, AttachmentStatus.MISMATCH, expected, data_sha256)
                result.problems.append(
                    _("The attached %(name)s does not match its SHA-256 in the manifest.")
                    % {"name": name}
                )
            else:
                check = AttachmentCheck(name, AttachmentStatus.OK, expected, data_sha256)
        result.attachments.append(check)
    for name in sorted(files):
        result.attachments.append(AttachmentCheck(name, AttachmentStatus.UNLISTED))
        result.problems.append(
            _("%(name)s is attached but not listed in the manifest.") % {"name": name}
        )
    result.attachments_ok = len(result.problems) == problems_before


def _embedded_files(reader):
    """``(name, stream)`` of each file in the document's ``/EmbeddedFiles`` name tree."""
    try:
        tree = reader.root["/Names"]["/EmbeddedFiles"]
    except KeyError:
        return
    pending = [tree]
    while pending:
        node = pending.pop()
        # Iterating pyHanko's arrays resolves their references (slicing them would not).
        pending.extend(list(_entry(node, "/Kids", [])))
        names = list(_entry(node, "/Names", []))
        for key, value in zip(names[::2], names[1::2], strict=True):
            spec = value.get_object()
            embedded = spec["/EF"]
            stream = embedded["/UF"] if "/UF" in embedded else embedded["/F"]
            name = str(spec["/UF"]) if "/UF" in spec else str(key)
            yield name, stream


def _entry(dictionary, key: str, default):
    # pyHanko's dictionaries resolve references on [] but not on get().
    try:
        return dictionary[key]
    except KeyError:
        return default


def _inflate(stream) -> tuple[bool, bytes]:
    """The decoded bytes of an embedded file, and whether they could be decoded."""
    try:
        return True, stream.data
    except Exception:  # a damaged stream: zlib, a filter, the structure
        return False, b""


def _sha256_of(stream) -> tuple[bool, str | None]:
    """Hash an embedded file; a Flate stream is inflated block by block, never whole."""
    if _entry(stream, "/Filter", None) != "/FlateDecode" or "/DecodeParms" in stream:
        readable, data = _inflate(stream)
        return readable, hashlib.sha256(data).hexdigest() if readable else None
    digest, inflater, encoded = hashlib.sha256(), zlib.decompressobj(), stream.encoded_data
    try:
        for start in range(0, len(encoded), INFLATE_BLOCK):
            digest.update(inflater.decompress(encoded[start : start + INFLATE_BLOCK]))
        digest.update(inflater.flush())
    except zlib.error:
        return False, None
    if not inflater.eof:  # cut short: the stream's end, and its checksum, are missing
        return False, None
    return True, digest.hexdigest()


def _validation_context() -> ValidationContext:
    # Every certificate that ever signed a packet here, so packets signed
    # before a key rotation still verify.
    pems = (
        AuditPacket.objects.exclude(signer_certificate_pem="")
        .values_list("signer_certificate_pem", flat=True)
        .order_by()
        .distinct()
    )
    roots = [certificate_from_pem(text) for text in pems]
    return ValidationContext(trust_roots=roots, allow_fetching=False)

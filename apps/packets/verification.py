"""Is this PDF a packet issued by this system, signed and unchanged?

Shared by ``manage.py verify_packet`` and the upload page. Two independent
checks must both hold: the PAdES signature is intact, covers the whole file
and was made by a key this system signs with; and the file's SHA-256 is the
one recorded when a packet was issued. One changed byte fails both.
"""

import hashlib
import io
import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.utils.translation import gettext as _
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext

from apps.packets.models import AuditPacket
from apps.packets.signing import certificate_from_pem, outside_event_loop

logger = logging.getLogger(__name__)

PDF_MAGIC = b"%PDF-"


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
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return (
            self.intact
            and self.covers_whole_document
            and self.trusted
            and self.issued_packet is not None
        )


def verify_packet_bytes(content: bytes) -> PacketVerification:
    digest = hashlib.sha256(content).hexdigest()
    result = PacketVerification(sha256=digest, size_bytes=len(content))
    result.issued_packet = (
        AuditPacket.objects.select_related("case", "issued_by").filter(sha256=digest).first()
    )
    if result.issued_packet is None:
        result.problems.append(
            _("This file is not byte-identical to any packet issued by this system.")
        )
    if not content.lstrip()[:1024].startswith(PDF_MAGIC):
        result.problems.append(_("This file is not a PDF."))
        return result
    result.is_pdf = True
    try:
        _check_signature(content, result)
    except Exception as error:  # a corrupted file can make the validator raise anywhere
        logger.info("Packet signature validation raised: %r", error)
        result.intact = result.covers_whole_document = result.trusted = False
        result.problems.append(_("The signature could not be validated: the file is damaged."))
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
    if not result.intact:
        result.problems.append(_("The signature does not match the content: the file was altered."))
    if not result.covers_whole_document:
        result.problems.append(_("The signature does not cover the whole file."))
    if not result.trusted:
        result.problems.append(_("The signer is not a key this system signs packets with."))


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

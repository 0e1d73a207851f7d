"""Detached CMS signatures over export manifests, with the organisation's packet key.

The key and certificate are the packet signer's (``apps.packets.signing``), so
an export and a packet issued by the same organisation carry the same signer.
"""

import asyncio
from dataclasses import dataclass, field

from asn1crypto import cms
from django.utils.translation import gettext as _
from pyhanko.sign.validation.generic_cms import async_validate_detached_cms
from pyhanko_certvalidator import ValidationContext

from apps.packets import signing
from apps.packets.models import AuditPacket


def sign_detached(data: bytes) -> bytes:
    """A DER-encoded CMS SignedData over ``data`` (detached), by the organisation's key."""
    packet_signer = signing.get_signer()
    content_info = asyncio.run(
        packet_signer.signer.async_sign_general_data(data, "sha256", detached=True)
    )
    return content_info.dump()


def trusted_certificates() -> list:
    """The key signing now and every key that signed a packet here (exports survive rotation)."""
    certificates = {}
    current = signing.get_signer().certificate
    certificates[current.sha256] = current
    pems = AuditPacket.objects.values_list("signer_certificate_pem", flat=True).order_by()
    for text in pems.distinct():
        certificate = signing.certificate_from_pem(text)
        certificates[certificate.sha256] = certificate
    return list(certificates.values())


@dataclass
class SignatureCheck:
    """Whether a detached signature is intact and was made by one of the organisation's keys."""

    intact: bool = False
    trusted: bool = False
    signer_subject: str = ""
    signer_fingerprint: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.intact and self.trusted


def verify_detached(data: bytes, signature: bytes) -> SignatureCheck:
    check = SignatureCheck()
    try:
        content_info = cms.ContentInfo.load(signature)
        if content_info["content_type"].native != "signed_data":
            raise ValueError("not SignedData")
        signed_data = content_info["content"]
        context = ValidationContext(trust_roots=trusted_certificates(), allow_fetching=False)
        status = asyncio.run(
            async_validate_detached_cms(data, signed_data, signer_validation_context=context)
        )
    except Exception:  # a damaged signature file can make the parser raise anywhere
        check.problems.append(_("The manifest signature is damaged or not a CMS signature."))
        return check
    certificate = status.signing_cert
    check.signer_subject = certificate.subject.human_friendly
    check.signer_fingerprint = certificate.sha256.hex()
    check.intact = bool(status.intact and status.valid)
    check.trusted = bool(status.trusted)
    if not check.intact:
        check.problems.append(_("The manifest does not match its signature: it was altered."))
    if not check.trusted:
        check.problems.append(_("The manifest was not signed by a key of this organisation."))
    return check

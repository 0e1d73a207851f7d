"""The organisation's packet-signing key, and PAdES signing with pyHanko
(docs/rules/audit.md#packet-signing).

Production names either a PKCS#12 file and its passphrase
(``PACKET_SIGNING_PKCS12_PATH``, ``PACKET_SIGNING_PKCS12_PASSPHRASE``) or a key
in a PKCS#11 token (``PACKET_SIGNING_PKCS11_*``, see ``apps.packets.pkcs11``),
and optionally an RFC 3161 timestamp authority (``PACKET_TSA_URL``), which
makes the signature PAdES B-T. Without either, development signs with a
self-signed certificate made on first use under ``PACKET_SIGNING_DIR``, whose
subject says it is not for production.
"""

import asyncio
import concurrent.futures
import contextlib
import hashlib
import os
import tempfile
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from asn1crypto import pem, tsp
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from pyhanko.keys import load_private_key_from_pemder_data
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign import signers
from pyhanko.sign.fields import MDPPerm, SigSeedSubFilter
from pyhanko.sign.timestamps import TimeStamper
from pyhanko.sign.timestamps.common_utils import TimestampRequestError, set_tsp_headers
from pyhanko_certvalidator.registry import SimpleCertificateStore

from apps.packets.attachments import PacketAttachment, embed_attachments
from apps.packets.pkcs11 import TokenSigner, configured_token, token_certificate

DEVELOPMENT_COMMON_NAME = "Diligence development signing key — NOT FOR PRODUCTION"
DEVELOPMENT_KEY_FILE = "development-signing-key.pem"
SIGNATURE_FIELD = "DiligencePacket"


@dataclass(frozen=True)
class PacketSigner:
    """A loaded signing key and certificate, and whether it is the development one."""

    signer: signers.Signer
    certificate: asn1_x509.Certificate
    development: bool
    timestamper: TimeStamper | None = None

    @property
    def subject(self) -> str:
        return self.certificate.subject.human_friendly

    @property
    def fingerprint_sha256(self) -> str:
        return hashlib.sha256(self.certificate.dump()).hexdigest()

    @property
    def certificate_pem(self) -> str:
        return pem.armor("CERTIFICATE", self.certificate.dump()).decode("ascii")


def outside_event_loop(function, *args, **kwargs):
    """Call one of pyHanko's synchronous wrappers, which use ``asyncio.run()``.

    That fails inside a running event loop (an async worker, a test process
    that drove a browser); there it runs in a thread of its own.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return function(*args, **kwargs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args, **kwargs).result()


def signing_dir() -> Path:
    return Path(settings.PACKET_SIGNING_DIR or settings.VAR_DIR / "signing")


def get_signer() -> PacketSigner:
    """The configured signing key: the PKCS#11 token or PKCS#12 file when named, else
    the development key.

    With a token, this reads the certificate from it (raising ``TokenSigningError``
    when the module, token, PIN, key or certificate is wrong); each signature
    then opens a session of its own.
    """
    pkcs12_path = settings.PACKET_SIGNING_PKCS12_PATH
    token = configured_token()
    if token is not None and pkcs12_path:
        raise ImproperlyConfigured(
            "PACKET_SIGNING_PKCS11_MODULE and PACKET_SIGNING_PKCS12_PATH are both set; "
            "packets are signed by one key"
        )
    timestamper = _timestamper()
    if token is not None:
        certificate = token_certificate(token)
        return PacketSigner(
            TokenSigner(token, certificate), certificate, development=False, timestamper=timestamper
        )
    if pkcs12_path:
        return _pkcs12_signer(Path(pkcs12_path), timestamper)
    return _development_signer(timestamper)


def _pkcs12_signer(path: Path, timestamper) -> PacketSigner:
    passphrase = settings.PACKET_SIGNING_PKCS12_PASSPHRASE or None
    try:
        signer = signers.SimpleSigner.load_pkcs12_data(
            path.read_bytes(),
            other_certs=[],
            passphrase=passphrase.encode() if passphrase else None,
        )
    except (OSError, ValueError) as error:
        raise ImproperlyConfigured(
            f"PACKET_SIGNING_PKCS12_PATH could not be loaded with the given passphrase: {error}"
        ) from None
    return PacketSigner(signer, signer.signing_cert, development=False, timestamper=timestamper)


def _development_signer(timestamper) -> PacketSigner:
    path = signing_dir() / DEVELOPMENT_KEY_FILE
    if not path.exists():
        _create_development_key(path)
    blob = path.read_bytes()
    key = load_private_key_from_pemder_data(_pem_block(blob, "PRIVATE KEY"), passphrase=None)
    certificate = asn1_x509.Certificate.load(pem.unarmor(_pem_block(blob, "CERTIFICATE"))[2])
    signer = signers.SimpleSigner(
        signing_cert=certificate, signing_key=key, cert_registry=SimpleCertificateStore()
    )
    return PacketSigner(signer, certificate, development=True, timestamper=timestamper)


def _pem_block(blob: bytes, kind: str) -> bytes:
    begin, end = f"-----BEGIN {kind}-----".encode(), f"-----END {kind}-----".encode()
    start = blob.index(begin)
    return blob[start : blob.index(end, start) + len(end)] + b"\n"


def _create_development_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    organisation = settings.ORGANISATION_NAME or "Diligence"
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, DEVELOPMENT_COMMON_NAME),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organisation[:64]),
        ]
    )
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    blob = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ) + certificate.public_bytes(serialization.Encoding.PEM)
    # Written aside and linked into place: two workers starting at once end up
    # with the same key, because only the first link succeeds.
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".key-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.chmod(temporary, 0o600)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        os.unlink(temporary)


def certificate_from_pem(text: str) -> asn1_x509.Certificate:
    return asn1_x509.Certificate.load(pem.unarmor(text.encode("ascii"))[2])


class UrllibTimeStamper(TimeStamper):
    """RFC 3161 over HTTP with the standard library (pyHanko's own client needs ``requests``)."""

    def __init__(self, url: str, timeout: float = 10) -> None:
        super().__init__()
        self.url = url
        self.timeout = timeout

    async def async_request_tsa_response(self, req: tsp.TimeStampReq) -> tsp.TimeStampResp:
        return await asyncio.to_thread(self._post, req.dump())

    def _post(self, body: bytes) -> tsp.TimeStampResp:
        request = urllib.request.Request(  # noqa: S310 - the operator's configured TSA URL
            self.url, data=body, headers=set_tsp_headers({}), method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                if response.headers.get("Content-Type") != "application/timestamp-reply":
                    raise TimestampRequestError("The timestamp authority's reply is malformed.")
                return tsp.TimeStampResp.load(response.read())
        except OSError as error:
            raise TimestampRequestError("The timestamp authority could not be reached.") from error


def _timestamper() -> TimeStamper | None:
    url = settings.PACKET_TSA_URL
    if not url:
        return None
    if not url.startswith(("http://", "https://")):
        raise ImproperlyConfigured("PACKET_TSA_URL must be an http(s) URL")
    return UrllibTimeStamper(url)


def sign_pdf(
    source: Path,
    target: Path,
    packet_signer: PacketSigner,
    *,
    reason: str,
    attachments: Sequence[PacketAttachment] = (),
) -> datetime:
    """Sign ``source`` into ``target`` over the whole document; returns the signing time.

    ``attachments`` are embedded in the revision the signature covers.
    A certification signature that allows no changes: any later incremental
    update (an added page, a form fill, even a second signature) makes a
    validator report the document as modified.
    """
    metadata = signers.PdfSignatureMetadata(
        field_name=SIGNATURE_FIELD,
        subfilter=SigSeedSubFilter.PADES,
        md_algorithm="sha256",
        reason=reason,
        name=settings.ORGANISATION_NAME or None,
        certify=True,
        docmdp_permissions=MDPPerm.NO_CHANGES,
    )
    pdf_signer = signers.PdfSigner(
        metadata, signer=packet_signer.signer, timestamper=packet_signer.timestamper
    )
    # Read and written in place on disk ("w+b"): pyHanko would otherwise build the
    # signed file in memory, attachments and all.
    with open(source, "rb") as infile, open(target, "w+b") as outfile:
        writer = IncrementalPdfFileWriter(infile, strict=False)
        embed_attachments(writer, attachments, when=datetime.now(UTC))
        outside_event_loop(pdf_signer.sign_pdf, writer, output=outfile)
    with open(target, "rb") as signed:
        embedded = PdfFileReader(signed, strict=False).embedded_regular_signatures[0]
        return embedded.self_reported_timestamp or datetime.now(UTC)

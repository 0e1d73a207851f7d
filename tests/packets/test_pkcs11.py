"""Packets signed by a key held in a PKCS#11 token, with SoftHSM2 standing in for an HSM.

One token for the whole run (a PKCS#11 module is initialised once per process
and reads ``SOFTHSM2_CONF`` then), made in a temporary directory: an RSA key
pair with its self-signed certificate, and a second certificate of another
key for the mismatch case. Packets are issued through the real task and
checked with pyHanko's validator, poppler's ``pdfsig`` and ``verify_packet``.

SoftHSM2 comes from ``scripts/system-deps.sh test``; where it is missing the
tests are skipped, except in CI, where they fail.
"""

import hashlib
import io
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext

from apps.packets.models import AuditPacket, PacketRequest
from apps.packets.pkcs11 import TokenSigningError
from apps.packets.rendering import render_pdf
from apps.packets.services import packet_request_create
from apps.packets.signing import certificate_from_pem, get_signer, sign_pdf
from apps.packets.verification import verify_packet_bytes
from tests.packets.factories import issue_packet, make_packet_case
from tests.packets.pdftools import pdfsig, pdftotext
from tests.packets.test_timestamp import tsa_url  # noqa: F401 - the loopback TSA fixture
from tests.stored import stored_names

pytestmark = pytest.mark.whole_case

TOKEN_LABEL = "diligence-test"
USER_PIN = "4711-2342"
SO_PIN = "so-9876543210"
KEY_LABEL = "packet-signing"
OTHER_CERT_LABEL = "another-keys-certificate"
EC_KEY_LABEL = "packet-signing-ec"
SIGNER_COMMON_NAME = "Example Org packet signing (HSM)"
EC_SIGNER_COMMON_NAME = "Example Org packet signing (HSM, P-256)"

SOFTHSM_UTIL = shutil.which("softhsm2-util")
SOFTHSM_MODULE = next(
    (
        path
        for path in (
            "/usr/lib/softhsm/libsofthsm2.so",
            "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
            "/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
            "/usr/local/lib/softhsm/libsofthsm2.so",
        )
        if Path(path).is_file()
    ),
    None,
)


def _self_signed(common_name: str, key=None) -> tuple:
    key = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example Org"),
        ]
    )
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, certificate


def _put_on_token(session, *, label: str, key_id: bytes, key=None, certificate=None) -> None:
    from pkcs11 import Attribute, MechanismFlag
    from pkcs11.util.ec import decode_ec_private_key
    from pkcs11.util.rsa import decode_rsa_private_key
    from pkcs11.util.x509 import decode_x509_certificate

    stored = {Attribute.TOKEN: True, Attribute.LABEL: label, Attribute.ID: key_id}
    if key is not None:
        der = key.private_bytes(
            serialization.Encoding.DER,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        if isinstance(key, ec.EllipticCurvePrivateKey):
            attributes = {**decode_ec_private_key(der), Attribute.SIGN: True}
        else:
            attributes = decode_rsa_private_key(der, capabilities=MechanismFlag.SIGN)
        session.create_object(
            {**attributes, **stored, Attribute.PRIVATE: True, Attribute.SENSITIVE: True}
        )
    if certificate is not None:
        der = certificate.public_bytes(serialization.Encoding.DER)
        session.create_object({**decode_x509_certificate(der), **stored})


@pytest.fixture(scope="session")
def softhsm_token(tmp_path_factory):
    """A SoftHSM2 token holding the signing key and its certificate; the certificate."""
    if SOFTHSM_UTIL is None or SOFTHSM_MODULE is None:
        message = "needs SoftHSM2: apt-get install softhsm2 (scripts/system-deps.sh test)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    import pkcs11

    directory = tmp_path_factory.mktemp("softhsm")
    (directory / "tokens").mkdir()
    conf = directory / "softhsm2.conf"
    conf.write_text(
        f"directories.tokendir = {directory / 'tokens'}\n"
        "objectstore.backend = file\nlog.level = ERROR\n"
    )
    previous = os.environ.get("SOFTHSM2_CONF")
    os.environ["SOFTHSM2_CONF"] = str(conf)
    try:
        subprocess.run(
            [SOFTHSM_UTIL, "--init-token", "--free", "--label", TOKEN_LABEL]
            + ["--pin", USER_PIN, "--so-pin", SO_PIN],
            check=True,
            capture_output=True,
            timeout=60,
        )
        key, certificate = _self_signed(SIGNER_COMMON_NAME)
        _, other_certificate = _self_signed("Some other key")
        ec_key, ec_certificate = _self_signed(
            EC_SIGNER_COMMON_NAME, ec.generate_private_key(ec.SECP256R1())
        )
        token = pkcs11.lib(SOFTHSM_MODULE).get_token(token_label=TOKEN_LABEL)
        with token.open(rw=True, user_pin=USER_PIN) as session:
            _put_on_token(
                session, label=KEY_LABEL, key_id=b"\x01", key=key, certificate=certificate
            )
            _put_on_token(
                session, label=OTHER_CERT_LABEL, key_id=b"\x02", certificate=other_certificate
            )
            _put_on_token(
                session, label=EC_KEY_LABEL, key_id=b"\x03", key=ec_key, certificate=ec_certificate
            )
        yield certificate
    finally:
        if previous is None:
            os.environ.pop("SOFTHSM2_CONF", None)
        else:
            os.environ["SOFTHSM2_CONF"] = previous


@pytest.fixture
def token(settings, softhsm_token, monkeypatch):
    """Packets signed by the token: the settings an operator would set, and the certificate."""
    from apps.packets import pkcs11

    monkeypatch.setattr(pkcs11, "_refused_pins", set())  # as in a freshly started process
    settings.PACKET_SIGNING_PKCS12_PATH = None
    settings.PACKET_SIGNING_PKCS11_MODULE = SOFTHSM_MODULE
    settings.PACKET_SIGNING_PKCS11_TOKEN_LABEL = TOKEN_LABEL
    settings.PACKET_SIGNING_PKCS11_PIN = USER_PIN
    settings.PACKET_SIGNING_PKCS11_KEY_LABEL = KEY_LABEL
    settings.PACKET_SIGNING_PKCS11_CERT_LABEL = None
    return softhsm_token


class Sessions(list):
    """The sessions opened (each knows whether it was closed), and how many opens were tried."""

    attempts = 0


@pytest.fixture
def sessions(monkeypatch):
    """Every PKCS#11 session the signer opens, each with whether it was closed."""
    import pyhanko.sign.pkcs11

    opened = Sessions()
    original = pyhanko.sign.pkcs11.open_pkcs11_session

    def open_session(*args, **kwargs):
        opened.attempts += 1
        return Recorded(original(*args, **kwargs))

    class Recorded:
        def __init__(self, session):
            self._session, self.closed = session, False
            opened.append(self)

        def __getattr__(self, name):
            return getattr(self._session, name)

        def close(self):
            self.closed = True
            self._session.close()

    monkeypatch.setattr(pyhanko.sign.pkcs11, "open_pkcs11_session", open_session)
    return opened


def _fingerprint(certificate: x509.Certificate) -> str:
    return hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).hexdigest()


def _stored_packet_files() -> list[str]:
    return stored_names("packets")  # on disk or in the test's bucket


def _flip_one_byte(content: bytes) -> bytes:
    altered = bytearray(content)
    altered[len(altered) // 3] ^= 0x01
    return bytes(altered)


def _request_packet(priya, case, django_capture_on_commit_callbacks) -> PacketRequest:
    with django_capture_on_commit_callbacks(execute=True):
        request = packet_request_create(actor=priya, case=case)
    return PacketRequest.objects.get(pk=request.pk)


def test_a_packet_signed_by_the_token_validates_and_one_changed_byte_does_not(
    token, priya, tmp_path, sessions, django_capture_on_commit_callbacks, browser_as
):
    packet = issue_packet(
        priya, make_packet_case(priya, offers=1), django_capture_on_commit_callbacks
    )
    assert sessions and all(session.closed for session in sessions)
    # The packet names the token's certificate, and no development key was made.
    assert SIGNER_COMMON_NAME in packet.signer_subject
    assert packet.signer_certificate_sha256 == _fingerprint(token)
    assert not (tmp_path / "signing").exists()
    content = packet.file.read()

    reader = PdfFileReader(io.BytesIO(content), strict=False)
    (signature,) = reader.embedded_regular_signatures
    roots = [certificate_from_pem(packet.signer_certificate_pem)]
    status = validate_pdf_signature(signature, ValidationContext(trust_roots=roots))
    assert status.intact and status.valid and status.trusted
    assert status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    assert status.signing_cert.subject.native["common_name"] == SIGNER_COMMON_NAME
    path = tmp_path / "packet.pdf"
    path.write_bytes(content)
    verdict = pdfsig(path)
    assert verdict.valid, verdict.output
    assert SIGNER_COMMON_NAME in verdict.output
    # The cover names the token's certificate.
    text = pdftotext(path)
    assert SIGNER_COMMON_NAME in text and packet.signer_certificate_sha256 in text
    call_command("verify_packet", str(path))
    page = _verify_page(browser_as, content)
    assert f"Valid: this is packet {packet.number}, unchanged." in page
    assert SIGNER_COMMON_NAME in page

    altered = _flip_one_byte(content)
    (signature,) = PdfFileReader(io.BytesIO(altered), strict=False).embedded_regular_signatures
    status = validate_pdf_signature(signature, ValidationContext(trust_roots=roots))
    assert not (status.intact and status.valid)
    path.write_bytes(altered)
    verdict = pdfsig(path)
    assert not verdict.signature_valid and not verdict.valid, verdict.output
    assert not verify_packet_bytes(altered).valid
    with pytest.raises(CommandError, match="NOT VALID"):
        call_command("verify_packet", str(path))
    assert "Not valid" in _verify_page(browser_as, altered)


def _verify_page(browser_as, content: bytes) -> str:
    upload = SimpleUploadedFile("packet.pdf", content, content_type="application/pdf")
    response = browser_as("aude").post(reverse("packets:verify"), {"file": upload})
    return response.content.decode()


def test_a_wrong_pin_fails_cleanly_and_leaves_nothing(
    token, settings, priya, sessions, django_capture_on_commit_callbacks, capsys
):
    settings.PACKET_SIGNING_PKCS11_PIN = "0000-wrong"
    case = make_packet_case(priya, offers=1)
    request = _request_packet(priya, case, django_capture_on_commit_callbacks)
    assert request.status == PacketRequest.Status.FAILED
    assert "refused the PIN in PACKET_SIGNING_PKCS11_PIN" in request.error
    assert "0000-wrong" not in request.error and USER_PIN not in request.error
    assert not AuditPacket.objects.exists()
    assert _stored_packet_files() == []
    assert sessions.attempts == 1
    # The command line says the same, without trying the refused PIN on the
    # token again; the next attempt with the right PIN works.
    with pytest.raises(CommandError, match="refused the PIN"):
        call_command("issue_packet", str(case.pk))
    assert sessions.attempts == 1
    assert not AuditPacket.objects.exists()
    settings.PACKET_SIGNING_PKCS11_PIN = USER_PIN
    call_command("issue_packet", str(case.pk))
    assert f"Issued {AuditPacket.objects.get().number}" in capsys.readouterr().out
    assert all(session.closed for session in sessions)


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("PACKET_SIGNING_PKCS11_TOKEN_LABEL", "no-such-token", "No token matching"),
        ("PACKET_SIGNING_PKCS11_KEY_LABEL", "no-such-key", "Could not find certificate"),
        ("PACKET_SIGNING_PKCS11_CERT_LABEL", "no-such-certificate", "Could not find certificate"),
        ("PACKET_SIGNING_PKCS11_MODULE", "/nonexistent/libpkcs11.so", "could not be used"),
    ],
)
def test_a_missing_token_key_or_module_is_named_and_nothing_is_stored(
    token, settings, priya, sessions, django_capture_on_commit_callbacks, setting, value, message
):
    setattr(settings, setting, value)
    with pytest.raises(TokenSigningError, match=message):
        get_signer()
    request = _request_packet(
        priya, make_packet_case(priya, offers=1), django_capture_on_commit_callbacks
    )
    assert request.status == PacketRequest.Status.FAILED
    assert message in request.error
    assert not AuditPacket.objects.exists()
    assert _stored_packet_files() == []
    assert all(session.closed for session in sessions)


def test_a_certificate_with_no_key_on_the_token_is_refused(token, settings):
    # The certificate is there but no private key carries its label.
    settings.PACKET_SIGNING_PKCS11_KEY_LABEL = OTHER_CERT_LABEL
    with pytest.raises(TokenSigningError, match="Could not find private key"):
        get_signer()


def test_a_key_that_does_not_match_its_certificate_signs_nothing(
    token, settings, priya, sessions, django_capture_on_commit_callbacks
):
    settings.PACKET_SIGNING_PKCS11_CERT_LABEL = OTHER_CERT_LABEL
    request = _request_packet(
        priya, make_packet_case(priya, offers=1), django_capture_on_commit_callbacks
    )
    assert request.status == PacketRequest.Status.FAILED
    assert "does not match the certificate" in request.error
    assert not AuditPacket.objects.exists()
    assert _stored_packet_files() == []
    assert sessions and all(session.closed for session in sessions)


def test_the_timestamp_authority_works_with_the_token(token, settings, tmp_path, tsa_url):  # noqa: F811
    settings.PACKET_TSA_URL = tsa_url
    unsigned, signed = tmp_path / "unsigned.pdf", tmp_path / "signed.pdf"
    render_pdf("<p>Timestamped by the token</p>", unsigned)
    sign_pdf(unsigned, signed, get_signer(), reason="test")
    (signature,) = PdfFileReader(io.BytesIO(signed.read_bytes())).embedded_regular_signatures
    assert signature.signer_cert.subject.native["common_name"] == SIGNER_COMMON_NAME
    unsigned_attributes = {
        attribute["type"].native for attribute in signature.signer_info["unsigned_attrs"]
    }
    assert "signature_time_stamp_token" in unsigned_attributes
    roots = [get_signer().certificate]
    status = validate_pdf_signature(signature, ValidationContext(trust_roots=roots))
    assert status.intact and status.valid and status.timestamp_validity is not None


def test_export_manifests_are_signed_by_the_token_too(token, db):
    from apps.audit.signing import sign_detached, verify_detached

    signature = sign_detached(b"an export manifest")
    check = verify_detached(b"an export manifest", signature)
    assert check.valid and SIGNER_COMMON_NAME in check.signer_subject
    assert not verify_detached(b"an export manifest, altered", signature).valid


def test_an_ec_key_on_the_token_signs_too(token, settings, tmp_path):
    settings.PACKET_SIGNING_PKCS11_KEY_LABEL = EC_KEY_LABEL
    unsigned, signed = tmp_path / "unsigned.pdf", tmp_path / "signed.pdf"
    render_pdf("<p>Signed with ECDSA in the token</p>", unsigned)
    packet_signer = get_signer()
    sign_pdf(unsigned, signed, packet_signer, reason="test")
    (signature,) = PdfFileReader(io.BytesIO(signed.read_bytes())).embedded_regular_signatures
    roots = [packet_signer.certificate]
    status = validate_pdf_signature(signature, ValidationContext(trust_roots=roots))
    assert status.intact and status.valid and status.trusted
    assert status.signing_cert.subject.native["common_name"] == EC_SIGNER_COMMON_NAME
    assert status.md_algorithm == "sha256" and "ecdsa" in status.pkcs7_signature_mechanism
    verdict = pdfsig(signed)
    assert verdict.valid, verdict.output

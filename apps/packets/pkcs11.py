"""Packet signing with a key held in a PKCS#11 token, such as an HSM
(docs/rules/audit.md#packet-signing).

The private key never leaves the token. ``token_certificate`` reads the
signer's certificate from the token in a session of its own, so a packet can
name its signer before it is rendered; then every signature opens a session,
logs in with the PIN, signs and closes the session, whatever happens. pyHanko's
PKCS#11 support (``pyhanko.sign.pkcs11``, on ``python-pkcs11``) talks to the
module; both are imported only when a token is configured.
"""

import contextlib
import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from asn1crypto import x509 as asn1_x509
from cryptography.exceptions import InvalidSignature
from django.conf import settings
from pyhanko.sign import signers
from pyhanko_certvalidator.registry import SimpleCertificateStore
from pyhanko_certvalidator.sig_validate import DefaultSignatureValidator

logger = logging.getLogger(__name__)


class TokenSigningError(Exception):
    """The token could not sign: module, token, PIN, key or certificate is wrong."""


@dataclass(frozen=True)
class TokenSettings:
    """Where the signing key is: module, token label, PIN, key and certificate labels."""

    module_path: str
    token_label: str
    pin: str
    key_label: str
    cert_label: str

    def __repr__(self) -> str:  # the PIN stays out of logs and tracebacks
        return (
            f"TokenSettings(module_path={self.module_path!r}, "
            f"token_label={self.token_label!r}, key_label={self.key_label!r}, "
            f"cert_label={self.cert_label!r})"
        )


def configured_token() -> TokenSettings | None:
    """The token named in the settings, or None when packets are not signed by one."""
    module_path = settings.PACKET_SIGNING_PKCS11_MODULE
    if not module_path:
        return None
    token_label = settings.PACKET_SIGNING_PKCS11_TOKEN_LABEL
    pin = settings.PACKET_SIGNING_PKCS11_PIN
    key_label = settings.PACKET_SIGNING_PKCS11_KEY_LABEL
    # Start-up refuses a module named without these three (config.settings).
    assert token_label is not None and pin is not None and key_label is not None
    return TokenSettings(
        module_path=str(module_path),
        token_label=token_label,
        pin=pin,
        key_label=key_label,
        cert_label=settings.PACKET_SIGNING_PKCS11_CERT_LABEL or key_label,
    )


# PINs a token refused in this process. Each failed login counts against the
# token's retry limit, and an HSM locks its user PIN after a few: a refused PIN
# is not tried again until the process restarts with the settings fixed.
_refused_pins: set[tuple[str, str, str]] = set()


def _pin_key(token: TokenSettings) -> tuple[str, str, str]:
    return token.module_path, token.token_label, hashlib.sha256(token.pin.encode()).hexdigest()


def _refused_pin_error(token: TokenSettings) -> TokenSigningError:
    return TokenSigningError(
        f"The PKCS#11 token {token.token_label!r} (module {token.module_path}) refused "
        "the PIN in PACKET_SIGNING_PKCS11_PIN; it is not tried again until the web and "
        "worker processes restart, so as not to lock the token."
    )


def _explain(error: Exception, token: TokenSettings) -> TokenSigningError:
    import pkcs11

    where = f"token {token.token_label!r} (module {token.module_path})"
    if isinstance(error, pkcs11.PinIncorrect | pkcs11.PinInvalid | pkcs11.PinLenRange):
        _refused_pins.add(_pin_key(token))
        return _refused_pin_error(token)
    if isinstance(error, pkcs11.PinLocked):
        text = f"The PIN of the PKCS#11 {where} is locked."
    elif isinstance(error, pkcs11.TokenNotPresent | pkcs11.TokenNotRecognised):
        text = f"The PKCS#11 {where} is not present."
    else:
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        text = f"The PKCS#11 {where} could not be used: {detail}"
    return TokenSigningError(text)


@contextlib.contextmanager
def token_signer(
    token: TokenSettings, *, certificate: asn1_x509.Certificate | None = None
) -> Iterator[signers.Signer]:
    """pyHanko's signer on a logged-in session of the token; the session is closed on leaving.

    Without ``certificate``, the certificate is read from the token on first use.
    """
    import pkcs11
    from pyhanko.config.pkcs11 import TokenCriteria
    from pyhanko.sign.pkcs11 import PKCS11Signer, open_pkcs11_session

    if _pin_key(token) in _refused_pins:
        raise _refused_pin_error(token)
    try:
        session = open_pkcs11_session(
            token.module_path,
            token_criteria=TokenCriteria(label=token.token_label),
            user_pin=token.pin,
        )
    except pkcs11.PKCS11Error as error:
        raise _explain(error, token) from None
    try:
        yield PKCS11Signer(
            session,
            cert_label=token.cert_label,
            key_label=token.key_label,
            signing_cert=certificate,
            other_certs_to_pull=(),
            # ECDSA: hashed here and the digest signed in the token (CKM_ECDSA),
            # which every token offers; many lack the hash-and-sign mechanisms.
            use_raw_mechanism=certificate is not None and certificate.public_key.algorithm == "ec",
        )
    except pkcs11.PKCS11Error as error:
        raise _explain(error, token) from None
    finally:
        try:
            session.close()
        except pkcs11.PKCS11Error as error:  # e.g. a token removed mid-session
            logger.warning("Closing the PKCS#11 session failed: %s", _explain(error, token))


def token_certificate(token: TokenSettings) -> asn1_x509.Certificate:
    """The signer's certificate, read from the token; also makes sure the key is there."""
    with token_signer(token) as signer:
        # Loading the certificate also looks up the private key, so a token
        # without the key fails here, before any packet is rendered.
        return signer.signing_cert


class TokenSigner(signers.Signer):
    """A pyHanko signer whose every signature is made in a fresh session of the token."""

    def __init__(self, token: TokenSettings, certificate: asn1_x509.Certificate) -> None:
        super().__init__(
            signing_cert=certificate,
            cert_registry=SimpleCertificateStore.from_certs([certificate]),
        )
        self.token = token

    def estimate_raw_signature_size_bytes(self) -> int:
        # Room for an RSA signature of the key's size or a DER-encoded ECDSA one.
        assert self.signing_cert is not None  # given to __init__
        return max(512, self.signing_cert.public_key.bit_size // 4 + 16)

    async def async_sign_raw(self, data: bytes, digest_algorithm: str, dry_run=False) -> bytes:
        if dry_run:  # pyHanko sizes the signature field first
            return bytes(self.estimate_raw_signature_size_bytes())
        with token_signer(self.token, certificate=self.signing_cert) as signer:
            signature = await signer.async_sign_raw(data, digest_algorithm)
        self._check_key_matches_certificate(signature, data, digest_algorithm)
        return signature

    def _check_key_matches_certificate(
        self, signature: bytes, data: bytes, digest_algorithm: str
    ) -> None:
        # A key and a certificate of different pairs would sign packets that
        # no one can verify: refuse before anything is stored.
        assert self.signing_cert is not None  # given to __init__
        try:
            DefaultSignatureValidator().validate_signature(
                signature,
                data,
                self.signing_cert.public_key,
                self.get_signature_mechanism_for_digest(digest_algorithm),
            )
        except (InvalidSignature, ValueError) as error:
            raise TokenSigningError(
                f"The key {self.token.key_label!r} on PKCS#11 token "
                f"{self.token.token_label!r} does not match the certificate "
                f"{self.token.cert_label!r}: its signature does not verify."
            ) from error

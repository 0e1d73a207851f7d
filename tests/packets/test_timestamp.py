"""PAdES B-T: with PACKET_TSA_URL set, the signature carries an RFC 3161 timestamp.

The timestamp authority is a loopback HTTP server answering with pyHanko's
test TSA, so the HTTP client we ship is exercised end to end.
"""

import io
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from asn1crypto import tsp
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pyhanko.keys.internal import (
    translate_pyca_cryptography_cert_to_asn1,
    translate_pyca_cryptography_key_to_asn1,
)
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.timestamps.dummy_client import DummyTimeStamper

from apps.packets.rendering import render_pdf
from apps.packets.signing import get_signer, sign_pdf

pytestmark = pytest.mark.whole_case


def _test_tsa() -> DummyTimeStamper:
    # pyHanko's test TSA signs with RSA only.
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Loopback test TSA")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .sign(key, hashes.SHA256())
    )
    return DummyTimeStamper(
        tsa_cert=translate_pyca_cryptography_cert_to_asn1(cert),
        tsa_key=translate_pyca_cryptography_key_to_asn1(key),
    )


@pytest.fixture
def tsa_url():
    tsa = _test_tsa()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            reply = tsa.request_tsa_response(tsp.TimeStampReq.load(body)).dump()
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/tsa"
    server.shutdown()


def test_a_configured_tsa_timestamps_the_signature(settings, tmp_path, tsa_url):
    settings.PACKET_TSA_URL = tsa_url
    unsigned, signed = tmp_path / "unsigned.pdf", tmp_path / "signed.pdf"
    render_pdf("<p>Timestamped</p>", unsigned)
    sign_pdf(unsigned, signed, get_signer(), reason="test")
    (signature,) = PdfFileReader(io.BytesIO(signed.read_bytes())).embedded_regular_signatures
    unsigned_attributes = {
        attribute["type"].native: attribute["values"][0]
        for attribute in signature.signer_info["unsigned_attrs"]
    }
    token = unsigned_attributes["signature_time_stamp_token"]
    tsa_certificate = token["content"]["certificates"][0].chosen
    assert tsa_certificate.subject.native["common_name"] == "Loopback test TSA"

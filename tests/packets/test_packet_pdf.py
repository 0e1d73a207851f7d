"""The issued PDF itself: signed, complete, readable, and broken by one changed byte.

A small packet is issued through the real task (eager Celery), so what is checked
is exactly what a user downloads; once for the module, as its tests only read it.
"""

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext
from pypdf import PdfReader

from apps.audit.sources import case_history_querysets
from apps.packets.manifest import history_row_sha256, latest_history_rows
from apps.packets.signing import DEVELOPMENT_COMMON_NAME, certificate_from_pem
from apps.packets.verification import verify_packet_bytes
from tests.packets.factories import (
    CHINESE_CASE,
    CHINESE_VENDOR,
    issue_module_packet,
    issue_packet,
    make_packet_case,
    packet_for_test,
)
from tests.packets.pdftools import parse_pdfsig, pdffonts, pdfsig, pdftotext

pytestmark = pytest.mark.whole_case

SECTION_HEADINGS = [
    "Contents",
    "Executive summary",
    "Compute demand and sizing",
    "Comparison of offers and scorecards",
    "Declared specs",
    "Change history",
    "Manifest",
]


@pytest.fixture(scope="module")
def _issued(module_people, tmp_path_factory):
    """One packet for the module: its tests read it and alter only copies of its bytes."""
    priya = module_people["priya"]
    return issue_module_packet(
        tmp_path_factory, lambda capture: issue_packet(priya, make_packet_case(priya), capture)
    )


@pytest.fixture
def packet(_issued, db):
    return packet_for_test(_issued)


def _pyhanko_status(content: bytes, packet):
    reader = PdfFileReader(io.BytesIO(content), strict=False)
    (signature,) = reader.embedded_regular_signatures
    roots = [certificate_from_pem(packet.signer_certificate_pem)]
    return validate_pdf_signature(signature, ValidationContext(trust_roots=roots))


def _flip_one_byte(content: bytes) -> bytes:
    # A byte inside the signed range, in the middle of the page content.
    altered = bytearray(content)
    altered[len(altered) // 3] ^= 0x01
    return bytes(altered)


def test_the_signed_packet_validates_and_reads_completely(packet, tmp_path):
    content = packet.file.read()
    path = tmp_path / "packet.pdf"
    path.write_bytes(content)

    status = _pyhanko_status(content, packet)
    assert status.intact and status.valid and status.trusted
    assert status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    assert DEVELOPMENT_COMMON_NAME in status.signing_cert.subject.human_friendly

    if shutil.which("pdfsig"):
        verdict = pdfsig(path)
        assert verdict.valid, verdict.output
        assert DEVELOPMENT_COMMON_NAME in verdict.output

    result = verify_packet_bytes(content)
    assert result.valid and result.issued_packet == packet
    assert result.signer_subject == packet.signer_subject

    # Every section, the cover facts, and Chinese text.
    text = pdftotext(path)
    for heading in SECTION_HEADINGS:
        assert heading in text, heading
    assert CHINESE_CASE in text and CHINESE_VENDOR in text
    assert packet.number in text
    assert f"Page 1 of {packet.page_count}" in text
    assert packet.signer_certificate_sha256 in text
    assert "Unconfirmed" in text  # the second offer's empty declared spec

    # The executive summary is the first chapter; it lists every open and accepted finding,
    # so it runs on as long as they do, and ends before the next chapter.
    pages = text.split("\f")
    first = next(i for i, page in enumerate(pages) if "Open blockers" in page)
    summary = "\f".join(pages[first : first + 3])
    assert "1. Executive summary" in pages[first] and "Audit chain head" in summary
    assert "No offer holds every gate." in summary

    # Chinese glyphs come from the embedded Simplified Chinese face, not boxes.
    fonts = pdffonts(path)
    assert "Noto-Sans-CJK-SC" in fonts
    assert "CJK-JP" not in fonts

    # The attached manifest: its digest is recorded, and each record's digest
    # is printed and is the digest of that record's latest history row.
    raw = _attachment_bytes(path)
    assert hashlib.sha256(raw).hexdigest() == packet.manifest_sha256
    manifest = json.loads(raw)
    assert manifest["packet"] == packet.number
    assert manifest["evidence_files"] == []
    expected = {}
    for queryset in case_history_querysets(packet.case):
        label = queryset.model.instance_type._meta.label_lower
        for row in latest_history_rows(queryset):
            expected[(label, row.id)] = (row.history_id, history_row_sha256(row))
    got = {
        (r["record_type"], r["record_id"]): (r["history_id"], r["sha256"])
        for r in manifest["records"]
    }
    # The packet's own request moved on (to done) after the manifest was written, and the
    # packet's record did not exist yet: the manifest holds the request as it stood then.
    own_request = ("packets.packetrequest", packet.request_id)
    assert got.pop(own_request)[0] < expected.pop(own_request)[0]
    expected.pop(("packets.auditpacket", packet.pk))
    assert got == expected
    flat = text.replace("\n", "")
    for record in manifest["records"]:
        assert record["sha256"] in flat, record


def test_one_changed_byte_or_an_appended_update_is_not_valid(packet, tmp_path):
    content = packet.file.read()

    altered = _flip_one_byte(content)
    status = _pyhanko_status(altered, packet)
    assert not (status.intact and status.valid)
    path = tmp_path / "altered.pdf"
    path.write_bytes(altered)
    if shutil.which("pdfsig"):
        verdict = pdfsig(path)
        assert not verdict.signature_valid, verdict.output
        assert not verdict.valid
    result = verify_packet_bytes(altered)
    assert not result.valid and not result.intact and result.issued_packet is None

    # What a reader's "save" does: an incremental update after the signed bytes.
    writer = IncrementalPdfFileWriter(io.BytesIO(content), strict=False)
    writer.root["/PageMode"] = generic.NameObject("/UseOutlines")
    writer.update_root()
    out = io.BytesIO()
    writer.write(out)
    path = tmp_path / "appended.pdf"
    path.write_bytes(out.getvalue())
    if shutil.which("pdfsig"):
        verdict = pdfsig(path)
        assert verdict.signature_valid  # pdfsig's own words...
        assert not verdict.total_document_signed  # ...but not over the whole file
        assert not verdict.valid
    result = verify_packet_bytes(out.getvalue())
    assert not result.valid and not result.covers_whole_document


def _attachment_bytes(path: Path) -> bytes:
    attachments = PdfReader(path).attachments
    # The manifest, and the full history: a CSV and a JSON per record type.
    assert "manifest.json" in attachments
    others = set(attachments) - {"manifest.json"}
    assert others and all(name.startswith("history-") for name in others)
    return attachments["manifest.json"][0]


def test_pdfsig_parser_reads_the_three_verdicts():
    valid = (
        "Signature #1:\n  - Total document signed\n  - Signature Validation: Signature is Valid.\n"
    )
    assert parse_pdfsig(valid).valid
    appended = valid.replace("Total document signed", "Not total document signed")
    assert not parse_pdfsig(appended).valid
    mismatch = valid.replace("Signature is Valid.", "Digest Mismatch.")
    assert not parse_pdfsig(mismatch).valid
    assert not parse_pdfsig("File 'x.pdf' does not contain any signatures\n").valid

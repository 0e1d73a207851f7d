"""The full history travels inside the signed PDF: attached, listed in the manifest, checked.

The packet is issued through the real task (eager Celery), so the PDF checked is the
one a user downloads; it is issued once for the module, as its tests only read it.
"""

import csv
import hashlib
import io
import json
import shutil
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext
from pypdf import PdfReader

from apps.audit.chain import late_columns, row_digest
from apps.audit.exports import build_case_export
from apps.packets.signing import certificate_from_pem
from apps.packets.verification import AttachmentStatus, verify_packet_bytes
from apps.scorecards.models import ScoreEntry
from apps.scorecards.services import scorecard_save
from tests.packets.factories import (
    issue_module_packet,
    issue_packet,
    make_packet_case,
    packet_for_test,
)
from tests.packets.pdftools import pdfsig

pytestmark = pytest.mark.whole_case


@pytest.fixture(scope="module")
def _issued(module_people, tmp_path_factory):
    """One packet for the module: its tests read it and alter only copies of its bytes."""
    priya = module_people["priya"]

    def build(capture):
        case = make_packet_case(priya)
        offer = case.offers.order_by("pk").first()
        for score in (2, 3, 4):  # a history longer than the records
            scorecard_save(actor=priya, offer=offer, scores={"pricing": {"score": score}})
        return issue_packet(priya, case, capture)

    return issue_module_packet(tmp_path_factory, build)


@pytest.fixture
def packet(_issued, db):
    return packet_for_test(_issued)


def attachments_of(content: bytes) -> dict[str, bytes]:
    return {name: data[0] for name, data in PdfReader(io.BytesIO(content)).attachments.items()}


def test_the_full_history_is_attached_and_listed_in_the_manifest(packet):
    content = packet.file.read()
    files = attachments_of(content)
    manifest_bytes = files.pop("manifest.json")
    assert hashlib.sha256(manifest_bytes).hexdigest() == packet.manifest_sha256
    manifest = json.loads(manifest_bytes)
    listed = {entry["name"]: entry for entry in manifest["attachments"]}
    assert set(listed) == set(files)
    for name, data in files.items():
        assert hashlib.sha256(data).hexdigest() == listed[name]["sha256"], name
        assert len(data) == listed[name]["size"]

    # Every history row of the case, a CSV and a JSON per record type.
    rows = json.loads(files["history-scorecards.scoreentry.json"])
    history = ScoreEntry.history.model.objects.filter(scorecard__offer__case=packet.case)
    assert len(rows) == history.count() == listed["history-scorecards.scoreentry.json"]["rows"]
    assert [r["history_id"] for r in rows] == sorted(history.values_list("history_id", flat=True))
    table = list(csv.DictReader(io.StringIO(files["history-scorecards.scoreentry.csv"].decode())))
    assert len(table) == len(rows)
    assert {"history_user_username", "chain_entry_hash"} <= set(table[0])
    assert table[0]["history_user_username"] == "priya"

    # The JSON holds each row as the audit chain digests it.
    model = history.model
    for row in rows:
        chain = row.pop("chain")
        assert chain is not None
        assert row_digest(row, late=late_columns(model)) == chain["row_digest"]


def test_the_case_export_carries_the_same_files(packet):
    files = attachments_of(packet.file.read())
    buffer = io.BytesIO()
    build_case_export(packet.case, buffer)
    archive = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    # Record types the packet's own issuing did not change since.
    for key in ("offers.offer", "scorecards.scoreentry", "sizing.computedemand"):
        for extension in ("csv", "json"):
            exported = archive.read(f"history/{key}.{extension}")
            assert exported == files[f"history-{key}.{extension}"], (key, extension)


def test_pyhanko_and_pdfsig_accept_the_packet_with_its_attachments(packet, tmp_path):
    content = packet.file.read()
    reader = PdfFileReader(io.BytesIO(content), strict=False)
    (signature,) = reader.embedded_regular_signatures
    roots = [certificate_from_pem(packet.signer_certificate_pem)]
    status = validate_pdf_signature(signature, ValidationContext(trust_roots=roots))
    assert status.intact and status.valid and status.trusted
    assert status.coverage == SignatureCoverageLevel.ENTIRE_FILE

    result = verify_packet_bytes(content)
    assert result.valid, result.problems
    assert result.attachments_ok
    assert {check.status for check in result.attachments} == {AttachmentStatus.OK}
    assert len(result.attachments) == len(attachments_of(content)) - 1  # all but the manifest

    if shutil.which("pdfsig") is None:
        pytest.skip("poppler's pdfsig is not installed")
    path = tmp_path / "packet.pdf"
    path.write_bytes(content)
    verdict = pdfsig(path)
    assert verdict.valid, verdict.output


def _attachment_stream_offset(content: bytes, name: str) -> tuple[int, int]:
    """Where the (compressed) bytes of attachment ``name`` lie in the file."""
    reader = PdfFileReader(io.BytesIO(content), strict=False)
    names = list(reader.root["/Names"]["/EmbeddedFiles"]["/Names"])
    for key, value in zip(names[::2], names[1::2], strict=True):
        if str(key) == name:
            encoded = value.get_object()["/EF"]["/F"].encoded_data
            start = content.index(encoded)
            assert content.count(encoded) == 1
            return start, len(encoded)
    raise AssertionError(f"{name} is not attached")


@pytest.mark.parametrize("where", ["middle", "end"])
def test_one_flipped_byte_in_an_attachment_is_caught(packet, tmp_path, where):
    content = packet.file.read()
    name = "history-scorecards.scoreentry.json"
    start, length = _attachment_stream_offset(content, name)
    altered = bytearray(content)
    altered[start + (length // 2 if where == "middle" else length - 1)] ^= 0x01
    altered = bytes(altered)

    result = verify_packet_bytes(altered)
    assert not result.valid and not result.attachments_ok
    (check,) = [c for c in result.attachments if c.name == name]
    assert check.status in (AttachmentStatus.UNREADABLE, AttachmentStatus.MISMATCH)
    assert any(name in problem for problem in result.problems), result.problems
    others = [c for c in result.attachments if c.name != name]
    assert others and all(c.status == AttachmentStatus.OK for c in others)

    path = tmp_path / "altered.pdf"
    path.write_bytes(altered)
    with pytest.raises(CommandError, match="NOT VALID"):
        call_command("verify_packet", str(path))


def test_verify_packet_lists_the_attachments_it_checked(packet, tmp_path, capsys):
    path = tmp_path / "packet.pdf"
    path.write_bytes(packet.file.read())
    call_command("verify_packet", str(path))
    out = capsys.readouterr().out
    files = attachments_of(path.read_bytes())
    assert f"{len(files) - 1} of {len(files) - 1} match the manifest (yes)" in out
    assert "history-scorecards.scoreentry.csv" in out

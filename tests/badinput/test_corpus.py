"""The generator itself: every payload is built, is named as listed, and differs from its base."""

import io
import json
import zipfile

import pytest

from tests.badinput.corpus import (
    CSV,
    JSON,
    PDF,
    ZIP,
    attachment_payloads,
    manifest_payloads,
    minimal_pdf,
    zip_of,
)
from tests.badinput.refusal import stored_state

BASES = {
    "JSON": (JSON, json.dumps({"name": "x", "count": 1}).encode()),
    "PDF": (PDF, minimal_pdf()),
    "ZIP": (
        ZIP,
        zip_of(
            [
                ("manifest.json", json.dumps({"files": [{"path": "a", "size": 1}]}).encode()),
                ("a", b"1"),
            ]
        ),
    ),
    "CSV": (CSV, b"date,item,amount_cny\n2026-11-01,H200 node-hours,1200.00\n"),
}
SAME_BYTES = {("PDF", "wrong_content_type"), ("PDF", "path_trick_file_name")}
CASES = [(family, name) for family, (builders, _base) in BASES.items() for name in builders]


@pytest.mark.parametrize("family,name", CASES, ids=[f"{f}-{n}" for f, n in CASES])
def test_every_payload_is_built_and_differs_from_its_base(family, name):
    builders, base = BASES[family]
    payload = builders[name](base)
    assert payload.name == name
    assert isinstance(payload.body, bytes)
    if (family, name) not in SAME_BYTES:
        assert payload.body != base


def test_manifest_payloads_replace_only_the_manifest():
    _builders, base = BASES["ZIP"]
    for name, build in manifest_payloads("manifest.json").items():
        with zipfile.ZipFile(io.BytesIO(build(base).body)) as archive:
            assert archive.read("a") == b"1", name
            assert archive.read("manifest.json") != zipfile.ZipFile(io.BytesIO(base)).read(
                "manifest.json"
            ), name


def test_attachment_payloads_sit_just_past_the_limit():
    payloads = attachment_payloads(1000)
    assert len(payloads["one_byte_over"].body) == 1001
    assert payloads["empty"].body == b""


@pytest.mark.postgres  # the generator's own tests above touch no database
def test_the_snapshot_covers_history_tables_and_files(db, tmp_path):
    (tmp_path / "a.bin").write_bytes(b"1")
    state = stored_state(tmp_path)
    assert "evidence.HistoricalEvidenceBundle" in state["rows"]
    assert "packets.HistoricalAuditPacket" in state["rows"]
    assert "assessments.HistoricalAssessmentAnswer" in state["rows"]
    assert list(state["files"]) == [str(tmp_path / "a.bin")]

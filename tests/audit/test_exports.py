"""Auditor exports (issue 7 part 5): the demo case's export verifies; any alteration is found."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from apps.audit.export_check import unsafe_name, verify_export
from apps.audit.exports import MANIFEST, SIGNATURE, build_case_export
from apps.offers.services import offer_update
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres


@pytest.fixture
def demo(demo_case):
    return demo_case


@pytest.fixture
def case(priya):
    case = make_case(priya, name="Exported")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    offer_update(actor=priya, offer=offer, fields={"notes": "Quote v2"}, reason="New quote")
    return case


def _export(case) -> tuple[bytes, dict]:
    buffer = io.BytesIO()
    manifest = build_case_export(case, buffer)
    return buffer.getvalue(), manifest


@pytest.fixture
def export(case):
    return _export(case)


def _rewrite(data: bytes, change) -> bytes:
    """Copy the archive, letting ``change(name, content)`` alter, drop (None) or add members."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            content = change(name, source.read(name))
            if content is not None:
                target.writestr(name, content)
    return out.getvalue()


def _problems(data: bytes) -> list[str]:
    check = verify_export(io.BytesIO(data))
    assert not check.valid
    return check.problems


def test_the_demo_case_export_holds_every_part_and_verifies(demo):
    data, manifest = _export(demo)
    names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    for key in ["cases.procurementcase", "offers.offer", "offers.declaredspec"]:
        assert {f"records/{key}.json", f"records/{key}.csv", f"history/{key}.json"} <= names
    assert {MANIFEST, SIGNATURE} <= names
    assert {f["path"] for f in manifest["files"]} == names - {MANIFEST, SIGNATURE}
    assert manifest["case"] == {"id": demo.pk, "name": demo.name}
    assert manifest["chain"]["head_seq"] > 0
    history = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("history/offers.offer.json"))
    assert all(row["chain"]["entry_hash"] for row in history)
    check = verify_export(io.BytesIO(data))
    assert check.valid, check.problems
    assert check.files_checked == len(manifest["files"])
    assert "Diligence development signing key" in check.signature.signer_subject
    for name in [f["path"] for f in manifest["files"]]:
        altered = _rewrite(data, lambda n, c, name=name: c[:-1] if n == name else c)
        assert not verify_export(io.BytesIO(altered)).valid, name


def test_altering_any_file_inside_is_detected(export):
    data, manifest = export
    for name in [f["path"] for f in manifest["files"]]:
        altered = _rewrite(data, lambda n, c, name=name: c + b" " if n == name else c)
        assert _problems(altered) == [
            f"{name} does not match its SHA-256 in the manifest: it was altered."
        ], name


def test_an_edited_manifest_or_signature_is_detected(export):
    data, _manifest = export
    problems = _problems(
        _rewrite(
            data, lambda n, c: c.replace(b'"version": 1', b'"version": 2') if n == MANIFEST else c
        )
    )
    assert "The manifest does not match its signature: it was altered." in problems
    problems = _problems(_rewrite(data, lambda n, c: c[:-3] + b"xyz" if n == SIGNATURE else c))
    assert problems and "signature" in problems[0]


def test_missing_and_extra_files_are_detected(export):
    data, manifest = export
    dropped = manifest["files"][0]["path"]
    problems = _problems(_rewrite(data, lambda n, c: None if n == dropped else c))
    assert problems == [f"{dropped} is listed in the manifest but missing."]

    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            target.writestr(name, source.read(name))
        target.writestr("records/smuggled.json", b"[]")
    assert _problems(out.getvalue()) == [
        "records/smuggled.json is in the archive but not in the manifest."
    ]
    assert _problems(_rewrite(data, lambda n, c: None if n == SIGNATURE else c)) == [
        "manifest.json.sig is missing."
    ]


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../outside.json", "records/../../x", "C:/x", "a\\b", "records//x"]
)
def test_unsafe_member_names_are_refused(export, name):
    assert unsafe_name(name)
    data, _manifest = export
    out = io.BytesIO()
    source = zipfile.ZipFile(io.BytesIO(data))
    with zipfile.ZipFile(out, "w") as target:
        for member in source.namelist():
            target.writestr(member, source.read(member))
        target.writestr(zipfile.ZipInfo(name), b"x")
    assert any("Unsafe" in p for p in _problems(out.getvalue()))


def test_an_export_signed_by_another_key_is_not_trusted(export, settings, tmp_path):
    data, _manifest = export
    settings.PACKET_SIGNING_DIR = str(tmp_path / "another-key")
    from apps.audit.signing import sign_detached

    manifest = zipfile.ZipFile(io.BytesIO(data)).read(MANIFEST)
    forged = _rewrite(data, lambda n, c: sign_detached(manifest) if n == SIGNATURE else c)
    settings.PACKET_SIGNING_DIR = str(tmp_path / "unused")  # neither key is the forger's now
    assert "The manifest was not signed by a key of this organisation." in _problems(forged)


def test_not_a_zip_is_reported():
    assert verify_export(io.BytesIO(b"%PDF-1.7 nope")).problems == [
        "This file is not a ZIP archive."
    ]


def test_the_commands_export_and_verify(case, tmp_path, capsys):
    target = tmp_path / "case.zip"
    call_command("export_case", str(case.pk), str(target))
    call_command("verify_export", str(target))
    out = capsys.readouterr().out
    assert "export valid" in out and "signed by:" in out
    altered = tmp_path / "altered.zip"
    altered.write_bytes(
        _rewrite(target.read_bytes(), lambda n, c: c + b"\n" if n.startswith("history/") else c)
    )
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_export", str(altered))
    assert exit_.value.code == 1
    assert "does not match its SHA-256" in capsys.readouterr().err


def test_the_browser_exports_and_checks_an_upload(browser_as, case):
    client = browser_as("aude")
    response = client.get(reverse("audit:case-export", args=[case.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    data = b"".join(response.streaming_content)
    upload = SimpleUploadedFile("export.zip", data, content_type="application/zip")
    page = client.post(reverse("audit:verify-export"), {"file": upload})
    assert page.context["check"].valid
    assert "Valid: the export is complete and unaltered." in page.content.decode()
    bad = _rewrite(data, lambda n, c: c + b" " if n.startswith("records/") else c)
    page = client.post(reverse("audit:verify-export"), {"file": SimpleUploadedFile("x.zip", bad)})
    assert not page.context["check"].valid


def test_oversized_uploads_are_refused_before_reading(browser_as, settings):
    settings.AUDIT_EXPORT_MAX_UPLOAD_BYTES = 10
    client = browser_as("aude")
    page = client.post(
        reverse("audit:verify-export"), {"file": SimpleUploadedFile("x.zip", b"0" * 5000)}
    )
    assert page.context["check"] is None
    assert "file" in page.context["form"].errors


def test_an_evidence_file_missing_from_storage_is_reported_not_fatal(case, tariq):
    from tests.evidence.factories import make_bundle_record, make_token

    offer = case.offers.first()
    issued = make_token(tariq, case, offer)
    bundle = make_bundle_record(case, offer, issued.record, n=7)  # no file behind it
    data, manifest = _export(case)
    [listed] = manifest["evidence"]
    assert listed["recorded_sha256"] == bundle.sha256
    assert listed["missing_from_storage"] is True
    assert listed["matches_recorded"] is False
    assert listed["path"] is None
    assert not any(n.startswith("evidence/") for n in zipfile.ZipFile(io.BytesIO(data)).namelist())
    assert verify_export(io.BytesIO(data)).valid  # the archive itself is intact

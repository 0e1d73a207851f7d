"""A chain moved back (a database restored from an older backup) is reported as a rewind.

Packets and exports record the chain head in their manifests; a copy of each
recorded head is kept in file storage, which a database restore does not take
back. The verifier then finds the chain shorter than a head it once had, or
holding a different entry at that place.
"""

import io
import json
import zipfile

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from pypdf import PdfReader

from apps.audit.exports import MANIFEST, build_case_export
from apps.audit.heads import recorded_head_write, recorded_heads
from apps.audit.models import ChainHead
from apps.audit.verification import Kind, verify_chain
from tests.audit.tampering import chain_restore_to
from tests.factories import make_case
from tests.packets.factories import issue_packet, make_packet_case
from tests.stored import StoredObject, replace_stored, stored_names

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    # Recorded heads are written to file storage: a fresh folder per test.
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def packet(priya, django_capture_on_commit_callbacks):
    return issue_packet(
        priya, make_packet_case(priya, offers=1), django_capture_on_commit_callbacks
    )


def _packet_manifest(packet) -> dict:
    attachments = PdfReader(io.BytesIO(packet.file.read())).attachments
    return json.loads(attachments["manifest.json"][0])


def test_a_packet_records_the_chain_head_in_its_manifest_and_in_storage(packet):
    chain = _packet_manifest(packet)["chain"]
    assert 0 < chain["head_seq"] < ChainHead.objects.get().seq  # issuing wrote history since
    (head,) = recorded_heads()
    assert (head.seq, head.entry_hash, head.source, head.reference) == (
        chain["head_seq"],
        chain["head_hash"],
        "packet",
        packet.number,
    )


def test_the_chain_verifies_clean_with_the_head_a_packet_recorded(packet, capsys):
    call_command("verify_audit_chain")
    assert "1 heads recorded by packets and exports still held" in capsys.readouterr().out


def test_deleting_the_newest_chain_rows_after_a_packet_is_reported_as_a_rewind(packet, capsys):
    recorded = _packet_manifest(packet)["chain"]["head_seq"]
    chain_restore_to(recorded - 3)
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_audit_chain")
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert (
        f"first broken row — chain entry #{recorded}: the chain ends at #{recorded - 3}, "
        f"but packet {packet.number} recorded its head at #{recorded}: "
        "the chain was moved back"
    ) in err
    assert Kind.REWIND in {p.kind for p in verify_chain().problems}


def test_a_restored_chain_written_past_the_recorded_head_is_reported(packet, priya, capsys):
    recorded = _packet_manifest(packet)["chain"]["head_seq"]
    chain_restore_to(recorded - 3)
    while ChainHead.objects.get().seq <= recorded:
        make_case(priya)  # the restored database in use again
    with pytest.raises(SystemExit):
        call_command("verify_audit_chain")
    err = capsys.readouterr().err
    assert (f"the chain's entry #{recorded} is not the one packet {packet.number} recorded") in err


def test_an_export_records_the_head_and_a_rewind_after_it_is_reported(
    priya, django_capture_on_commit_callbacks, capsys
):
    case = make_case(priya, name="Exported")
    make_case(priya)
    buffer = io.BytesIO()
    with django_capture_on_commit_callbacks(execute=True):
        manifest = build_case_export(case, buffer)
    inside = json.loads(zipfile.ZipFile(buffer).read(MANIFEST))
    seq = inside["chain"]["head_seq"]
    assert (seq, inside["chain"]["head_hash"]) == (
        ChainHead.objects.get().seq,
        ChainHead.objects.get().entry_hash,
    )
    (head,) = recorded_heads()
    assert (head.seq, head.source) == (seq, "export")
    assert head.reference.startswith(f"case-{case.pk}-")
    assert manifest["chain"]["head_seq"] == seq
    call_command("verify_audit_chain")

    chain_restore_to(seq - 1)
    with pytest.raises(SystemExit):
        call_command("verify_audit_chain")
    assert f"export case-{case.pk}-" in capsys.readouterr().err


def test_an_export_rolled_back_records_no_head(priya, django_capture_on_commit_callbacks):
    from django.db import transaction

    case = make_case(priya)
    with django_capture_on_commit_callbacks(execute=True):
        try:
            with transaction.atomic():
                build_case_export(case, io.BytesIO())
                raise RuntimeError("the request failed after the export was built")
        except RuntimeError:
            pass
    assert recorded_heads() == []


def test_heads_recorded_by_another_database_are_not_this_chains(priya, settings):
    make_case(priya)
    head = ChainHead.objects.get()
    recorded_head_write(
        source="packet", reference="DIL-2026-000009", seq=head.seq + 50, entry_hash="a" * 64
    )
    # The same storage, shared with a database whose chain began elsewhere.
    (name,) = stored_names("audit/chain-heads")
    folder, identity, rest = name.rsplit("/", 2)
    replace_stored(f"{folder}/{'f' * 32}/{rest}", StoredObject(name).read_bytes())
    default_storage.delete(name)
    assert recorded_heads() == []
    assert verify_chain().intact

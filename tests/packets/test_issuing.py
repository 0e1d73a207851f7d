"""Issuing packets: numbering, immutability, failures that leave nothing, safe retries."""

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.packets import services
from apps.packets.models import AuditPacket, IssuedPacketError, PacketRequest
from apps.packets.tasks import issue_packet_task
from tests.packets import evidence_section
from tests.packets.factories import issue_packet, make_packet_case, make_stored_packet
from tests.stored import stored_names

pytestmark = pytest.mark.whole_case


def _stored_packet_files() -> list[str]:
    return stored_names("packets")  # on disk or in the test's bucket


def test_numbers_are_sequential_and_a_new_packet_gets_a_new_number(priya, aude):
    case = make_packet_case(priya, offers=1)
    first = make_stored_packet(priya, case)
    second = make_stored_packet(aude, case)
    year = first.request.year
    assert first.number == f"DIL-{year}-000001"
    assert second.number == f"DIL-{year}-000002"


def test_an_issued_packet_cannot_be_changed_or_deleted(priya):
    packet = make_stored_packet(priya, make_packet_case(priya, offers=1))
    packet.page_count = 99
    with pytest.raises(IssuedPacketError):
        packet.save()
    with pytest.raises(IssuedPacketError):
        packet.delete()
    assert AuditPacket.objects.get(pk=packet.pk).page_count == 1


def test_a_second_request_while_one_is_queued_returns_the_same_request(priya):
    case = make_packet_case(priya, offers=1)
    first = services.packet_request_create(actor=priya, case=case)
    again = services.packet_request_create(actor=priya, case=case)
    assert again.pk == first.pk
    assert PacketRequest.objects.count() == 1
    history = first.history.first()
    assert history.history_user == priya and history.history_change_reason == "Packet requested"


def test_a_failed_render_leaves_no_packet_and_no_file(
    priya, monkeypatch, django_capture_on_commit_callbacks
):
    case = make_packet_case(priya, offers=1)

    def broken(*args, **kwargs):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr("apps.packets.rendering.render_packet", broken)
    with django_capture_on_commit_callbacks(execute=True):
        request = services.packet_request_create(actor=priya, case=case)
    request.refresh_from_db()
    assert request.status == PacketRequest.Status.FAILED
    assert "renderer exploded" in request.error
    assert not AuditPacket.objects.exists()
    assert _stored_packet_files() == []
    # The failed request keeps its number; the next request gets the next one.
    retry = services.packet_request_create(actor=priya, case=case)
    assert retry.sequence == request.sequence + 1


def test_a_failure_after_storing_removes_the_stored_file(
    priya, monkeypatch, django_capture_on_commit_callbacks
):
    case = make_packet_case(priya, offers=1)

    def refuse(self, *args, **kwargs):
        raise RuntimeError("database said no")

    monkeypatch.setattr(AuditPacket, "full_clean", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        request = services.packet_request_create(actor=priya, case=case)
    request.refresh_from_db()
    assert request.status == PacketRequest.Status.FAILED
    assert not AuditPacket.objects.exists()
    assert _stored_packet_files() == []


def test_running_the_task_again_issues_one_packet_only(priya, django_capture_on_commit_callbacks):
    case = make_packet_case(priya, offers=1)
    packet = issue_packet(priya, case, django_capture_on_commit_callbacks)
    # A redelivered message (acks_late after a worker loss) runs the task again.
    assert issue_packet_task.apply(args=(packet.request_id,)).get() == packet.pk
    assert AuditPacket.objects.count() == 1
    assert len(_stored_packet_files()) == 1
    history = packet.history.first()
    assert history.history_user == priya and history.history_change_reason == "Packet issued"


def test_the_manifest_rehashes_evidence_files_and_catches_a_swapped_one(
    priya, monkeypatch, django_capture_on_commit_callbacks, tmp_path
):
    from django.core.files.base import ContentFile

    from apps.casework.packet import chapters

    monkeypatch.setattr(chapters, "PACKET_SECTION_PROVIDERS", (evidence_section,))
    evidence_section.store_bundle()
    case = make_packet_case(priya, offers=1)
    # Someone swaps the stored bundle behind the application's back.
    default_storage.delete("evidence/bundle-1.json")
    default_storage.save("evidence/bundle-1.json", ContentFile(b'{"forged": true}'))

    packet = issue_packet(priya, case, django_capture_on_commit_callbacks)
    from tests.packets.test_packet_pdf import _attachment_bytes

    path = tmp_path / "packet.pdf"  # a copy, wherever the packet is stored
    with packet.file.open("rb") as handle:
        path.write_bytes(handle.read())
    import json

    manifest = json.loads(_attachment_bytes(path))
    (entry,) = manifest["evidence_files"]
    assert entry["status"] == "mismatch"
    assert entry["expected_sha256"] == evidence_section.BUNDLE_SHA256
    from tests.packets.pdftools import pdftotext

    text = pdftotext(path)
    assert "Evidence and spec verification" in text
    assert "DOES NOT MATCH" in text
    assert "no longer matches the digest recorded at upload" in text


def test_issue_packet_and_verify_packet_commands(priya, tmp_path, capsys):
    case = make_packet_case(priya, offers=1)
    call_command("issue_packet", str(case.pk))
    out = capsys.readouterr().out
    packet = AuditPacket.objects.get()
    assert f"Issued {packet.number}" in out
    assert packet.file.name in out and packet.sha256 in out

    good = tmp_path / "good.pdf"
    good.write_bytes(packet.file.read())
    call_command("verify_packet", str(good))
    assert f"VALID: packet {packet.number}" in capsys.readouterr().out

    bad = tmp_path / "bad.pdf"
    content = bytearray(good.read_bytes())
    content[len(content) // 2] ^= 0x20
    bad.write_bytes(bytes(content))
    with pytest.raises(CommandError, match="NOT VALID"):
        call_command("verify_packet", str(bad))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("verify_packet", str(tmp_path / "missing.pdf"))


def test_issue_packet_command_refuses_a_user_without_the_permission(priya, people, db):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user(username="nobody", password="pw")
    case = make_packet_case(priya, offers=1)
    with pytest.raises(CommandError, match="may not request packets"):
        call_command("issue_packet", str(case.pk), "--user", "nobody")
    with pytest.raises(CommandError, match="No case #999"):
        call_command("issue_packet", "999")
    assert not PacketRequest.objects.exists()

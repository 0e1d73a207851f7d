"""Packets stored in an S3 bucket (moto's server on 127.0.0.1): issued, downloaded with
their SHA-256 checked, and a store that goes away while a packet is stored fails the
request cleanly — no packet row, no object, a plain reason on the request."""

import pytest
from django.core.management import call_command

from apps.core import s3
from apps.packets.models import AuditPacket, PacketRequest
from apps.packets.services import packet_request_create
from tests.packets.factories import issue_packet, make_packet_case

pytestmark = [pytest.mark.s3, pytest.mark.whole_case]


def test_a_packet_is_issued_into_the_bucket_and_downloaded_checked(
    priya, browser_as, s3_bucket, django_capture_on_commit_callbacks
):
    case = make_packet_case(priya, offers=1)
    packet = issue_packet(priya, case, django_capture_on_commit_callbacks)
    keys = s3_bucket.names()
    assert packet.file.name in keys
    stored = s3_bucket.read(packet.file.name)
    response = browser_as("aude").get(f"/api/v1/packets/{packet.pk}/download/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == stored
    assert response["X-Content-SHA256"] == packet.sha256


def test_the_store_gone_while_storing_fails_the_request_with_nothing_left(
    priya, lone_s3, monkeypatch, django_capture_on_commit_callbacks
):
    case = make_packet_case(priya, offers=1)
    real = s3.PrivateS3Storage._save_new

    def then_gone(self, *args, **kwargs):
        lone_s3.server.stop()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(s3.PrivateS3Storage, "_save_new", then_gone)
    with django_capture_on_commit_callbacks(execute=True):
        request = packet_request_create(actor=priya, case=case)
    request = PacketRequest.objects.get(pk=request.pk)
    assert request.status == PacketRequest.Status.FAILED
    assert "The file store could not be reached" in request.error
    assert "127.0.0.1" not in request.error  # the reason, not the store's address
    assert not AuditPacket.objects.exists()


def test_a_failure_after_storing_removes_the_object(
    priya, s3_bucket, monkeypatch, django_capture_on_commit_callbacks
):
    case = make_packet_case(priya, offers=1)

    def refuse(self, *args, **kwargs):
        raise RuntimeError("database said no")

    monkeypatch.setattr(AuditPacket, "full_clean", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        request = packet_request_create(actor=priya, case=case)
    assert PacketRequest.objects.get(pk=request.pk).status == PacketRequest.Status.FAILED
    assert [key for key in s3_bucket.names() if key.startswith("packets/")] == []


def test_the_packet_command_names_the_bucket_and_key_never_a_url(priya, capsys, s3_bucket):
    from tests.packets.factories import make_packet_case

    case = make_packet_case(priya, offers=1)
    call_command("issue_packet", str(case.pk))
    out = capsys.readouterr().out
    (key,) = s3_bucket.names()
    assert f"s3://{s3_bucket.name}/{key}" in out
    assert "X-Amz-Signature" not in out and "http" not in out

"""A packet is made in the background: whoever asked for it, and the case's owner, hear
once it is signed and stored (docs/notifications.md#who-is-told)."""

import hashlib

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from apps.core.models import Notification, NotificationEvent
from apps.packets.services import _reserve_number, _store
from apps.packets.signing import get_signer
from tests.factories import make_case

pytestmark = pytest.mark.django_db

SITE = "https://diligence.example.org"


def test_the_requester_and_the_owner_hear_the_packet_is_issued(
    people, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.SITE_URL = SITE
    for name in ("priya", "aude", "tariq"):
        people[name].email = f"{name}@example.org"
        people[name].save(update_fields=["email"])
    case = make_case(people["priya"], name="Chat assistant")
    request = _reserve_number(actor=people["aude"], case=case)
    signed = tmp_path / "signed.pdf"
    signed.write_bytes(b"%PDF-1.7\n% signed\n")
    with django_capture_on_commit_callbacks(execute=True):
        packet = _store(
            request,
            signed,
            packet_signer=get_signer(),
            chain_head={"head_seq": 0, "head_hash": "0" * 64},
            sha256=hashlib.sha256(signed.read_bytes()).hexdigest(),
            size_bytes=signed.stat().st_size,
            page_count=1,
            manifest_sha256="0" * 64,
            signed_at=timezone.now(),
        )
    told = Notification.objects.filter(event=NotificationEvent.PACKET_ISSUED)
    assert sorted(told.values_list("recipient__username", flat=True)) == ["aude", "priya"]
    assert sorted(m.to[0] for m in mail.outbox) == ["aude@example.org", "priya@example.org"]
    for message in mail.outbox:
        assert f"Whole-case audit packet {packet.number} of Chat assistant" in message.body
        assert f"{SITE}{reverse('packets:list', args=[case.pk])}" in message.body

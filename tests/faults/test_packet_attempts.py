"""Two attempts at one packet request, as a broker's second delivery makes them.

The fault tests show the broker handing a message out again while it is still
being rendered (a visibility timeout shorter than the render). Here the race
is made exact, in-process: a second attempt issues the packet while the first
is still laying out its pages. Not marked ``faults``: this runs in every run.
"""

import dataclasses

import pytest
from django.core.files.storage import default_storage

from apps.packets import rendering, services
from apps.packets.document import PacketChapter
from apps.packets.models import AuditPacket, PacketRequest
from tests.packets.factories import make_packet_case

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _packet_dirs(settings, tmp_path):
    settings.PACKET_SIGNING_DIR = tmp_path / "signing"
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _one_page(monkeypatch):
    """The real pipeline (render, sign, store) on one short chapter: the race, not the layout."""
    gather = services.packet_document

    def one_page(*args, **kwargs):
        document = gather(*args, **kwargs)
        chapter = PacketChapter(1, "Packet", "section-1", "<html><body><p>Packet</p></body></html>")
        return dataclasses.replace(document, chapters=[chapter])

    monkeypatch.setattr(services, "packet_document", one_page)


def stored_packets() -> list[str]:
    return default_storage.listdir("packets")[1] if default_storage.exists("packets") else []


def test_an_attempt_overtaken_by_another_returns_its_packet_and_leaves_the_request_issued(
    priya, monkeypatch
):
    case = make_packet_case(priya, offers=1)
    request = services.packet_request_create(actor=priya, case=case, queue=False)
    render, overtaken = rendering.render_packet, {}

    def render_while_another_attempt_issues(*args, **kwargs):
        pages = render(*args, **kwargs)
        if not overtaken:  # only the first attempt is overtaken
            overtaken["by"] = "a second delivery"
            overtaken["packet"] = services.packet_issue(
                packet_request=PacketRequest.objects.get(pk=request.pk)
            )
        return pages

    monkeypatch.setattr(rendering, "render_packet", render_while_another_attempt_issues)
    packet = services.packet_issue(packet_request=PacketRequest.objects.get(pk=request.pk))

    assert packet == overtaken["packet"] == AuditPacket.objects.get()
    assert stored_packets() == [packet.file.name.split("/")[-1]]  # the loser's file is gone
    request.refresh_from_db()
    assert (request.status, request.progress_pct, request.step) == ("done", 100, "Issued")


def test_a_failure_after_another_attempt_issued_the_packet_does_not_mark_it_failed(priya):
    case = make_packet_case(priya, offers=1)
    request = services.packet_request_create(actor=priya, case=case, queue=False)
    stale = PacketRequest.objects.get(pk=request.pk)  # what a slower attempt holds
    packet = services.packet_issue(packet_request=PacketRequest.objects.get(pk=request.pk))

    services.packet_request_progress(stale, percent=5, step="Gathering", status="running")
    services.packet_request_fail(stale, error="RuntimeError: the slower attempt broke")

    request.refresh_from_db()
    assert (request.status, request.progress_pct, request.error) == ("done", 100, "")
    assert request.packet == packet

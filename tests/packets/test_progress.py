"""Progress is reported per chapter on the packet request, and shown on its status page."""

import copy

import pytest
from django.urls import reverse

from apps.packets import services
from apps.packets.models import PacketRequest
from apps.packets.services import packet_request_create, packet_request_progress
from tests.packets.factories import issue_packet, make_packet_case

pytestmark = pytest.mark.whole_case


def test_each_chapter_is_reported_as_it_is_laid_out(
    priya, django_capture_on_commit_callbacks, monkeypatch
):
    reported = []

    def recording(packet_request, **progress):
        reported.append(copy.deepcopy(progress))  # the task goes on filling its list in
        return packet_request_progress(packet_request, **progress)

    monkeypatch.setattr(services, "packet_request_progress", recording)
    packet = issue_packet(priya, make_packet_case(priya), django_capture_on_commit_callbacks)
    request = packet.request
    chapters = request.chapters
    assert chapters and all(chapter["pages"] >= 1 for chapter in chapters)
    assert [c["title"] for c in chapters][-2:] == ["Change history", "Manifest"]
    assert sum(c["pages"] for c in chapters) < packet.page_count  # plus the cover and contents

    laid_out = [
        sum(1 for c in step["chapters"] if c["pages"] is not None)
        for step in reported
        if step.get("chapters") is not None
    ]
    # One report as the layout starts, then one per chapter, each adding one.
    assert laid_out == list(range(len(chapters) + 1))
    percents = [step["percent"] for step in reported]
    assert percents == sorted(percents) and percents[-1] == 100
    # None of it is history: the request was asked for, then issued.
    assert [row.status for row in request.history.order_by("history_id")] == ["queued", "done"]


def test_the_status_page_and_the_api_show_the_chapters(priya, browser_as, api_as):
    case = make_packet_case(priya, offers=1)
    request = packet_request_create(actor=priya, case=case, queue=False)
    packet_request_progress(
        request,
        percent=40,
        step="Laying out the pages",
        status=PacketRequest.Status.RUNNING,
        chapters=[
            {"title": "Compute demand and sizing", "pages": 2},
            {"title": "Comparison of offers and scorecards", "pages": 1},
            {"title": "Manifest", "pages": None},
        ],
    )
    page = browser_as("aude").get(reverse("packets:status", args=[request.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "Chapters laid out: 2 of 3" in text
    assert 'Compute demand and sizing — <span class="ok">laid out, 2 pages</span>' in text
    assert "laid out, 1 page</span>" in text
    assert 'Manifest — <span class="muted">waiting</span>' in text

    data = api_as("aude").get(reverse("packet-request-detail", args=[request.pk])).json()
    assert data["chapters"][0] == {"title": "Compute demand and sizing", "pages": 2}
    assert data["chapters"][2]["pages"] is None

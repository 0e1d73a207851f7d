"""Without a broker, issuing a packet from the browser answers at once and the
packet is made in the background while its status page shows the progress."""

import time

import pytest
from django.urls import reverse

from apps.core import background
from apps.packets import rendering
from apps.packets.models import AuditPacket, PacketRequest
from apps.packets.verification import verify_packet_bytes
from tests.packets.factories import held, make_packet_case
from tests.stored import stored_names

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.whole_case, pytest.mark.postgres]

DONE_WITHIN_SECONDS = 180


@pytest.fixture
def background_on(settings):
    settings.BACKGROUND_TASKS = True
    assert settings.CELERY_TASK_ALWAYS_EAGER, "these tests are about the embedded default"
    yield
    background.wait_for_all()  # nothing may still write once the test's database goes


def _state(data: dict) -> dict:
    state = {k: data[k] for k in ("status", "progress_pct", "step")}
    state["laid_out"] = sum(1 for c in data["chapters"] or [] if c["pages"] is not None)
    return state


def _poll_until(api, pk: int, wanted) -> dict:
    """The first state the status endpoint reports that is ``wanted``."""
    deadline = time.monotonic() + DONE_WITHIN_SECONDS
    while time.monotonic() < deadline:
        state = _state(api.get(reverse("packet-request-detail", args=[pk])).json())
        if wanted(state):
            return state
        time.sleep(0.05)
    raise AssertionError("the packet request never reached the state awaited")


def _poll_until_finished(api, pk: int) -> list[dict]:
    """Every distinct state the status endpoint reported, until the request finished."""
    seen: list[dict] = []
    deadline = time.monotonic() + DONE_WITHIN_SECONDS
    while time.monotonic() < deadline:
        data = api.get(reverse("packet-request-detail", args=[pk])).json()
        state = _state(data)
        if not seen or seen[-1] != state:
            seen.append(state)
        if data["status"] in (PacketRequest.Status.DONE, PacketRequest.Status.FAILED):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"the packet was not finished in time: {seen}")


def _stored_packet_files() -> list[str]:
    return stored_names("packets")  # on disk or in the test's bucket


@pytest.fixture
def held_layout(monkeypatch):
    """Hold the layout until released: the request must answer while the render waits, and
    the status must be seen before any chapter is laid out."""
    release = held(monkeypatch, rendering, "render_packet")
    yield release
    release.set()


def test_the_request_answers_at_once_and_the_status_shows_progress_to_the_signed_pdf(
    priya, browser_as, api_as, background_on, held_layout
):
    case = make_packet_case(priya, offers=1)
    browser = browser_as("priya")
    url = reverse("packets:request", args=[case.pk])

    first = browser.post(url, {"language": "en"})
    second = browser.post(url, {"language": "en"})  # the double click

    # Answered while the render is held: the request did not wait for it.
    assert first.status_code == 302
    assert second.status_code == 302 and second.url == first.url
    packet_request = PacketRequest.objects.get()
    assert packet_request.status != PacketRequest.Status.DONE
    assert first.url == reverse("packets:status", args=[packet_request.pk])

    page = browser.get(first.url).content.decode()
    assert 'http-equiv="refresh"' in page  # the page follows the render by itself

    api = api_as("priya")
    held = _poll_until(api, packet_request.pk, lambda s: s["status"] == "running")
    held_layout.set()
    states = [held, *_poll_until_finished(api, packet_request.pk)]
    assert states[-1]["status"] == PacketRequest.Status.DONE, states
    # It was seen working, chapter by chapter, before it was done.
    assert any(s["status"] == PacketRequest.Status.RUNNING for s in states), states
    percents = [s["progress_pct"] for s in states]
    assert percents == sorted(percents) and percents[-1] == 100, states
    assert len({s["laid_out"] for s in states}) >= 2, states

    assert AuditPacket.objects.count() == 1 and PacketRequest.objects.count() == 1
    packet = AuditPacket.objects.get()
    done = browser.get(first.url).content.decode()
    assert "Issued and signed." in done and 'http-equiv="refresh"' not in done
    download = browser.get(reverse("packets:download", args=[packet.pk]))
    content = b"".join(download.streaming_content)
    result = verify_packet_bytes(content)
    assert result.valid, result.problems
    assert result.issued_packet == packet


def test_a_failed_background_render_leaves_no_file_and_the_page_says_so(
    priya, browser_as, api_as, background_on, monkeypatch
):
    def broken(*args, **kwargs):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr("apps.packets.rendering.render_packet", broken)
    case = make_packet_case(priya, offers=1)
    browser = browser_as("priya")

    response = browser.post(reverse("packets:request", args=[case.pk]), {"language": "en"})
    assert response.status_code == 302
    packet_request = PacketRequest.objects.get()
    states = _poll_until_finished(api_as("priya"), packet_request.pk)

    assert states[-1]["status"] == PacketRequest.Status.FAILED
    assert AuditPacket.objects.count() == 0 and _stored_packet_files() == []
    page = browser.get(response.url).content.decode()
    assert "The packet could not be issued." in page
    assert "renderer exploded" in page
    assert 'http-equiv="refresh"' not in page


def test_with_background_tasks_off_the_request_renders_inline(priya, browser_as, monkeypatch):
    """The switch the tests rely on: off, the task runs inside the request (as before)."""
    submitted = []
    monkeypatch.setattr(background, "submit", lambda *a, **k: submitted.append(a))
    monkeypatch.setattr("apps.packets.rendering.render_packet", _raise)
    case = make_packet_case(priya, offers=1)
    browser_as("priya").post(reverse("packets:request", args=[case.pk]), {"language": "en"})
    assert submitted == []
    assert PacketRequest.objects.get().status == PacketRequest.Status.FAILED


def _raise(*args, **kwargs):
    raise RuntimeError("inline")

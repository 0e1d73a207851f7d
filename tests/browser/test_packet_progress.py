"""Issuing a packet on the embedded default (no broker): the page answers at once
and the status page follows the render, chapter by chapter, to the signed PDF."""

import pytest
from playwright.sync_api import expect

from apps.core import background
from apps.packets import services
from apps.packets.verification import verify_packet_bytes
from tests.packets.factories import held, make_packet_case

pytestmark = [pytest.mark.whole_case]


@pytest.fixture
def background_on(settings):
    settings.BACKGROUND_TASKS = True
    yield
    background.wait_for_all()


@pytest.fixture
def held_at_signing(monkeypatch):
    """Hold the render before signing until the test has seen the chapters laid out:
    a fast render would otherwise go from the first refresh straight to issued."""
    seen = held(monkeypatch, services, "sign_pdf")
    yield seen
    seen.set()


def test_the_status_page_shows_the_progress_until_the_packet_is_issued(
    transactional_db,
    priya,
    page,
    live_server,
    sign_in,
    stored_files,
    background_on,
    held_at_signing,
    downloads,
):
    case = make_packet_case(priya)
    sign_in("priya")
    page.goto(f"{live_server.url}/cases/{case.pk}/packets/new/")

    # The render is held before signing: a page that waited for it would never arrive.
    page.click("button:has-text('Generate packet')")
    page.wait_for_url("**/packets/requests/*/")
    # Seen in progress, without reloading by hand, then issued.
    expect(page.locator("progress")).to_be_visible()
    expect(page.locator("body")).to_contain_text("Chapters laid out", timeout=60_000)
    held_at_signing.set()
    expect(page.locator("body")).to_contain_text("Issued and signed.", timeout=180_000)

    pdf = downloads(lambda: page.click("text=Download the PDF"))
    result = verify_packet_bytes(pdf.read_bytes())
    assert result.valid, result.problems

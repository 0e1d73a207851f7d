"""Browser tests: Playwright driving the system's Chromium against a live server.

Chromium comes from the operating system's packages (never a browser that a
test tool downloads). Screenshots of the main pages are written to
``test-artifacts/screenshots/`` so CI keeps them.
"""

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# Without these flags Chromium keeps trying to reach Google's services, which a
# closed network refuses many times a second.
QUIET_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if CHROMIUM is None:
        pytest.skip("needs Chromium: apt-get install chromium")
    # Playwright's sync API runs an event loop in this thread; the test's own
    # ORM calls are still synchronous, which Django would otherwise refuse.
    # Module scope: the loop stops when the browser tests end, so later tests
    # that call asyncio.run() (the harness, pyHanko) find none running.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=QUIET_FLAGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def screenshot(page):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> None:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    return take


@pytest.fixture
def sign_in(page, live_server):
    def as_user(username: str, password: str = "pw") -> None:
        page.context.clear_cookies()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/dashboard/")  # My work

    return as_user


@pytest.fixture
def downloads(page, tmp_path):
    """Click something that downloads a file; return the saved file's path."""
    folder = tmp_path / "downloads"
    folder.mkdir()

    def save(click, timeout: float | None = None) -> Path:
        with page.expect_download(timeout=timeout) as info:
            click()
        download = info.value
        path = folder / download.suggested_filename
        download.save_as(path)
        return path

    return save


@pytest.fixture
def stored_files(settings, tmp_path):
    # Packets, signing keys and evidence of the journey stay in this test's folder.
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PACKET_SIGNING_DIR = tmp_path / "signing"
    return settings.MEDIA_ROOT

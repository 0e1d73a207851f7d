"""Every main page of the demo fits the screen and passes axe-core, for every role.

The demo is seeded once for the module and served by its own live server; each
person of the demo signs in once per language. Each page is opened at a desktop
width (1440 px) and a phone width (390 px): the document may not be wider than
the window (a wide table scrolls inside its own container, never the page), and
axe-core, injected from ``node_modules`` (``make test-deps`` installs it from
npm), may report no violation of impact serious or critical (in Chinese, axe runs at
the desktop width; the phone width is the English page's layout with other words). Every chart
names the table that holds its figures. A full-page screenshot of each page that
fails goes to ``test-artifacts/screenshots/`` (of every page with
``DILIGENCE_SCREENSHOTS=1``). The walk injects axe, so it bypasses the site's
Content-Security-Policy; a second walk opens every page under the policy and
fails on any violation the browser reports (an inline style or script it refused).
"""

import os
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from django.contrib.staticfiles.handlers import StaticFilesHandler as _StaticFilesHandler
from django.core.management import call_command
from django.test.testcases import LiveServerThread
from django.test.utils import override_settings

from tests import demo_snapshot
from tests.browser.conftest import ARTIFACTS
from tests.conftest import template_again
from tests.factories import restore_default_templates

pytestmark = [pytest.mark.whole_case]

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": 1440, "phone": 390}
LANGUAGES = {"en": "en-GB", "zh": "zh-CN"}
ROLES = ("priya", "lena", "tariq", "aude", "admin")
SERIOUS = ("serious", "critical")
# Full-page screenshots cost about as much as the checks: taken of failing pages only,
# unless asked for.
SCREENSHOTS = os.environ.get("DILIGENCE_SCREENSHOTS") == "1"

# axe-core runs at both widths in English; in Chinese, the same page with other words,
# at the desktop width (the phone width's layout is still checked for overflow).
AXE_WIDTHS = {"en": ("desktop", "phone"), "zh": ("desktop",)}

# Each main page, as a path built from the demo's records (see ``demo_server``).
PAGES = {
    "dashboard": "/dashboard/",
    "case-list": "/cases/",
    "case": "/cases/{case}/",
    "case-sizing": "/cases/{case}/area/sizing/",
    "case-offers": "/cases/{case}/area/offers/",
    "case-data-export": "/cases/{case}/area/data-export/",
    "case-approval": "/cases/{case}/area/approval/",
    "offer": "/offers/{offer}/",
    "comparison": "/cases/{case}/comparison/",
    "offer-matrix": "/cases/{case}/matrix/",
    "evidence": "/cases/{case}/evidence/",
    "evidence-bundle": "/evidence/{bundle}/",
    "clause-checklist": "/offers/{offer}/clause-checklist/",
    "clause-comparison": "/cases/{case}/clause-checklists/",
    "data-export": "/data-export/{assessment}/",
    "data-export-edit": "/data-export/{assessment}/edit/",
    "access-matrix": "/cases/{case}/access-matrix/",
    "access-matrix-edit": "/cases/{case}/access-matrix/edit/",
    "network-plan": "/cases/{case}/network-plan/",
    "approval": "/cases/{case}/approval/",
    "packets": "/cases/{case}/packets/",
    "costs": "/cases/{case}/costs/",
    "acceptance": "/cases/{case}/acceptance/",
    "timeline": "/cases/{case}/timeline/",
    "vendors": "/vendors/",
    "vendor": "/vendors/{vendor}/",
    "search": "/search/?q=H200",
    "portfolio": "/portfolio/",
    "packet-verify": "/packets/verify/",
    "sizing": "/sizing/",
}


def _ids() -> dict:
    """The records of the approvable demo case that the pages above open."""
    from apps.assessments.models import DataExportAssessment
    from apps.cases.models import ProcurementCase
    from apps.casework.demo import DEMO_CASE_NAME
    from apps.evidence.models import EvidenceBundle

    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    bundle = EvidenceBundle.objects.filter(case=case).order_by("pk").first()
    offer = bundle.offer if bundle else case.offers.order_by("pk").first()
    return {
        "case": case.pk,
        "offer": offer.pk,
        "bundle": bundle.pk if bundle else 0,
        "vendor": offer.vendor_id,
        "assessment": DataExportAssessment.objects.filter(case=case).order_by("pk").first().pk,
    }


@contextmanager
def _test_database():
    """The test database, created here when no other selected test asked for one.

    pytest-django creates it only for tests marked as using the database; these
    tests share one seeded database instead, so run alone they create it themselves.
    """
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    if connection.settings_dict["NAME"] == connection.creation._get_test_db_name():
        yield
        return
    config = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    try:
        yield
    finally:
        teardown_databases(config, verbosity=0)


@pytest.fixture(scope="module")
def demo_server(browser, django_db_setup, django_db_blocker, tmp_path_factory):
    """The seeded demo behind a live server, shared by every test of this module.

    Seeding takes seconds; the walk opens hundreds of pages, so it is done once,
    and the database is emptied afterwards as a transactional test leaves it.
    """
    media = tmp_path_factory.mktemp("media")
    with ExitStack() as stack:
        stack.enter_context(django_db_blocker.unblock())
        stack.enter_context(_test_database())
        stack.enter_context(
            override_settings(
                MEDIA_ROOT=media,
                PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
            )
        )
        # Whatever the modules before left (another live server's flush at its end): the
        # migrated template again.
        template_again()
        restore_default_templates()  # emptied by a transactional test that ran before
        demo_snapshot.seed_demo_here()
        ids = _ids()
        server = LiveServerThread("localhost", static_handler=_StaticFilesHandler, port=0)
        server.daemon = True
        server.start()
        server.is_ready.wait()
        if server.error:
            raise server.error
        try:
            yield f"http://localhost:{server.port}", ids
        finally:
            server.terminate()
            call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(scope="module")
def signed_in(browser, demo_server):
    """One browser context per person and language, signed in once."""
    base, _ids = demo_server
    contexts = {}

    def context_for(username: str, language: str):
        key = (username, language)
        if key not in contexts:
            # The site's CSP forbids inline scripts; axe is injected as one, by the test only.
            context = browser.new_context(
                bypass_csp=True,
                viewport={"width": WIDTHS["desktop"], "height": 900},
                locale=LANGUAGES[language],
            )
            page = context.new_page()
            page.set_default_timeout(15_000)
            page.goto(f"{base}/accounts/login/")
            page.fill("#id_username", username)
            page.fill("#id_password", "diligence-demo")
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/dashboard/")  # My work
            contexts[key] = page
        return contexts[key]

    yield context_for
    for page in contexts.values():
        page.context.close()


def _serious_violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{violation['id']} ({violation['impact']}): "
        + ", ".join(" ".join(node["target"]) for node in violation["nodes"][:5])
        for violation in results
        if violation["impact"] in SERIOUS
    ]


def _overflow(page) -> str | None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    if widths[0] > widths[1]:
        # The outermost elements that stick out, leaving out those inside a scrolling box.
        culprits = page.evaluate(
            """() => [...document.querySelectorAll('body *')]
                .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
                .filter((e) => {
                    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
                        if (getComputedStyle(p).overflowX !== 'visible') return false;
                        if (p.getBoundingClientRect().right > window.innerWidth + 1) return false;
                    }
                    return true;
                })
                .slice(0, 5)
                .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '')
                    + (e.id ? '#' + e.id : ''))"""
        )
        return f"document {widths[0]} px wide in a {widths[1]} px window: {culprits}"
    return None


def _charts_without_text(page) -> list[str]:
    """Charts whose figures a screen reader cannot reach: each names a table that holds them."""
    return page.evaluate(
        """() => [...document.querySelectorAll('svg.chart')]
            .filter((svg) => {
                const text = document.getElementById(svg.getAttribute('aria-describedby'));
                return !svg.getAttribute('aria-label') || !text || !text.closest('table');
            })
            .map((svg) => 'chart without a text alternative: ' + svg.getAttribute('aria-label'))"""
    )


def _walk(page, url: str, name: str, *, axe_at: tuple[str, ...] = tuple(WIDTHS)) -> list[str]:
    """Open one page at each width; what is wrong with it there, in words (axe-core runs
    at the widths ``axe_at`` names, the overflow check at every width)."""
    response = page.goto(url)
    if response is None or response.status == 403:
        pytest.skip("not open to this role")
    assert response.status == 200, f"{url} answered {response.status}"
    problems = _charts_without_text(page)
    for label, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        # The page hears of the new width at its next frames (its resize handler marks the
        # boxes that now scroll): checked after them, as a person sees it.
        page.evaluate(
            "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
        )
        overflow = _overflow(page)
        if overflow:
            problems.append(f"{label}: {overflow}")
        found = [f"{label}: {v}" for v in _serious_violations(page)] if label in axe_at else []
        if problems or found or SCREENSHOTS:
            page.screenshot(path=str(ARTIFACTS / f"{name}-{label}.png"), full_page=True)
        problems += found
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
    return problems


# The administrator opens every page; each other person the pages whose buttons and
# panels change with the role (the walk stays within a few minutes on two cores).
ROLE_PAGES = {
    "admin": tuple(PAGES),
    **dict.fromkeys(
        ("priya", "lena", "tariq", "aude"), ("dashboard", "case-list", "case", "offer", "approval")
    ),
}


def _params():
    for language in LANGUAGES:
        for username in ROLES:
            for page_name in ROLE_PAGES[username]:
                yield pytest.param(
                    username, language, page_name, id=f"{language}-{username}-{page_name}"
                )


@pytest.mark.skipif(not AXE.exists(), reason="needs axe-core: make test-deps (npm ci)")
@pytest.mark.parametrize(("username", "language", "page_name"), list(_params()))
def test_the_page_fits_the_screen_and_passes_axe(
    demo_server, signed_in, username, language, page_name
):
    base, ids = demo_server
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = signed_in(username, language)
    problems = _walk(
        page,
        base + PAGES[page_name].format(**ids),
        f"{language}-{username}-{page_name}",
        axe_at=AXE_WIDTHS[language],
    )
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_first_tab_offers_a_skip_to_the_main_content(demo_server, signed_in, language):
    base, _ids = demo_server
    page = signed_in("priya", language)
    page.goto(f"{base}/dashboard/")
    page.keyboard.press("Tab")
    link = page.locator(":focus")
    assert link.get_attribute("href") == "#main"
    assert link.is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"


def test_no_page_breaks_the_content_security_policy(browser, demo_server):
    """Every main page, the sign-in page and the API documentation, as the CSP holds them."""
    base, ids = demo_server
    context = browser.new_context(viewport={"width": WIDTHS["desktop"], "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    refusals: list[str] = []
    page.on(
        "console",
        lambda message: (
            refusals.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    try:
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", "diligence-demo")
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/dashboard/")
        for path in PAGES.values():
            assert page.goto(base + path.format(**ids)).status == 200, path
        page.goto(f"{base}/api/docs/")
        page.wait_for_selector(".swagger-ui .opblock")  # drawn from the schema
    finally:
        context.close()
    assert refusals == [], "\n".join(refusals)


def test_axe_is_installed_from_npm():
    """The checker is a pinned npm package, so the walk above never silently skips in CI."""
    if os.environ.get("CI"):
        assert AXE.exists(), "run make test-deps: axe-core comes from package-lock.json"
    lock = (Path(__file__).resolve().parents[2] / "package-lock.json").read_text()
    assert '"node_modules/axe-core"' in lock

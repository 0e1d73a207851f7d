"""What the demo's readers found hard to read, measured in the browser at the widths they
use: the load-test charts' labels, the offer matrix's decision columns at 1440 px, the
"Revoke" button's contrast, and the copy buttons beside the harness commands.

The seeded demo and its live server are the layout walk's (``demo_server``).
"""

import pytest

from tests.browser.test_layout_and_accessibility import demo_server  # noqa: F401 - a fixture

pytestmark = [pytest.mark.whole_case]

DESKTOP, PHONE = 1440, 390
# The smallest a chart's label may print at, in CSS pixels.
SMALLEST_LABEL_PX = 11
DECISION_COLUMNS = ("Red flags and waivers", "Evidence", "Gates held", "Acceptance")


@pytest.fixture
def signed_in(browser, demo_server, django_db_blocker):  # noqa: F811 - imported above
    """The demo's tech lead, signed in by a session made here (the sign-in form itself is
    the layout walk's and the journey's to test)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    base, ids = demo_server
    with django_db_blocker.unblock():
        client = Client()
        client.force_login(get_user_model().objects.get(username="tariq"))
    context = browser.new_context(
        viewport={"width": DESKTOP, "height": 900},
        locale="en-GB",
        permissions=["clipboard-read", "clipboard-write"],
    )
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base}]
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page, base, ids
    context.close()


def _load_test_cells() -> list[dict]:
    """A ladder from 1 to 256, two rounds of two prompt sets: the charts' four lines each."""
    cells = []
    for round_ in (1, 2):
        for prompt_set in ("short", "long"):
            for concurrency in (1, 2, 4, 8, 16, 32, 64, 128, 256):
                cells.append(
                    {
                        "key": f"r{round_}-{prompt_set}-c{concurrency}",
                        "round": round_,
                        "prompt_set": prompt_set,
                        "concurrency": concurrency,
                        "n": 200,
                        "errors": 0,
                        "ttft_ms": {"p50": 100 + 3 * concurrency, "p95": 180 + 5 * concurrency},
                        "tpot_ms": {"p50": 20 + concurrency / 3},
                        "output_tok_s": 310.5 * concurrency**0.8,
                    }
                )
    return cells


def _settle(page) -> None:
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )


def test_the_load_test_charts_print_their_labels_large_enough(signed_in, django_db_blocker):
    page, base, ids = signed_in
    from apps.evidence.models import EvidenceBundle

    with django_db_blocker.unblock():
        bundle = EvidenceBundle.objects.get(pk=ids["bundle"])
        EvidenceBundle.objects.filter(pk=bundle.pk).update(
            summary={**(bundle.summary or {}), "cells": _load_test_cells()}
        )
    page.goto(f"{base}/evidence/{ids['bundle']}/")
    for width in (DESKTOP, PHONE):
        page.set_viewport_size({"width": width, "height": 900})
        _settle(page)
        charts = page.evaluate(
            """() => [...document.querySelectorAll('svg.chart')].map((svg) => {
                const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                const labels = [...svg.querySelectorAll('text')].map((text) => {
                    const box = text.getBoundingClientRect();
                    return {text: text.textContent, y: Math.round(box.y),
                            left: box.left, right: box.right,
                            px: parseFloat(getComputedStyle(text).fontSize) * scale};
                });
                return {title: svg.getAttribute('aria-label'), labels};
            })"""
        )
        assert len(charts) == 4, charts
        for chart in charts:
            small = [
                (label["text"], round(label["px"], 1))
                for label in chart["labels"]
                if label["px"] < SMALLEST_LABEL_PX
            ]
            assert not small, (width, chart["title"], small)
            # The concurrency ticks along the bottom, left to right, none over the next.
            ticks = sorted(
                (
                    label
                    for label in chart["labels"]
                    if label["y"] == max(other["y"] for other in chart["labels"])
                ),
                key=lambda label: label["left"],
            )
            assert len(ticks) == 9
            for left, right in zip(ticks, ticks[1:], strict=False):
                assert left["right"] <= right["left"], (width, chart["title"], left, right)


def test_the_offer_matrix_shows_its_decision_columns_without_scrolling(signed_in):
    page, base, ids = signed_in
    page.set_viewport_size({"width": DESKTOP, "height": 900})
    page.goto(f"{base}/cases/{ids['case']}/matrix/")
    _settle(page)
    seen = page.evaluate(
        """() => {
            const table = document.querySelector('table.offer-matrix');
            const box = table.parentElement;
            return {
                scrolls: box.scrollWidth > box.clientWidth + 1,
                right: box.getBoundingClientRect().right,
                window: window.innerWidth,
                headings: [...table.querySelectorAll('thead th')].map((th) => [
                    th.textContent.replace(/[▲▼]/g, '').trim(),
                    th.getBoundingClientRect().right,
                ]),
            };
        }"""
    )
    assert not seen["scrolls"], seen
    edges = dict(seen["headings"])
    for heading in DECISION_COLUMNS:
        assert edges[heading] <= min(seen["right"], seen["window"]) + 1, (heading, seen)


CONTRAST = """(element) => {
    const rgb = (text) => text.match(/[\\d.]+/g).map(Number);
    const luminance = ([r, g, b]) => {
        const channel = (c) => {
            c /= 255;
            return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
        };
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    let back = null;
    for (let e = element; e; e = e.parentElement) {
        const colour = getComputedStyle(e).backgroundColor;
        const parts = rgb(colour);
        if (parts.length < 4 || parts[3] > 0) { back = parts; break; }
    }
    back = back || [255, 255, 255];
    const [a, b] = [luminance(rgb(getComputedStyle(element).color)), luminance(back)];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


def test_revoke_reads_clearly_and_each_command_has_a_copy_button(signed_in):
    page, base, ids = signed_in
    page.set_viewport_size({"width": DESKTOP, "height": 900})
    page.goto(f"{base}/cases/{ids['case']}/harness-tokens/")
    page.fill("#id_label", "Browser check")
    page.click("form:has(#id_label) button[type=submit]")
    page.wait_for_selector("#run-command")

    revoke = page.locator("button.link", has_text="Revoke").first
    assert revoke.evaluate(CONTRAST) >= 4.5
    # The header's own link buttons stay light on the dark header, and readable there.
    logout = page.locator(".topbar button.link").first
    assert logout.evaluate(CONTRAST) >= 4.5

    buttons = page.locator("button[data-copy]")
    targets = buttons.evaluate_all("(all) => all.map((b) => b.dataset.copy)")
    assert {"issued-token", "reference-command", "run-command", "gateway-command"} <= set(targets)
    assert all(buttons.nth(n).is_visible() for n in range(buttons.count()))

    command = page.locator("#run-command").inner_text()
    page.click("button[data-copy=run-command]")
    page.wait_for_selector("button[data-copy=run-command] + .copy-status")
    assert page.locator("button[data-copy=run-command] + .copy-status").inner_text() == "Copied"
    assert page.evaluate("() => navigator.clipboard.readText()") == command

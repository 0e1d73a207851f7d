"""Forms that guide: a refused save lists its problems first and takes the focus there."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.whole_case


def test_a_refused_save_puts_the_summary_first_and_focuses_it(
    transactional_db, people, page, live_server, sign_in
):
    sign_in("priya")
    page.goto(f"{live_server.url}/vendors/new/")
    page.click("button:has-text('Save')")
    summary = page.locator("#error-summary")
    expect(summary).to_contain_text("Nothing was saved")
    expect(summary.locator("a[href='#id_name']")).to_be_visible()
    assert page.evaluate("document.activeElement.id") == "error-summary"
    summary.locator("a[href='#id_name']").click()
    page.fill("#id_name", "Fjord Compute")
    page.fill("#id_jurisdiction", "Norway")
    page.click("button:has-text('Save')")
    expect(page.locator("h1")).to_have_text("Fjord Compute")

"""Long forms keep a draft in the browser until it is saved."""

import pytest
from playwright.sync_api import expect

from apps.contracts.services import checklist_create
from tests.factories import FULL_SPEC, make_case, make_offer, restore_default_templates

pytestmark = pytest.mark.whole_case


def test_a_checklist_draft_survives_a_reload_until_it_is_saved_or_discarded(
    transactional_db, people, page, live_server, sign_in
):
    restore_default_templates()  # a transactional test starts from empty tables
    case = make_case(people["priya"], name="Drafts")
    offer = make_offer(people["priya"], case, spec=FULL_SPEC)
    checklist_create(actor=people["lena"], offer=offer)
    url = f"{live_server.url}/offers/{offer.pk}/clause-checklist/"
    sign_in("lena")
    page.goto(url)
    note = page.locator("textarea[name$='-note'], input[name$='-note']").first
    note.fill("Clause 7.1 caps liability at one month's fees")
    page.wait_for_timeout(700)  # the draft is kept once typing pauses
    page.reload()
    expect(page.locator(".draft-notice")).to_be_visible()
    expect(note).to_have_value("Clause 7.1 caps liability at one month's fees")

    page.locator(".draft-notice button").click()  # discard: the form shows what is saved
    page.wait_for_load_state()
    expect(page.locator(".draft-notice")).to_have_count(0)
    expect(note).to_have_value("")

    note.fill("Liability cap: one month's fees")
    page.fill("#id_change_reason", "First reading")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/offers/{offer.pk}/")
    page.goto(url)  # saved: the record moved on, and the draft is not offered again
    expect(page.locator(".draft-notice")).to_have_count(0)
    expect(note).to_have_value("Liability cap: one month's fees")
    assert page.evaluate("window.localStorage.length") == 0

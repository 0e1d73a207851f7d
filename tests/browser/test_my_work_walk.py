"""The approver's day in Chromium: sign in, find the decision on My work, open it, decide,
and see the case's approval tile turn green; on a desktop screen and on a phone."""

import pytest
from playwright.sync_api import expect

from apps.approvals.services import case_submit_for_approval
from apps.cases.models import ProcurementCase
from tests.approvals.factories import make_ready_case
from tests.factories import restore_default_templates

pytestmark = pytest.mark.whole_case

SCREENS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def fits(page) -> None:
    """Nothing on the page makes it scroll sideways."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


@pytest.mark.parametrize("screen", SCREENS)
def test_the_approver_finds_the_decision_makes_it_and_the_tile_turns_green(
    transactional_db, people, page, live_server, sign_in, screenshot, screen
):
    restore_default_templates()
    case, offer, _offers = make_ready_case(people)
    case_submit_for_approval(actor=people["priya"], case=case, note="Aurora preferred")
    page.set_viewport_size(SCREENS[screen])

    sign_in("tariq")
    expect(page.locator("h1")).to_have_text("My work")
    expect(page.locator(".my-work .count")).to_be_visible()  # the header counts the work
    fits(page)
    screenshot(f"my-work-{screen}")

    mine = page.locator("section", has=page.get_by_role("heading", name="Yours to do"))
    # Under the case's heading, the item links straight to the decision's form.
    assert case.name in mine.locator("h3.work-case").all_inner_texts()
    mine.get_by_role("link", name="Pending approval: approve one offer or reject the case").click()
    expect(page.locator("h1")).to_contain_text("Approve or reject")
    fits(page)
    screenshot(f"approver-decide-{screen}")
    choice = page.get_by_label("Offer")
    choice.select_option(
        label=choice.locator("option", has_text=str(offer.vendor)).first.inner_text().strip()
    )
    page.get_by_label("Approved").check()
    page.get_by_label("Comment").fill("Every gate holds.")
    page.click("button:has-text('Record the decision')")
    expect(page.locator(".messages")).to_contain_text("Decision recorded")

    page.goto(f"{live_server.url}/cases/{case.pk}/")
    tile = page.locator("li.tile", has=page.get_by_role("link", name="Approval", exact=True))
    expect(tile).to_have_class("tile tile-done")
    expect(tile).to_contain_text("In place")
    step = page.locator(".stepper li[aria-current=step]")
    expect(step).to_contain_text("Approved")
    fits(page)
    screenshot(f"cockpit-after-decision-{screen}")
    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.APPROVED

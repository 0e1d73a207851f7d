"""Each person of the demo signs in and finds on My work exactly their items, grouped by
case, and each link lands on a page with the form that mends it (docs/rules/my-work.md).

One page load in Chromium per role; the links are then followed with Django's test
client, as the same person, which is what the browser would fetch.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.browser.test_layout_and_accessibility import demo_server  # noqa: F401

pytestmark = [pytest.mark.whole_case]

# What each role must find on the demo (in words), and what it must never find.
MUST = {
    "priya": ["Accept or fix: The SLA promises", "add an offer or record a waiver"],
    "lena": ["No clause checklist yet: start it", "Red flag: "],
    "tariq": ["Pending approval: approve one offer", "missing driver version", "harness tokens"],
    "fiona": ["Accept or fix: The offer asks 50 % in advance"],
    "aude": ["Audit chain never verified"],
    "admin": ["Pending approval", "No clause checklist yet", "Audit chain never verified"],
}
NEVER = {
    "priya": ["Red flag", "harness token", "Audit chain"],
    "lena": ["harness token", "Pending approval", "Audit chain"],
    "tariq": ["Red flag", "Audit chain", "Run the acceptance tests"],
    "fiona": ["Red flag", "harness token", "Blocks:"],
    "aude": ["harness token", "Accept or fix", "Red flag", "Pending approval"],
    "admin": ["Accept or fix", "harness token"],
}


@pytest.mark.parametrize("username", list(MUST))
def test_each_role_finds_exactly_its_items_and_each_link_mends_one(
    browser,
    demo_server,  # noqa: F811
    django_db_blocker,
    username,
):
    from apps.casework.dashboard import dashboard_for
    from apps.casework.inbox import work_items

    base, _ids = demo_server
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{base}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", "diligence-demo")
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/dashboard/")
        mine = page.locator("section", has=page.locator("#yours-title"))
        links = mine.locator("ul.work-items > li > a")
        shown = [
            (links.nth(i).inner_text(), links.nth(i).get_attribute("href"))
            for i in range(links.count())
        ]
        groups = mine.locator("h3.work-case").all_inner_texts()
    finally:
        context.close()

    with django_db_blocker.unblock():
        person = get_user_model().objects.get(username=username)
        items = work_items(dashboard_for(person))
        expected = [
            (f"{item.subject}: {item.detail}" if item.subject else item.detail, item.url)
            for item in items
        ]
        # Exactly the person's items, in the page's order (by case, then by due date).
        assert sorted(shown) == sorted(expected)
        assert len(groups) == len({item.case_name for item in items})
        text = " ".join(label for label, _url in shown)
        for words in MUST[username]:
            assert words in text, words
        for words in NEVER[username]:
            assert words not in text, words
        client = Client()
        client.force_login(person)
        for url in {url for _label, url in shown}:
            response = client.get(url)
            assert response.status_code == 200, url
            assert '<form method="post"' in response.content.decode(), url

"""My work: what waits for each person, overdue first, with its count in the header and a
daily e-mail digest each person may turn off."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.approvals.services import case_submit_for_approval
from apps.casework.dashboard import dashboard_for
from apps.casework.inbox import digests_send, work_items
from apps.casework.tasks import send_daily_digests_task
from apps.core.services import tracked_update
from tests.approvals.factories import make_reminder_world

MY_WORK = reverse("approvals:dashboard")


@pytest.fixture
def world(people):
    # Its own world for each test: a digest reads every case, and some tests here have none.
    return make_reminder_world(people)


def _overdue_matrix_and_assessment_due_soon(case, people):
    today = timezone.localdate()
    tracked_update(
        case.access_matrix,
        actor=people["tariq"],
        reason="Review overdue",
        fields={"review_by": today - timedelta(days=3)},
    )
    tracked_update(
        case.data_export_assessments.get(),
        actor=people["lena"],
        reason="Review due soon",
        fields={"review_by": today + timedelta(days=5)},
    )


def test_signing_in_lands_on_my_work(people):
    client = Client()
    response = client.post(reverse("login"), {"username": "tariq", "password": "pw"})
    assert response.status_code == 302 and response["Location"] == MY_WORK


def test_yours_to_do_lists_overdue_work_first_with_its_due_date(world, people, browser_as):
    case, _offer = world
    case_submit_for_approval(actor=people["priya"], case=case)  # a decision waits (undated)
    _overdue_matrix_and_assessment_due_soon(case, people)
    items = work_items(dashboard_for(people["tariq"]))
    assert items[0].overdue and items[0].overdue_days == 3
    dated = [item for item in items if item.due_on]
    assert dated == sorted(dated, key=lambda item: (not item.overdue, item.due_on))
    assert any(item.due_on is None and "Pending approval" in item.detail for item in items)
    # The overdue review is the tech leads' item, dated: once, not again as a reminder.
    matrix = reverse("access:matrix", args=[case.pk])
    assert [item.overdue_days for item in items if item.url == matrix] == [3]

    html = browser_as("tariq").get(MY_WORK).content.decode()
    mine = html[html.index("Yours to do") : html.index("</section>")]
    lines = re.findall(r"<li class=\"(\w+)\">(.*?)</li>", mine, re.S)
    assert len(lines) == len(items)
    assert "overdue by 3 days" in lines[0][1] and lines[0][0] == "bad"


def test_the_header_count_matches_the_list_and_follows_each_write(world, people, browser_as):
    case, _offer = world
    client = browser_as("tariq")
    url = reverse("approvals:waiting")

    def count() -> int:
        response = client.get(url)
        assert response.status_code == 200
        return response.json()["count"]

    before = count()
    assert before == len(work_items(dashboard_for(people["tariq"])))
    case_submit_for_approval(actor=people["priya"], case=case)
    assert count() == before + 1  # the decision now waits for a tech lead
    assert client.get(url).json()["label"] == f"{before + 1} items wait for you"
    page = client.get(MY_WORK).content.decode()
    assert f'data-count-url="{url}"' in page


def test_the_count_and_the_page_need_a_signed_in_person(world, client):
    for url in (MY_WORK, reverse("approvals:waiting")):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.post(reverse("approvals:digest"), {}).status_code == 302


def test_the_digest_lists_each_persons_work_and_respects_their_choice(
    world,
    people,
    browser_as,
    mailoutbox,
):
    case, _offer = world
    _overdue_matrix_and_assessment_due_soon(case, people)
    sent = send_daily_digests_task()
    assert sent == len(mailoutbox) > 0
    tariq = next(mail for mail in mailoutbox if mail.to == ["tariq@diligence.example"])
    assert "overdue" in tariq.subject
    assert "overdue by 3 days" in tariq.body
    assert f"http://127.0.0.1:8000{reverse('access:matrix', args=[case.pk])}" in tariq.body
    assert "turn the daily digest off" in tariq.body

    # tariq turns it off on My work: the next morning he gets none, the others still do.
    client = browser_as("tariq")
    response = client.post(reverse("approvals:digest"), {})
    assert response.status_code == 302
    assert (
        "checked" not in client.get(MY_WORK).content.decode().split('name="daily_digest"')[1][:20]
    )
    mailoutbox.clear()
    assert digests_send() == sent - 1
    assert all(mail.to != ["tariq@diligence.example"] for mail in mailoutbox)

    client.post(reverse("approvals:digest"), {"daily_digest": "on"})
    mailoutbox.clear()
    assert digests_send() == sent


def test_nobody_gets_an_empty_digest(people, mailoutbox):
    assert digests_send() == 0
    assert mailoutbox == []


def test_a_long_list_is_read_a_page_at_a_time_in_its_order(world, people, browser_as, monkeypatch):
    case, _offer = world
    case_submit_for_approval(actor=people["priya"], case=case)
    _overdue_matrix_and_assessment_due_soon(case, people)
    items = work_items(dashboard_for(people["tariq"]))
    assert len(items) >= 3
    monkeypatch.setattr("apps.casework.views.WORK_PAGE_SIZE", 2)
    client = browser_as("tariq")

    def details(html: str) -> list[str]:
        listed = html.split('class="missing work-items"', 1)[1].split("</section>", 1)[0]
        return [
            re.sub(r"\s+", " ", d).strip()
            for d in re.findall(r'<li class="[a-z]+"><a href="[^"]*">([^<]*)', listed)
        ]

    first = client.get(MY_WORK).content.decode()
    second = client.get(MY_WORK, {"page": 2}).content.decode()
    expected = [(f"{i.subject}: " if i.subject else "") + i.detail for i in items]
    shown = details(first) + details(second)
    assert details(first) == expected[:2]
    assert shown[: min(4, len(expected))] == expected[: min(4, len(expected))]
    # The header counts every item, not the page's; the pager leads on and back.
    assert f"Yours to do: {len(items)} items" in first
    assert "Page 1 of" in first and "?page=2" in first
    assert "Page 2 of" in second and "?page=1" in second
    # A page past the end or not a number shows a page that exists, never an error.
    assert client.get(MY_WORK, {"page": 999}).status_code == 200
    assert client.get(MY_WORK, {"page": "x"}).status_code == 200


def test_the_page_is_read_again_after_each_write_and_not_between_them(world, people, browser_as):
    case, _offer = world
    client = browser_as("tariq")
    with CaptureQueriesContext(connection) as fresh:
        first = client.get(MY_WORK).content.decode()
    todo = lambda html: int(re.search(r"Yours to do: (\d+) item", html).group(1))  # noqa: E731
    # Between writes the board is kept: the next view reads no offer or finding again.
    with CaptureQueriesContext(connection) as kept:
        again = client.get(MY_WORK).content.decode()
    assert again.count("<li") == first.count("<li")
    read = " ".join(q["sql"] for q in kept.captured_queries)
    assert '"offers_offer"' in " ".join(q["sql"] for q in fresh.captured_queries)
    assert '"offers_offer"' not in read and len(kept) < len(fresh)
    case_submit_for_approval(actor=people["priya"], case=case)
    after = client.get(MY_WORK).content.decode()
    assert todo(after) == todo(first) + 1  # the decision now waits for a tech lead

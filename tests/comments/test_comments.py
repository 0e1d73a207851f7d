"""Comments on a case's records: threads, @mentions that notify, the timeline, the packet."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.comments.models import Comment, Mention
from apps.comments.services import comment_add, mentioned_usernames
from apps.contracts.services import checklist_create
from apps.packets.document import packet_document
from apps.packets.signing import get_signer
from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ["priya", "lena", "tariq", "fiona", "aude", "ada"]
COMMENTERS = {"priya", "lena", "tariq", "fiona", "ada"}


@pytest.fixture
def offer(priya):
    return make_offer(priya, make_case(priya, name="Inference cluster"), spec=FULL_SPEC)


def _thread(offer) -> str:
    return reverse("comments:thread", args=["offer", offer.pk])


def _say(client, offer, body, **extra):
    return client.post(_thread(offer), {"body": body, **extra})


def test_mentions_are_read_from_the_text():
    text = "@lena please check; cc @wang.wei, (@li-na) — not mail@example.com nor @@x"
    assert mentioned_usernames(text) == ["lena", "wang.wei", "li-na"]
    assert mentioned_usernames("@lena and @lena again") == ["lena"]


@pytest.mark.parametrize("role", ROLES)
def test_everyone_reads_a_thread_and_those_who_work_the_case_add_to_it(browser_as, offer, role):
    client = browser_as(role)
    page = client.get(_thread(offer))
    assert page.status_code == 200
    assert ('name="body"' in page.content.decode()) == (role in COMMENTERS)
    response = _say(client, offer, f"Checked by {role}.")
    if role in COMMENTERS:
        assert response.status_code == 302
        assert Comment.objects.get().author.username == role
    else:
        assert response.status_code == 403
        assert not Comment.objects.exists()


def test_anonymous_visitors_are_sent_to_sign_in(client, offer):
    response = client.get(_thread(offer))
    assert response.status_code == 302 and "/login" in response.url
    assert _say(client, offer, "hello").status_code == 302
    assert not Comment.objects.exists()


def test_a_mention_notifies_by_email_and_on_the_work_list_until_read(
    browser_as, offer, lena, django_capture_on_commit_callbacks
):
    lena.email = "lena@example.com"
    lena.save()
    before = browser_as("lena").get(reverse("approvals:waiting")).json()

    with django_capture_on_commit_callbacks(execute=True):
        response = _say(
            browser_as("priya"), offer, "@lena is the exit clause acceptable?", next="/offers/x/"
        )
    comment = Comment.objects.get()
    assert response.status_code == 302
    assert response.url.endswith(f"#comment-{comment.pk}")
    assert [m.person for m in Mention.objects.all()] == [lena]
    [message] = mail.outbox
    assert message.to == ["lena@example.com"]
    assert "is the exit clause acceptable?" in message.body
    assert reverse("comments:comment", args=[comment.pk]) in message.body

    lena_client = browser_as("lena")
    dashboard = lena_client.get(reverse("approvals:dashboard")).content.decode()
    assert "Mentioned in comments" in dashboard and "is the exit clause acceptable?" in dashboard
    after = lena_client.get(reverse("approvals:waiting")).json()
    assert after["count"] == before["count"] + 1

    # The e-mail's link opens the comment in its thread.
    opened = lena_client.get(reverse("comments:comment", args=[comment.pk]))
    assert opened.status_code == 302 and opened.url == f"{_thread(offer)}#comment-{comment.pk}"
    thread = lena_client.get(_thread(offer)).content.decode()
    assert "You were mentioned here." in thread

    lena_client.post(reverse("comments:read", args=["offer", offer.pk]))
    assert Mention.objects.get().read_at is not None
    dashboard = lena_client.get(reverse("approvals:dashboard")).content.decode()
    assert "Mentioned in comments" not in dashboard
    assert lena_client.get(reverse("approvals:waiting")).json() == before


def test_answering_in_the_thread_reads_the_mention(browser_as, offer):
    _say(browser_as("priya"), offer, "@tariq does the spec hold?")
    _say(browser_as("tariq"), offer, "@priya yes, measured.")
    assert Mention.objects.get(person__username="tariq").read_at is not None
    assert Mention.objects.get(person__username="priya").read_at is None


@pytest.mark.parametrize(
    "body,problem",
    [
        ("@nobody look", "Nobody here is called @nobody"),
        ("   ", "This field is required."),
        ("@outsider look", "@outsider may not read this record"),
    ],
)
def test_a_comment_that_cannot_be_delivered_is_refused_whole(browser_as, offer, body, problem):
    get_user_model().objects.create_user("outsider", email="o@example.com")  # no role
    response = _say(browser_as("priya"), offer, body)
    assert response.status_code == 400
    assert problem in response.content.decode()
    assert not Comment.objects.exists() and not Mention.objects.exists()
    assert mail.outbox == []


def test_the_offer_page_shows_its_thread_and_the_text_is_escaped(browser_as, offer):
    _say(browser_as("priya"), offer, "<script>x</script> @lena see line 2\nline 2")
    page = browser_as("aude").get(reverse("offers:detail", args=[offer.pk])).content.decode()
    assert 'id="comments"' in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>x</script>" not in page
    assert '<strong class="mention">@lena</strong>' in page
    assert 'name="body"' not in page  # the auditor reads, never writes


def test_clause_items_link_their_threads_with_counts(browser_as, offer, lena):
    checklist = checklist_create(actor=lena, offer=offer)
    first, second = checklist.items.order_by("number")[:2]
    comment_add(actor=lena, record=first, body="Cap is too low.")
    comment_add(actor=lena, record=first, body="Ask for 12 months.")
    page = browser_as("priya").get(reverse("offers:detail", args=[offer.pk])).content.decode()
    assert reverse("comments:thread", args=["clause", first.pk]) in page
    assert "2 comments" in page
    assert reverse("comments:thread", args=["clause", second.pk]) in page
    thread = browser_as("priya").get(reverse("comments:thread", args=["clause", first.pk]))
    assert "Ask for 12 months." in thread.content.decode()


def _offer_page_queries(client, offer) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("offers:detail", args=[offer.pk])).status_code == 200
    return len(queries)


def test_the_offer_page_reads_a_fixed_number_of_queries_whatever_the_comments(
    browser_as, offer, lena, priya
):
    checklist_create(actor=lena, offer=offer)
    client = browser_as("priya")
    comment_add(actor=priya, record=offer, body="@lena first")
    client.get(reverse("offers:detail", args=[offer.pk]))  # warm the caches
    few = _offer_page_queries(client, offer)
    items = list(offer.clause_checklist.items.all()[:5])
    for n in range(6):
        comment_add(actor=lena, record=offer, body=f"@priya reply {n}")
        comment_add(actor=lena, record=items[n % 5], body=f"note {n}")
    assert _offer_page_queries(client, offer) == few


def test_comments_are_in_the_timeline_and_the_export(browser_as, offer, priya):
    comment_add(actor=priya, record=offer, body="Vendor confirmed the price by phone.")
    client = browser_as("aude")
    timeline = client.get(reverse("audit:case-timeline", args=[offer.case_id]))
    assert "Vendor confirmed the price by phone." in timeline.content.decode()
    exported = client.get(reverse("audit:case-timeline-json", args=[offer.case_id]))
    rows = json.loads(b"".join(exported.streaming_content))["entries"]
    assert any(row["record_type"] == "comments.comment" for row in rows)


def _packet(case, priya):
    return packet_document(
        case,
        number="DIL-2026-000099",
        requested_by=priya,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )


def test_only_comments_for_the_record_go_into_the_packet(offer, priya, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path
    comment_add(actor=priya, record=offer, body="Internal: ask for a discount.")
    document = _packet(offer.case, priya)
    assert "Comments for the record" not in [c.title for c in document.chapters]
    assert not any(r["record_type"] == "comments.comment" for r in document.manifest["records"])

    comment_add(actor=priya, record=offer, body="Price confirmed in writing.", for_the_record=True)
    document = _packet(offer.case, priya)
    chapter = next(c for c in document.chapters if c.title == "Comments for the record")
    assert "Price confirmed in writing." in chapter.html
    assert "ask for a discount" not in "".join(c.html for c in document.chapters)
    comments = [r for r in document.manifest["records"] if r["record_type"] == "comments.comment"]
    assert len(comments) == 1


def _dashboard_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("approvals:dashboard")).status_code == 200
    return len(queries)


def test_my_work_reads_a_fixed_number_of_queries_whatever_the_mentions(
    browser_as, offer, priya, tariq
):
    comment_add(actor=priya, record=offer, body="@tariq one")
    other = make_offer(priya, offer.case)  # its own work is on the list before and after
    client = browser_as("tariq")
    client.get(reverse("approvals:dashboard"))  # warm the caches
    few = _dashboard_queries(client)
    for n in range(5):
        comment_add(actor=priya, record=other if n % 2 else offer, body=f"@tariq more {n}")
    page = client.get(reverse("approvals:dashboard")).content.decode()
    assert all(f"@tariq more {n}" in page for n in range(5))
    assert _dashboard_queries(client) == few


def test_a_thread_is_said_in_chinese(browser_as, offer):
    _say(browser_as("priya"), offer, "@lena 请确认")
    page = browser_as("lena").get(_thread(offer), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    text = page.content.decode()
    assert "评论" in text and "有人在这里提到了您。" in text and "标记为已读" in text


@pytest.mark.parametrize("role", ROLES)
def test_every_role_opens_a_comment_and_marks_its_mentions_read(browser_as, offer, priya, role):
    comment = comment_add(actor=priya, record=offer, body="Checked.")
    client = browser_as(role)
    opened = client.get(reverse("comments:comment", args=[comment.pk]))
    assert opened.status_code == 302 and opened.url.endswith(f"#comment-{comment.pk}")
    marked = client.post(reverse("comments:read", args=["offer", offer.pk]))
    assert marked.status_code == 302
    assert client.get(reverse("comments:read", args=["offer", offer.pk])).status_code == 405


@pytest.mark.parametrize(("choice", "mailed", "waiting"), [("off", 0, 0), ("digest", 0, 1)])
def test_a_mention_is_told_as_the_person_chose(
    browser_as, offer, lena, django_capture_on_commit_callbacks, choice, mailed, waiting
):
    from apps.core.models import Notification
    from apps.core.notifications import email_choice_set

    lena.email = "lena@example.com"
    lena.save()
    email_choice_set(user=lena, email=choice)
    with django_capture_on_commit_callbacks(execute=True):
        _say(browser_as("priya"), offer, "@lena does clause 7 hold?")
    assert len(mail.outbox) == mailed
    told = Notification.objects.filter(recipient=lena, event="mention", emailed_at__isnull=True)
    assert told.count() == waiting
    assert Mention.objects.get().person == lena  # on her work list whatever she chose


def test_a_mention_reaches_a_webhook_that_follows_mentions(
    browser_as, offer, lena, django_capture_on_commit_callbacks
):
    from apps.core.models import Webhook, WebhookDelivery
    from tests.webhook_receiver import Receiver

    receiver = Receiver(200).start()
    try:
        Webhook.objects.create(name="Legal channel", url=receiver.url, events=["mention"])
        with django_capture_on_commit_callbacks(execute=True):
            _say(browser_as("priya"), offer, "@lena does clause 7 hold?")
        [delivery] = WebhookDelivery.objects.all()
        assert delivery.event == "mention"
        [received] = receiver.received
        assert "does clause 7 hold?" in received.body.decode()
    finally:
        receiver.stop()

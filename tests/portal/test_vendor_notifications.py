"""Li Wei sends answers through the portal: the reviewers of their section are e-mailed and
the organisation's webhook is told, signed (docs/notifications.md#who-is-told).

priya (procurement) invited her; the declared spec is the tech lead's to review, so tariq
hears of it, and the webhook, a receiver on 127.0.0.1 started by the test, gets the event.
"""

import json
import time
from datetime import datetime

import pytest
from django.core import mail
from django.urls import reverse

from apps.core.models import EmailChoice, NotificationEvent, Webhook, WebhookDelivery
from apps.core.notifications import email_choice_set
from tests.portal.factories import make_invitation, open_portal
from tests.portal.vendor import reply_url, reviewed, section_url
from tests.webhook_receiver import Receiver, signature_verifies

pytestmark = pytest.mark.django_db

SITE = "https://diligence.example.org"
SPEC = {
    "accelerator_model": "NVIDIA H200 SXM 141GB",
    "memory_per_card_gib": "141",
    "cards_per_node": "8",
}


@pytest.fixture
def addresses(people, settings):
    settings.SITE_URL = SITE
    for name, person in people.items():
        person.email = f"{name}@example.org"
        person.save(update_fields=["email"])
    return people


@pytest.fixture
def portal(client, addresses):
    invitation, secret = make_invitation(addresses["priya"])
    open_portal(client, invitation)
    mail.outbox.clear()  # the invitation's own e-mail
    return invitation, secret


@pytest.fixture
def receiver():
    started = Receiver(200).start()
    yield started
    started.stop()


def _webhook(receiver, *events: str) -> Webhook:
    return Webhook.objects.create(
        name="Procurement channel",
        url=receiver.url,
        events=list(events or [NotificationEvent.VENDOR_ANSWERS_SUBMITTED]),
    )


def _send_spec(client, secret, capture):
    with capture(execute=True):
        response = client.post(section_url(secret, "spec"), SPEC)
    assert response.status_code == 302
    return response


def test_the_spec_reviewer_is_e_mailed_with_a_link_on_the_site_url(
    client, portal, django_capture_on_commit_callbacks
):
    invitation, secret = portal
    _send_spec(client, secret, django_capture_on_commit_callbacks)

    [message] = mail.outbox
    assert message.to == ["tariq@example.org"]  # the tech lead reviews the declared spec
    link = f"{SITE}{reverse('portal:answers', args=[invitation.offer.pk])}"
    assert link in message.body
    assert "sent 3 answers to review (Declared spec)" in message.body
    assert f"{SITE}{reverse('accounts:notifications')}" in message.body
    assert "127.0.0.1" not in message.body and "8000" not in message.body
    assert message.subject == f"{invitation.offer.case.name}: A vendor sent answers"


def test_the_webhook_gets_the_event_signed_in_a_body_slack_and_teams_accept(
    client, portal, receiver, django_capture_on_commit_callbacks
):
    invitation, secret = portal
    webhook = _webhook(receiver)
    before = int(time.time())
    _send_spec(client, secret, django_capture_on_commit_callbacks)

    [received] = receiver.received
    assert received.path == "/hooks/diligence"
    assert received.headers["content-type"].startswith("application/json")
    assert signature_verifies(webhook.secret, received)
    assert before <= int(received.headers["x-diligence-timestamp"]) <= int(time.time())
    assert received.headers["x-diligence-event"] == "vendor_answers_submitted"
    body = json.loads(received.body)
    link = f"{SITE}{reverse('portal:answers', args=[invitation.offer.pk])}"
    case = invitation.offer.case
    assert body["event"] == "vendor_answers_submitted"
    assert body["case"] == {"id": case.pk, "name": case.name}
    assert body["url"] == link
    assert body["text"].startswith(invitation.offer.vendor.name) and body["text"].endswith(link)
    assert datetime.fromisoformat(body["occurred_at"]).tzinfo is not None

    [attempt] = WebhookDelivery.objects.all()
    assert (attempt.attempt, attempt.status_code, attempt.delivered) == (1, 200, True)
    assert str(attempt.delivery) == received.headers["x-diligence-delivery"]
    assert attempt.body.encode() == received.body


def test_a_tampered_body_or_another_secret_does_not_verify(
    client, portal, receiver, django_capture_on_commit_callbacks
):
    _invitation, secret = portal
    webhook = _webhook(receiver)
    _send_spec(client, secret, django_capture_on_commit_callbacks)
    [received] = receiver.received
    tampered = type(received)(received.path, received.headers, received.body.replace(b"3", b"4"))
    assert not signature_verifies(webhook.secret, tampered)
    assert not signature_verifies("another secret", received)
    replayed = dict(received.headers, **{"x-diligence-timestamp": "1"})
    assert not signature_verifies(
        webhook.secret, type(received)(received.path, replayed, received.body)
    )


def test_a_webhook_not_subscribed_or_inactive_gets_nothing(
    client, portal, receiver, django_capture_on_commit_callbacks
):
    _invitation, secret = portal
    _webhook(receiver, NotificationEvent.DECISION)
    Webhook.objects.create(
        name="Off", url=receiver.url, events=["vendor_answers_submitted"], active=False
    )
    _send_spec(client, secret, django_capture_on_commit_callbacks)
    assert receiver.received == []
    assert not WebhookDelivery.objects.exists()


def test_a_receiver_answering_500_then_200_is_tried_again_and_both_attempts_are_logged(
    client, portal, django_capture_on_commit_callbacks, addresses
):
    _invitation, secret = portal
    flaky = Receiver(500, 200).start()
    try:
        webhook = _webhook(flaky)
        _send_spec(client, secret, django_capture_on_commit_callbacks)
    finally:
        flaky.stop()

    first, second = flaky.received
    assert first.body == second.body
    assert first.headers["x-diligence-delivery"] == second.headers["x-diligence-delivery"]
    assert signature_verifies(webhook.secret, first) and signature_verifies(webhook.secret, second)
    attempts = list(WebhookDelivery.objects.order_by("attempt"))
    assert [(a.attempt, a.status_code, a.delivered) for a in attempts] == [
        (1, 500, False),
        (2, 200, True),
    ]
    assert "HTTP 500" in attempts[0].error and attempts[0].retry_at is not None
    assert attempts[1].retry_at is None

    # The log, on the admin's pages: the webhook's own and the list of every attempt.
    ada = addresses["ada"]
    ada.is_staff = True
    ada.save(update_fields=["is_staff"])
    client.force_login(ada)
    page = client.get(reverse("admin:core_webhook_change", args=[webhook.pk])).content.decode()
    assert page.count("HTTP 500") == 1 and ">500<" in page and ">200<" in page
    listing = client.get(reverse("admin:core_webhookdelivery_changelist")).content.decode()
    assert "2 webhook deliveries" in listing


def test_a_receiver_that_keeps_failing_gets_five_attempts_and_the_vendor_is_not_refused(
    client, portal, django_capture_on_commit_callbacks
):
    invitation, secret = portal
    down = Receiver(503).start()
    try:
        _webhook(down)
        _send_spec(client, secret, django_capture_on_commit_callbacks)
    finally:
        down.stop()
    attempts = list(WebhookDelivery.objects.order_by("attempt"))
    assert [(a.attempt, a.status_code) for a in attempts] == [(n, 503) for n in range(1, 6)]
    assert not any(a.delivered for a in attempts)
    assert attempts[-1].retry_at is None  # the fifth was the last
    assert invitation.proposals.count() == 3  # the answers are kept whatever the receiver did
    assert len(mail.outbox) == 1  # and the reviewer was still told


def test_an_address_that_cannot_be_reached_is_logged_as_such(
    client, portal, django_capture_on_commit_callbacks
):
    _invitation, secret = portal
    gone = Receiver(200)
    url = gone.url
    gone.server.server_close()  # nothing listens there any more
    Webhook.objects.create(name="Gone", url=url, events=["vendor_answers_submitted"])
    _send_spec(client, secret, django_capture_on_commit_callbacks)
    attempts = list(WebhookDelivery.objects.order_by("attempt"))
    assert len(attempts) == 5
    assert all(a.status_code is None and a.error for a in attempts)


def test_a_reviewer_who_chose_the_digest_or_nothing_is_not_e_mailed_at_once(
    client, portal, addresses, django_capture_on_commit_callbacks
):
    _invitation, secret = portal
    email_choice_set(user=addresses["tariq"], email=EmailChoice.DIGEST)
    _send_spec(client, secret, django_capture_on_commit_callbacks)
    assert mail.outbox == []
    assert addresses["tariq"].notifications.get().emailed_at is None


def test_nothing_is_told_when_the_answers_are_refused(
    client, portal, receiver, django_capture_on_commit_callbacks
):
    _invitation, secret = portal
    _webhook(receiver)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(section_url(secret, "spec"), {"memory_per_card_gib": "lots"})
    assert response.status_code == 400  # the form again, with the refusal
    assert mail.outbox == [] and receiver.received == []


def test_a_reply_to_a_question_is_told_too(client, portal, django_capture_on_commit_callbacks):
    invitation, secret = portal
    _send_spec(client, secret, django_capture_on_commit_callbacks)
    mail.outbox.clear()
    proposal = invitation.proposals.get(claim="cards_per_node")
    reviewed(proposal, invitation.invited_by, "questioned", note="Per node or per rack?")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reply_url(secret, "spec", proposal.pk),
            {f"reply-{proposal.pk}-reply": "Per node", f"reply-{proposal.pk}-value": "8"},
        )
    assert response.status_code == 302
    [message] = mail.outbox
    assert message.to == ["tariq@example.org"]
    assert "sent 1 answer to review (Declared spec)" in message.body


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_vendor_s_committed_answers_are_told_without_any_test_hook(client, people, settings):
    """No captured callbacks: the portal's own transaction commits and the telling follows."""
    settings.SITE_URL = SITE
    for name, person in people.items():
        person.email = f"{name}@example.org"
        person.save(update_fields=["email"])
    invitation, secret = make_invitation(people["priya"])
    open_portal(client, invitation)
    mail.outbox.clear()
    receiver = Receiver(200).start()
    try:
        webhook = _webhook(receiver)
        response = client.post(section_url(secret, "spec"), SPEC)
    finally:
        receiver.stop()
    assert response.status_code == 302
    assert [m.to for m in mail.outbox] == [["tariq@example.org"]]
    [received] = receiver.received
    assert signature_verifies(webhook.secret, received)
    assert WebhookDelivery.objects.get().delivered

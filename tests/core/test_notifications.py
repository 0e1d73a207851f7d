"""Telling people of events (docs/notifications.md): each person's own choice of e-mail, the
daily digest of events, who is left out, and who manages webhooks."""

import io

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse
from django.utils.translation import gettext_lazy

from apps.core.models import (
    EmailChoice,
    Notification,
    NotificationEvent,
    NotificationPreference,
    Webhook,
    WebhookDelivery,
)
from apps.core.notifications import email_choice, email_choice_set, notification_email_send, notify
from apps.core.tasks import send_notification_digests_task
from tests.factories import make_case

pytestmark = pytest.mark.django_db

SITE = "https://diligence.example.org"
ROLES = ["priya", "lena", "tariq", "fiona", "aude", "ada"]


@pytest.fixture
def addresses(people, settings):
    settings.SITE_URL = SITE
    for name, person in people.items():
        person.email = f"{name}@example.org"
        person.save(update_fields=["email"])
    return people


@pytest.fixture
def case(addresses):
    return make_case(addresses["priya"], name="Chat assistant")


def _tell(capture, case, recipients, *, actor=None, what="Something happened on %(case)s."):
    with capture(execute=True):
        notify(
            NotificationEvent.DECISION,
            case=case,
            text=gettext_lazy(what),
            params={"case": case.name},
            path=reverse("approvals:case", args=[case.pk]),
            recipients=recipients,
            actor=actor,
        )


# --- who is e-mailed -------------------------------------------------------------------------


def test_the_actor_is_never_told_of_their_own_act(
    addresses, case, django_capture_on_commit_callbacks
):
    _tell(
        django_capture_on_commit_callbacks,
        case,
        [addresses["priya"], addresses["tariq"]],
        actor=addresses["tariq"],
    )
    assert [m.to for m in mail.outbox] == [["priya@example.org"]]


def test_nobody_without_an_address_inactive_or_who_chose_nothing_is_e_mailed(
    addresses, case, django_capture_on_commit_callbacks
):
    addresses["lena"].email = ""
    addresses["lena"].save()
    addresses["aude"].is_active = False
    addresses["aude"].save()
    email_choice_set(user=addresses["fiona"], email=EmailChoice.OFF)
    _tell(
        django_capture_on_commit_callbacks,
        case,
        [addresses[name] for name in ("lena", "aude", "fiona", "tariq")],
    )
    assert [m.to for m in mail.outbox] == [["tariq@example.org"]]
    assert set(Notification.objects.values_list("recipient__username", flat=True)) == {"tariq"}


@pytest.mark.postgres
def test_nothing_is_told_when_the_write_is_rolled_back(
    addresses, case, django_capture_on_commit_callbacks
):
    from django.db import transaction

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        try:
            with transaction.atomic():
                notify(
                    NotificationEvent.DECISION,
                    case=case,
                    text=gettext_lazy("Decided"),
                    path="/",
                    recipients=[addresses["tariq"]],
                )
                raise RuntimeError("the write fails")
        except RuntimeError:
            pass
    assert callbacks == [] and mail.outbox == [] and not Notification.objects.exists()


def test_an_e_mail_already_sent_is_not_sent_again(
    addresses, case, django_capture_on_commit_callbacks
):
    _tell(django_capture_on_commit_callbacks, case, [addresses["tariq"]])
    notification = Notification.objects.get()
    assert notification.emailed_at is not None
    assert notification_email_send(notification.pk) is False  # a task delivered twice
    assert len(mail.outbox) == 1


def test_the_e_mail_is_in_the_site_language_whatever_the_request_spoke(
    addresses, case, settings, django_capture_on_commit_callbacks
):
    from django.utils import translation

    with translation.override("zh-hans"):
        _tell(django_capture_on_commit_callbacks, case, [addresses["tariq"]])
    [message] = mail.outbox
    assert "Open it" in message.body and "An approval was decided" in message.subject


# --- the daily digest ------------------------------------------------------------------------


def test_the_digest_sends_one_e_mail_per_person_with_everything_since_the_last(
    addresses, case, django_capture_on_commit_callbacks
):
    other = make_case(addresses["priya"], name="Batch embeddings")
    for name in ("priya", "lena"):
        email_choice_set(user=addresses[name], email=EmailChoice.DIGEST)
    people = [addresses["priya"], addresses["lena"], addresses["tariq"]]
    _tell(django_capture_on_commit_callbacks, case, people, what="First event on %(case)s.")
    _tell(django_capture_on_commit_callbacks, other, people, what="Second event on %(case)s.")
    assert [m.to for m in mail.outbox] == [["tariq@example.org"]] * 2  # tariq: at once
    mail.outbox.clear()

    out = io.StringIO()
    call_command("send_notification_digests", stdout=out)
    assert out.getvalue().strip() == "2 digest e-mail(s) sent"

    assert sorted(m.to[0] for m in mail.outbox) == ["lena@example.org", "priya@example.org"]
    for message in mail.outbox:
        assert message.subject == "2 events on your cases in Diligence"
        assert message.body.index("First event on Chat assistant.") < message.body.index(
            "Second event on Batch embeddings."
        )
        assert f"{SITE}{reverse('approvals:case', args=[case.pk])}" in message.body
        assert f"{SITE}{reverse('approvals:case', args=[other.pk])}" in message.body
        assert f"{SITE}{reverse('accounts:notifications')}" in message.body

    # The next digest holds only what happened since.
    mail.outbox.clear()
    assert send_notification_digests_task.delay().get() == 0
    assert mail.outbox == []
    _tell(django_capture_on_commit_callbacks, case, people[:1], what="Third on %(case)s.")
    assert send_notification_digests_task.delay().get() == 1
    [message] = mail.outbox
    assert message.subject == "1 event on your cases in Diligence"
    assert "Third on Chat assistant." in message.body and "First event" not in message.body


def test_a_digest_that_cannot_be_sent_waits_for_the_next(
    addresses, case, monkeypatch, django_capture_on_commit_callbacks
):
    email_choice_set(user=addresses["lena"], email=EmailChoice.DIGEST)
    _tell(django_capture_on_commit_callbacks, case, [addresses["lena"]])

    def refused(*args, **kwargs):
        raise OSError("mail server down")

    monkeypatch.setattr("apps.core.notifications.send_mail", refused)
    assert send_notification_digests_task.delay().get() == 0
    assert Notification.objects.get().emailed_at is None
    monkeypatch.undo()
    assert send_notification_digests_task.delay().get() == 1


def test_turning_e_mail_off_drops_what_waited_for_the_digest(
    addresses, case, django_capture_on_commit_callbacks
):
    email_choice_set(user=addresses["lena"], email=EmailChoice.DIGEST)
    _tell(django_capture_on_commit_callbacks, case, [addresses["lena"]])
    email_choice_set(user=addresses["lena"], email=EmailChoice.OFF)
    assert send_notification_digests_task.delay().get() == 0
    assert mail.outbox == []


def test_the_digest_is_scheduled_each_morning():
    from django.conf import settings

    entry = settings.CELERY_BEAT_SCHEDULE["core-send-notification-digests"]
    assert entry["task"] == "apps.core.tasks.send_notification_digests_task"


# --- each person's own choice ----------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_each_person_reads_and_sets_their_own_choice(browser_as, people, role):
    client = browser_as(role)
    url = reverse("accounts:notifications")
    page = client.get(url)
    assert page.status_code == 200
    assert 'value="immediate" required id="id_email_0" checked' in page.content.decode()
    others = [p for name, p in people.items() if name != role]
    response = client.post(url, {"email": "digest", "user": others[0].pk})
    assert response.status_code == 302 and response.url == url
    assert email_choice(people[role]) == EmailChoice.DIGEST
    assert NotificationPreference.objects.count() == 1  # nobody else's changed
    assert 'value="digest" required id="id_email_1" checked' in client.get(url).content.decode()


def test_the_choice_page_is_in_the_account_menu(browser_as):
    page = browser_as("aude").get(reverse("cases:list")).content.decode()
    assert f'href="{reverse("accounts:notifications")}"' in page


def test_an_unknown_choice_is_refused_on_the_form_and_nothing_is_saved(browser_as, people):
    response = browser_as("lena").post(reverse("accounts:notifications"), {"email": "hourly"})
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not NotificationPreference.objects.exists()


def test_the_choice_page_sends_a_visitor_to_sign_in(client, db):
    url = reverse("accounts:notifications")
    response = client.post(url, {"email": "off"})
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert not NotificationPreference.objects.exists()


# --- webhooks: administrators only -----------------------------------------------------------


def _staff(person):
    person.is_staff = True
    person.save(update_fields=["is_staff"])
    return person


def test_an_administrator_adds_a_webhook_with_the_events_it_receives(client, people):
    client.force_login(_staff(people["ada"]))
    response = client.post(
        reverse("admin:core_webhook_add"),
        {
            "name": "Procurement channel",
            "url": "https://hooks.slack.example/services/T0/B0/x",
            "secret": "s3cret-for-the-receiver",
            "events": ["vendor_answers_submitted", "decision"],
            "active": "on",
            "deliveries-TOTAL_FORMS": "0",
            "deliveries-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    webhook = Webhook.objects.get()
    assert webhook.events == ["vendor_answers_submitted", "decision"]
    assert webhook.secret == "s3cret-for-the-receiver"


def test_a_webhook_address_that_is_not_http_is_refused(client, people):
    client.force_login(_staff(people["ada"]))
    response = client.post(
        reverse("admin:core_webhook_add"),
        {
            "name": "Local file",
            "url": "ftp://files.example.org/drop",
            "secret": "x",
            "events": ["decision"],
            "deliveries-TOTAL_FORMS": "0",
            "deliveries-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("role", ["priya", "lena", "tariq", "fiona", "aude"])
def test_nobody_but_an_administrator_sees_or_manages_webhooks(client, people, role):
    webhook = Webhook.objects.create(name="Channel", url="https://example.org/h", events=[])
    client.force_login(_staff(people[role]))  # even staff, without the administrator's role
    for name, args in (
        ("admin:core_webhook_changelist", []),
        ("admin:core_webhook_add", []),
        ("admin:core_webhook_change", [webhook.pk]),
        ("admin:core_webhookdelivery_changelist", []),
    ):
        assert client.get(reverse(name, args=args)).status_code == 403, name
    response = client.post(reverse("admin:core_webhook_delete", args=[webhook.pk]), {"post": "yes"})
    assert response.status_code == 403
    assert Webhook.objects.filter(pk=webhook.pk).exists()


def test_a_signed_in_person_who_is_not_staff_is_sent_to_the_admin_sign_in(client, people):
    client.force_login(people["ada"])
    response = client.get(reverse("admin:core_webhook_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_the_delivery_log_is_read_only_even_for_an_administrator(client, people):
    import uuid

    from django.utils import timezone

    webhook = Webhook.objects.create(name="Channel", url="https://example.org/h", events=[])
    row = WebhookDelivery.objects.create(
        webhook=webhook,
        delivery=uuid.uuid4(),
        event="decision",
        attempt=1,
        body="{}",
        attempted_at=timezone.now(),
        status_code=500,
        error="HTTP 500",
    )
    client.force_login(_staff(people["ada"]))
    assert client.get(reverse("admin:core_webhookdelivery_changelist")).status_code == 200
    change_url = reverse("admin:core_webhookdelivery_change", args=[row.pk])
    assert client.get(change_url).status_code == 200
    assert client.get(reverse("admin:core_webhookdelivery_add")).status_code == 403
    change = client.post(change_url, {"status_code": "200"})
    assert change.status_code == 403
    delete_url = reverse("admin:core_webhookdelivery_delete", args=[row.pk])
    delete = client.post(delete_url, {"post": "yes"})
    assert delete.status_code == 403
    row.refresh_from_db()
    assert row.status_code == 500

"""Telling people and other systems what happened on a case (docs/notifications.md).

An area's service that performs an event calls ``notify`` inside its transaction,
naming the people whose role acts on it; nothing is told unless the write commits
(``transaction.on_commit``). Then:

- each of those people with an e-mail address gets it by e-mail, as they chose
  (``NotificationPreference``): at once, in their daily digest, or not at all; the
  one who did it is never told of their own act;
- each active ``Webhook`` subscribed to the event gets it posted, signed
  (``apps.core.webhooks``).

Which people act on an event is the area's rule; this module only delivers. Every
text is in the site's language (``LANGUAGE_CODE``), and every link is absolute, built
from ``SITE_URL`` alone.
"""

import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from celery import shared_task
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.core.background import dispatch
from apps.core.models import (
    EmailChoice,
    Notification,
    NotificationEvent,
    NotificationPreference,
    Webhook,
)
from apps.core.roles import Role, collect_role_permissions
from apps.core.webhooks import Occurrence, absolute_url, deliver_webhook_task, payload

logger = logging.getLogger(__name__)

Event = NotificationEvent


def people_in_roles(roles: Iterable[str]) -> QuerySet:
    """The active people who hold any of ``roles`` (their role groups)."""
    return (
        get_user_model()
        .objects.filter(is_active=True, groups__name__in=[str(role) for role in roles])
        .distinct()
    )


def roles_granting(permission: str) -> set[str]:
    """The roles (the administrator's aside: it holds everything, acts on nothing by
    default) whose members hold ``permission``."""
    granted = collect_role_permissions()
    return {role for role, names in granted.items() if role != Role.ADMIN and permission in names}


def people_holding(permission: str) -> QuerySet:
    """The active people whose role acts with ``permission`` (the administrator aside)."""
    return people_in_roles(roles_granting(permission))


def notify(
    event: str,
    *,
    case,
    text: Promise | str,
    params: Mapping[str, Any] | None = None,
    path: str,
    recipients: Iterable,
    actor=None,
) -> None:
    """Tell of ``event`` on ``case`` once the current transaction commits.

    ``text`` is a lazily translated sentence (``gettext_lazy``, or ``ngettext_lazy`` keyed
    by a number among ``params``) with ``%(name)s`` placeholders filled from ``params``,
    rendered in the site's language; ``path`` the page it links to;
    ``recipients`` the people whose role acts on it (``actor``, who did it, is left out).
    A failure to tell anyone is logged and never undoes the write that committed.
    """
    recipient_ids = {person.pk for person in recipients if person is not None}
    if actor is not None:
        recipient_ids.discard(actor.pk)
    occurred_at = timezone.now()
    with translation.override(settings.LANGUAGE_CODE):
        # Labels are translated now; numbers stay numbers (they choose a plural form).
        values = {
            key: str(value) if isinstance(value, Promise) else value
            for key, value in (params or {}).items()
        }
        summary = str(text % values) if values else str(text)
    occurrence = Occurrence(
        event=str(event),
        case_id=case.pk,
        case_name=str(case),
        summary=summary,
        path=path,
        occurred_at=occurred_at,
    )
    transaction.on_commit(lambda: tell(occurrence, recipient_ids), robust=True)


def tell(occurrence: Occurrence, recipient_ids: Iterable[int]) -> None:
    """E-mail the people (as each chose) and post to the webhooks: after the commit."""
    for notification in _notifications_record(occurrence, recipient_ids):
        if notification.delivery == EmailChoice.IMMEDIATE:
            _start(send_notification_email_task, notification.pk)
    for webhook in Webhook.objects.filter(active=True).order_by("pk"):
        if occurrence.event in (webhook.events or []):
            _start(
                deliver_webhook_task,
                webhook.pk,
                str(uuid.uuid4()),
                occurrence.event,
                payload(occurrence),
            )


def _start(task, *args) -> None:
    try:
        dispatch(task, *args)
    except Exception:  # a broker that cannot be reached costs the notice, never the write
        logger.exception("Could not start %s", getattr(task, "name", task))


def email_choice(user) -> str:
    """How ``user`` chose to hear of events by e-mail (at once, unless they chose otherwise)."""
    preference = NotificationPreference.objects.filter(user=user).first()
    return preference.email if preference is not None else EmailChoice.IMMEDIATE


def email_choice_set(*, user, email: str) -> NotificationPreference:
    """Record ``user``'s own choice. Turning e-mail off drops what waited for their digest."""
    if email not in EmailChoice.values:
        raise ValueError(email)
    with transaction.atomic():
        preference, _created = NotificationPreference.objects.update_or_create(
            user=user, defaults={"email": email}
        )
        if email == EmailChoice.OFF:
            Notification.objects.filter(
                recipient=user, delivery=EmailChoice.DIGEST, emailed_at__isnull=True
            ).delete()
    return preference


def _notifications_record(occurrence: Occurrence, recipient_ids: Iterable[int]) -> list:
    ids = set(recipient_ids)
    if not ids:
        return []
    chosen = dict(
        NotificationPreference.objects.filter(user_id__in=ids).values_list("user_id", "email")
    )
    people = (
        get_user_model().objects.filter(pk__in=ids, is_active=True).exclude(email="").order_by("pk")
    )
    made = []
    with transaction.atomic():
        for person in people:
            choice = chosen.get(person.pk, EmailChoice.IMMEDIATE)
            if choice == EmailChoice.OFF:
                continue
            made.append(
                Notification.objects.create(
                    recipient=person,
                    event=occurrence.event,
                    case_id=occurrence.case_id,
                    summary=occurrence.summary,
                    path=occurrence.path,
                    occurred_at=occurrence.occurred_at,
                    delivery=choice,
                )
            )
    return made


def _preferences_url() -> str:
    return absolute_url(reverse("accounts:notifications"))


EMAIL_TASK = "apps.core.notifications.send_notification_email_task"


@shared_task(name=EMAIL_TASK, acks_late=True)
def send_notification_email_task(notification_id: int) -> bool:
    """E-mail one notification; a mail server that refuses it is logged, not retried."""
    try:
        return notification_email_send(notification_id)
    except Exception:
        logger.exception("Could not e-mail notification %s", notification_id)
        return False


def notification_email_send(notification_id: int) -> bool:
    """E-mail one notification now, once; False when it was sent already or cannot be."""
    with transaction.atomic():
        notification = (
            Notification.objects.select_for_update()
            .select_related("recipient", "case")
            .filter(pk=notification_id, emailed_at__isnull=True)
            .first()
        )
        if notification is None or not notification.recipient.email:
            return False
        person = notification.recipient
        with translation.override(settings.LANGUAGE_CODE):
            subject = _("%(case)s: %(event)s") % {
                "case": notification.case,
                "event": NotificationEvent(notification.event).label,
            }
            body = render_to_string(
                "core/email/notification.txt",
                {
                    "person": person,
                    "notification": notification,
                    "url": absolute_url(notification.path),
                    "preferences_url": _preferences_url(),
                    "organisation": settings.ORGANISATION_NAME,
                },
            )
        send_mail(
            subject=" ".join(subject.split())[:200],
            message=body,
            from_email=None,
            recipient_list=[person.email],
        )
        notification.emailed_at = timezone.now()
        notification.save(update_fields=["emailed_at"])
    return True


def notification_digests_send() -> int:
    """One e-mail to each person with everything that waited for their digest since the
    last one; returns how many were sent. A person whose e-mail fails keeps theirs for
    the next run."""
    waiting = Notification.objects.filter(delivery=EmailChoice.DIGEST, emailed_at__isnull=True)
    people = get_user_model().objects.filter(pk__in=waiting.values("recipient_id")).order_by("pk")
    sent = 0
    for person in people:
        try:
            sent += _digest_send(person)
        except Exception:
            logger.exception("Could not e-mail the digest of events to %s", person.pk)
    return sent


def _digest_send(person) -> int:
    with transaction.atomic():
        items = list(
            Notification.objects.select_for_update()
            .select_related("case")
            .filter(recipient=person, delivery=EmailChoice.DIGEST, emailed_at__isnull=True)
            .order_by("occurred_at", "pk")
        )
        if not items or not person.email or not person.is_active:
            return 0
        with translation.override(settings.LANGUAGE_CODE):
            subject = ngettext(
                "%(n)s event on your cases in Diligence",
                "%(n)s events on your cases in Diligence",
                len(items),
            ) % {"n": len(items)}
            body = render_to_string(
                "core/email/notification_digest.txt",
                {
                    "person": person,
                    "items": [(item, absolute_url(item.path)) for item in items],
                    "preferences_url": _preferences_url(),
                    "organisation": settings.ORGANISATION_NAME,
                },
            )
        send_mail(subject=subject, message=body, from_email=None, recipient_list=[person.email])
        now = timezone.now()
        for item in items:
            item.emailed_at = now
            item.save(update_fields=["emailed_at"])
    return 1

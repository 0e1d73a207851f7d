"""Posting an event to a webhook: the body, its signature, and the attempts at it.

The body is JSON that Slack's and Microsoft Teams' incoming webhooks accept as it is:
a top-level ``text`` (a plain sentence with its link), beside the fields a program
reads (``event``, ``case``, ``url``, ``occurred_at``, ``summary``).

Each delivery is signed with the webhook's secret: ``X-Diligence-Timestamp`` holds the
time of the attempt (Unix seconds) and ``X-Diligence-Signature`` is
``sha256=`` and the hex HMAC-SHA256 of ``<timestamp>.<body>``, so a receiver checks
both that the body came from here and that it is fresh. An attempt answered with
anything but 2xx (a redirect included: none is followed) is tried again with an
exponential back-off, five tries in all; every attempt is a ``WebhookDelivery`` row.
"""

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.core.models import Webhook, WebhookDelivery

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
# Seconds before the second attempt; each later one waits four times as long as the one
# before (30 s, 2 min, 8 min, 32 min): within the broker's visibility timeout.
FIRST_RETRY_SECONDS = 30
RETRY_FACTOR = 4
TIMEOUT_SECONDS = 10
ANSWER_KEPT_CHARS = 500
SCHEMES = ("http", "https")

SIGNATURE_HEADER = "X-Diligence-Signature"
TIMESTAMP_HEADER = "X-Diligence-Timestamp"
EVENT_HEADER = "X-Diligence-Event"
DELIVERY_HEADER = "X-Diligence-Delivery"


def absolute_url(path: str) -> str:
    """``path`` (a path on this site) as a link that works outside it: on ``SITE_URL``."""
    return settings.SITE_URL + path


@dataclass(frozen=True)
class Occurrence:
    """One event, as it is told: in the site's language, with its link on this site."""

    event: str
    case_id: int
    case_name: str
    summary: str
    path: str
    occurred_at: datetime

    @property
    def url(self) -> str:
        return absolute_url(self.path)


def payload(occurrence: Occurrence) -> str:
    """The JSON body posted for ``occurrence``, the same for every attempt."""
    return json.dumps(
        {
            "text": f"{occurrence.summary} {occurrence.url}",
            "event": occurrence.event,
            "case": {"id": occurrence.case_id, "name": occurrence.case_name},
            "url": occurrence.url,
            "occurred_at": occurrence.occurred_at.isoformat(),
            "summary": occurrence.summary,
        },
        ensure_ascii=False,
        sort_keys=True,
    )


def signature(secret: str, timestamp: str, body: str) -> str:
    """The ``X-Diligence-Signature`` value of ``body`` sent at ``timestamp``."""
    signed = f"{timestamp}.{body}".encode()
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def retry_seconds(attempt: int) -> int:
    """How long after attempt number ``attempt`` (from 1) the next one is made."""
    return FIRST_RETRY_SECONDS * RETRY_FACTOR ** (attempt - 1)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # the answer stands as it is: a redirect is not a delivery


_opener = urllib.request.build_opener(_NoRedirects)


@dataclass(frozen=True)
class Answer:
    status_code: int | None
    error: str

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def post(webhook: Webhook, *, delivery: str, event: str, body: str) -> Answer:
    """Post ``body`` to the webhook once, signed now; what the receiver answered."""
    if urlsplit(webhook.url).scheme not in SCHEMES:
        return Answer(None, "Only http and https addresses are posted to.")
    timestamp = str(int(time.time()))
    request = urllib.request.Request(  # noqa: S310 - http or https only, checked above
        webhook.url,
        data=body.encode(),
        method="POST",
        headers={
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": "Diligence-Webhook/1",
            SIGNATURE_HEADER: signature(webhook.secret, timestamp, body),
            TIMESTAMP_HEADER: timestamp,
            EVENT_HEADER: event,
            DELIVERY_HEADER: delivery,
        },
    )
    try:
        with _opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            return Answer(response.status, "")
    except urllib.error.HTTPError as error:
        text = error.read(ANSWER_KEPT_CHARS).decode(errors="replace")
        return Answer(error.code, f"HTTP {error.code} {error.reason}: {text}".strip(": "))
    except Exception as error:  # refused, unreachable, timed out, not HTTP
        return Answer(None, f"{type(error).__name__}: {error}"[:ANSWER_KEPT_CHARS])


def attempt(
    webhook: Webhook, *, delivery: str, event: str, body: str, number: int, retry_in: int | None
) -> WebhookDelivery:
    """Make attempt ``number`` and record it; ``retry_in``: seconds to the next, if one follows
    a failure."""
    answer = post(webhook, delivery=delivery, event=event, body=body)
    attempted_at = timezone.now()
    retry_at = None
    if not answer.delivered and retry_in is not None:
        retry_at = attempted_at + timedelta(seconds=retry_in)
    return WebhookDelivery.objects.create(
        webhook=webhook,
        delivery=delivery,
        event=event,
        attempt=number,
        body=body,
        attempted_at=attempted_at,
        status_code=answer.status_code,
        error=answer.error,
        delivered=answer.delivered,
        retry_at=retry_at,
    )


DELIVERY_TASK = "apps.core.webhooks.deliver_webhook_task"


@shared_task(bind=True, name=DELIVERY_TASK, acks_late=True, max_retries=MAX_ATTEMPTS - 1)
def deliver_webhook_task(self, webhook_id: int, delivery: str, event: str, body: str) -> bool:
    """Attempt a delivery; a failed attempt is retried by Celery after its back-off.

    Without a broker (tasks run in-process, and a retry cannot wait) the attempts follow
    one another at once, in this task."""
    number = self.request.retries + 1
    eager = bool(self.request.is_eager)
    while True:
        outcome = _attempt_once(
            webhook_id, delivery=delivery, event=event, body=body, number=number, eager=eager
        )
        if outcome is not None:
            return outcome
        if not eager:
            raise self.retry(countdown=retry_seconds(number))
        number += 1


def _attempt_once(
    webhook_id: int, *, delivery: str, event: str, body: str, number: int, eager: bool
) -> bool | None:
    """Attempt ``number``: True once delivered, False when no attempt follows, None when
    another should."""
    webhook = Webhook.objects.filter(pk=webhook_id, active=True).first()
    if webhook is None:
        return False  # deleted or turned off since: nothing more is sent
    if WebhookDelivery.objects.filter(delivery=delivery, delivered=True).exists():
        return True  # a message handed out twice by the broker is delivered once
    last = number >= MAX_ATTEMPTS
    # A message the broker hands out again after this attempt was recorded goes on
    # to the next attempt rather than posting the same one twice.
    if not WebhookDelivery.objects.filter(delivery=delivery, attempt=number).exists():
        row = attempt(
            webhook,
            delivery=delivery,
            event=event,
            body=body,
            number=number,
            retry_in=None if last else (0 if eager else retry_seconds(number)),
        )
        if row.delivered:
            return True
    if last:
        logger.warning("Webhook %s: delivery %s failed %s times", webhook.pk, delivery, number)
        return False
    return None

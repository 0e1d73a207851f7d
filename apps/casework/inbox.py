"""My work: what waits for one person across cases, overdue first.

The same list makes the page's "Yours to do", the count beside "My work" in
the site header, and the daily e-mail digest (``digests_send``), so the three
never disagree. Items come from the dashboard (``dashboard_for``): what the
person can act on, by case (docs/rules/my-work.md).
"""

import logging
from datetime import date

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.accounts.models import WorkPreferences
from apps.casework import kept
from apps.casework.dashboard import Board, dashboard_for
from apps.casework.worklist import WorkItem
from apps.comments.selectors import unread_mentions

logger = logging.getLogger(__name__)

# How long a counted total may be served before it is counted again, at most; any
# tracked write counts it again at once (the audit chain head is in its key).


def work_items(board: Board) -> list[WorkItem]:
    """The board's work: overdue first (longest overdue first), then by due date, then
    the undated (docs/rules/my-work.md)."""
    return board.work


def _state_key(user, kind: str) -> str:
    """Changes with anything the person's work is read from (``apps.casework.kept``),
    and with their unread mentions (reading one is not a tracked write)."""
    return kept.state_key(
        user, f"my-work-{kind}", unread_mentions(user).count(), words=kind == "board"
    )


def board_of(user) -> Board:
    """``dashboard_for(user)``, read again only after a tracked write (or the next day,
    or after ``kept.KEPT_SECONDS``): between writes, every view of My work and every
    header count reads the same board."""
    return kept.kept(_state_key(user, "board"), lambda: dashboard_for(user))


def waiting_count(user) -> int:
    """How many items wait for ``user``: counted again after any tracked write or overnight."""
    return kept.kept(_state_key(user, "count"), lambda: len(work_items(board_of(user))))


def wants_digest(user) -> bool:
    """Everyone gets the digest until they turn it off."""
    preferences = WorkPreferences.objects.filter(user=user).first()
    return preferences is None or preferences.daily_digest


def digest_set(user, *, daily_digest: bool) -> WorkPreferences:
    preferences, _created = WorkPreferences.objects.update_or_create(
        user=user, defaults={"daily_digest": daily_digest}
    )
    return preferences


def digests_send(*, today: date | None = None) -> int:
    """One e-mail to each active person with an address, the digest on and work waiting;
    returns how many were sent. In the site's language (``LANGUAGE_CODE``)."""
    today = today or timezone.localdate()
    opted_out = set(
        WorkPreferences.objects.filter(daily_digest=False).values_list("user_id", flat=True)
    )
    people = get_user_model().objects.filter(is_active=True).exclude(email="").order_by("pk")
    sent = 0
    with translation.override(settings.LANGUAGE_CODE):
        for person in people:
            if person.pk in opted_out:
                continue
            items = work_items(dashboard_for(person))
            if not items:
                continue
            overdue = sum(1 for item in items if item.overdue)
            subject = ngettext(
                "%(n)s item waits for you in Diligence",
                "%(n)s items wait for you in Diligence",
                len(items),
            ) % {"n": len(items)}
            if overdue:
                subject += " " + _("(%(n)s overdue)") % {"n": overdue}
            body = render_to_string(
                "approvals/email/digest.txt",
                {
                    "person": person,
                    "items": items,
                    "today": today,
                    "organisation": settings.ORGANISATION_NAME,
                    "site_url": settings.SITE_URL,
                },
            )
            send_mail(
                subject=subject,
                message=body,
                from_email=None,
                recipient_list=[person.email],
            )
            sent += 1
    return sent

"""Assigned work coming due and gone overdue, told to the people it concerns
(docs/rules/my-work.md#assignments).

Run daily with the reminders: an assignee is told once when their item is due within
``DUE_SOON_DAYS``, and once when it is overdue, with the role's lead told of the overdue
item too. Each notice is sent once per due date (a new date is told again); an item
that no longer waits on its case is not told of at all.
"""

from datetime import date, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.translation import gettext_lazy

from apps.approvals.assignments import leads_of
from apps.approvals.models import WorkAssignment
from apps.casework.dashboard import case_item
from apps.core import formats
from apps.core.models import NotificationEvent
from apps.core.notifications import notify

DUE_SOON_DAYS = 2
DUE_SOON = gettext_lazy("Due %(due)s on %(case)s: %(item)s")
OVERDUE = gettext_lazy("Overdue since %(due)s on %(case)s, with %(assignee)s: %(item)s")


def _name(person) -> str:
    return person.get_full_name() or person.get_username()


def assignments_due_tell(today: date) -> int:
    """Tell of the assignments due soon or overdue today; how many notices were sent."""
    told = 0
    rows = (
        WorkAssignment.objects.filter(assignee__isnull=False, due_on__isnull=False)
        .select_related("case", "assignee")
        .order_by("pk")
    )
    for row in rows:
        due_on = row.due_on
        if due_on is None:
            continue
        overdue = due_on < today and row.overdue_told_for != due_on
        soon = (
            today <= due_on <= today + timedelta(days=DUE_SOON_DAYS)
            and row.due_soon_told_for != due_on
        )
        if not (overdue or soon):
            continue
        item = case_item(row.case, row.item_key)
        if item is None:
            continue  # the item no longer waits: nothing to tell
        label = f"{item.subject}: {item.detail}" if item.subject else item.detail
        params = {
            "due": formats.date(row.due_on),
            "case": row.case.name,
            "item": label,
            "assignee": _name(row.assignee),
        }
        with transaction.atomic():
            if overdue:
                leads = get_user_model().objects.filter(pk__in=leads_of(row.role), is_active=True)
                notify(
                    NotificationEvent.OVERDUE,
                    case=row.case,
                    text=OVERDUE,
                    params=params,
                    path=item.url,
                    recipients=[row.assignee, *leads],
                )
                # untracked: which notices were sent is bookkeeping, not the assignment
                WorkAssignment.objects.filter(pk=row.pk).update(overdue_told_for=due_on)
            else:
                notify(
                    NotificationEvent.DUE_SOON,
                    case=row.case,
                    text=DUE_SOON,
                    params=params,
                    path=item.url,
                    recipients=[row.assignee],
                )
                # untracked: which notices were sent is bookkeeping, not the assignment
                WorkAssignment.objects.filter(pk=row.pk).update(due_soon_told_for=due_on)
        told += 1
    return told

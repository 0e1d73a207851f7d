"""What is coming due, and when to remind whom.

Due dates, one query per kind:
- data-export assessments and access matrices: their review-by date (the
  record is valid through that day, overdue from the next);
- contracts: the renewal date, computed from the approved offer's contract term:
  decision date + ``contract_term_months``; and the notice deadline recorded on a
  contract's terms (the last day to give notice against its renewal), for the case's
  owner;
- harness tokens: their expiry.
Reminders go out 30, 7 and 1 days ahead, and once more when a review is
overdue; each (item, due date, threshold) is reminded once.
"""

import calendar
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.access.models import AccessMatrix
from apps.approvals.models import Approval, Reminder
from apps.assessments.models import DataExportAssessment
from apps.contracts.models import ContractTerms
from apps.core.services import tracked_create
from apps.costs import reminders as costs_reminders
from apps.evidence.models import HarnessToken

# Apps whose reminders are not due dates (a budget threshold crossed) send
# them from the same daily task: each module has ``reminders_send(*, today)``.
REMINDER_PROVIDERS = (costs_reminders,)

THRESHOLDS = (30, 7, 1)
OVERDUE = 0
HORIZON_DAYS = max(THRESHOLDS)


def reminder_threshold(days_left: int, *, remind_overdue: bool) -> int | None:
    """The tightest threshold crossed ``days_left`` days before the due date, or None.

    Only the tightest is sent: an item first seen 5 days ahead gets the 7-day
    reminder, not the 30-day one as well.
    """
    if days_left < 0:
        return OVERDUE if remind_overdue else None
    crossed = [t for t in THRESHOLDS if days_left <= t]
    return min(crossed) if crossed else None


def add_months(day: date, months: int) -> date:
    """Same day ``months`` later, clamped to the month's end (31 Jan + 1 = 28/29 Feb)."""
    month_index = day.month - 1 + months
    year, month = day.year + month_index // 12, month_index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


@dataclass
class DueItem:
    kind: str
    object_model: str
    object_pk: int
    label: str
    due_on: date
    case: object
    url: str
    owners: list = field(default_factory=list)
    remind_overdue: bool = True

    def days_left(self, today: date) -> int:
        return (self.due_on - today).days

    def threshold(self, today: date) -> int | None:
        return reminder_threshold(self.days_left(today), remind_overdue=self.remind_overdue)


def _local_day(moment: datetime) -> date:
    return timezone.localtime(moment).date()


def provided_reminders_send(today: date) -> list:
    sent = []
    for module in REMINDER_PROVIDERS:
        sent += module.reminders_send(today=today)
    return sent


def due_items(today: date, *, horizon_days: int = HORIZON_DAYS) -> list[DueItem]:
    """Every item due within ``horizon_days`` (and overdue reviews), oldest due first."""
    until = today + timedelta(days=horizon_days)
    items: list[DueItem] = []
    items += _assessments(until)
    items += _matrices(until)
    items += _tokens(today, until)
    items += _contracts(today, until)
    items += _notices(today, until)
    return sorted(items, key=lambda item: (item.due_on, item.kind, item.object_pk))


def _assessments(until: date) -> list[DueItem]:
    rows = DataExportAssessment.objects.filter(
        signed_off_at__isnull=False, review_by__lte=until
    ).select_related("case", "offer__vendor", "signed_off_by")
    return [
        DueItem(
            kind=Reminder.Kind.ASSESSMENT_REVIEW,
            object_model="assessments.dataexportassessment",
            object_pk=a.pk,
            label=str(a),
            due_on=a.review_by,
            case=a.case,
            url=reverse("assessments:detail", args=[a.pk]),
            owners=[a.signed_off_by],
        )
        for a in rows
        if a.review_by is not None  # always: review_by__lte leaves out empty days
    ]


def _matrices(until: date) -> list[DueItem]:
    rows = AccessMatrix.objects.filter(reviewed_at__isnull=False, review_by__lte=until)
    return [
        DueItem(
            kind=Reminder.Kind.MATRIX_REVIEW,
            object_model="access.accessmatrix",
            object_pk=m.pk,
            label=str(m),
            due_on=m.review_by,
            case=m.case,
            url=reverse("access:matrix", args=[m.case_id]),
            owners=[m.reviewed_by] if m.reviewed_by else [],
        )
        for m in rows.select_related("case", "reviewed_by")
        if m.review_by is not None  # always: review_by__lte leaves out empty days
    ]


def _tokens(today: date, until: date) -> list[DueItem]:
    now = timezone.now()
    rows = HarnessToken.objects.filter(
        revoked_at__isnull=True,
        expires_at__gt=now,
        expires_at__lt=now + timedelta(days=(until - today).days + 1),
    ).select_related("case", "created_by")
    return [
        DueItem(
            kind=Reminder.Kind.TOKEN_EXPIRY,
            object_model="evidence.harnesstoken",
            object_pk=t.pk,
            label=_("Harness token %(prefix)s… (%(label)s) for %(case)s")
            % {"prefix": t.prefix, "label": t.label or "—", "case": t.case},
            due_on=_local_day(t.expires_at),
            case=t.case,
            url=reverse("evidence:tokens", args=[t.case_id]),
            owners=[t.created_by],
            remind_overdue=False,
        )
        for t in rows
    ]


def _contracts(today: date, until: date) -> list[DueItem]:
    rows = Approval.objects.filter(
        decision=Approval.Decision.APPROVED,
        superseded_at__isnull=True,
        offer__contract_term_months__isnull=False,
    ).select_related("case__owner", "offer__vendor", "decided_by")
    items = []
    for approval in rows:
        offer = approval.offer
        # The query keeps only approvals of an offer with a contract term.
        assert offer is not None and offer.contract_term_months is not None
        renewal = add_months(_local_day(approval.decided_at), offer.contract_term_months)
        if not today <= renewal <= until:
            continue
        items.append(
            DueItem(
                kind=Reminder.Kind.CONTRACT_RENEWAL,
                object_model="approvals.approval",
                object_pk=approval.pk,
                label=_("Contract with %(vendor)s for %(case)s renews")
                % {"vendor": offer.vendor, "case": approval.case},
                due_on=renewal,
                case=approval.case,
                url=reverse("approvals:case", args=[approval.case_id]),
                owners=[approval.case.owner, approval.decided_by],
                remind_overdue=False,
            )
        )
    return items


NOTICE_MODEL = "contracts.contractterms"


def _notices(today: date, until: date) -> list[DueItem]:
    rows = ContractTerms.objects.filter(
        notice_deadline__gte=today, notice_deadline__lte=until
    ).select_related("checklist__offer__case__owner", "checklist__offer__vendor")
    items = []
    for terms in rows:
        offer = terms.checklist.offer
        assert terms.notice_deadline is not None  # the query keeps only terms with one
        items.append(
            DueItem(
                kind=Reminder.Kind.CONTRACT_RENEWAL,
                object_model=NOTICE_MODEL,
                object_pk=terms.pk,
                label=_("Last day to give %(vendor)s notice against the renewal, for %(case)s")
                % {"vendor": offer.vendor, "case": offer.case},
                due_on=terms.notice_deadline,
                case=offer.case,
                url=reverse("contracts:documents", args=[offer.pk]),
                owners=[offer.case.owner],
                remind_overdue=False,
            )
        )
    return items


def reminders_send(*, today=None) -> list[Reminder]:
    """Remind the owners of every item that crossed a threshold; once per item and threshold."""
    today = today or timezone.localdate()
    candidates = []
    for item in due_items(today):
        threshold = item.threshold(today)
        if threshold is not None:
            candidates.append((item, threshold))
    if not candidates:
        return []
    sent = set(
        Reminder.objects.filter(object_pk__in={item.object_pk for item, _t in candidates})
        .values_list("kind", "object_model", "object_pk", "due_on", "threshold")
        .order_by()
    )
    created = []
    for item, threshold in candidates:
        key = (item.kind, item.object_model, item.object_pk, item.due_on, threshold)
        if key in sent:
            continue
        recipients = sorted({u.email for u in item.owners if u is not None and u.email})
        try:
            with transaction.atomic():
                reminder = tracked_create(
                    Reminder,
                    actor=None,
                    reason=f"Reminder sent {threshold} days ahead" if threshold else "Overdue",
                    kind=item.kind,
                    object_model=item.object_model,
                    object_pk=item.object_pk,
                    due_on=item.due_on,
                    threshold=threshold,
                    label=str(item.label)[:300],
                    recipients=recipients,
                    case=item.case,
                )
        except (IntegrityError, ValidationError):
            continue  # another worker recorded it first
        if recipients:
            _send_reminder(item, threshold, recipients, today)
        created.append(reminder)
    return created


def _send_reminder(item, threshold: int, recipients: list[str], today) -> None:
    context = {
        "item": item,
        "threshold": threshold,
        "days_left": item.days_left(today),
        "kind": Reminder.Kind(item.kind).label,
        "organisation": settings.ORGANISATION_NAME,
        "site_url": settings.SITE_URL,
    }
    if threshold == 0:
        subject = _("Overdue: %(label)s") % {"label": item.label}
    else:
        subject = _("Due in %(days)s days: %(label)s") % {
            "days": item.days_left(today),
            "label": item.label,
        }
    send_mail(
        subject=subject[:200],
        message=render_to_string("approvals/email/reminder.txt", context),
        from_email=None,
        recipient_list=recipients,
    )

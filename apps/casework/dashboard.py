"""What waits for one person, by role, in a fixed number of queries.

Legal reviewers: unsigned or expired assessments, open red flags. Tech leads:
cases pending approval, unreviewed or expired access matrices, stale
approvals. Procurement: their cases still lacking offers or scores.
Auditors: recent decisions and the audit chain's state. Everyone: items
coming due that they own (auditors and admins: all), and cases by state.
"""

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from django.db.models import Count, Exists, OuterRef, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.access.models import AccessMatrix
from apps.approvals.binding import changes_for
from apps.approvals.models import Approval, Reminder
from apps.assessments.models import DataExportAssessment
from apps.audit.selectors import chain_status
from apps.cases.models import MINIMUM_COMPARED_OFFERS, ProcurementCase
from apps.casework.reminders import DueItem, due_items
from apps.comments import dashboard as comments_dashboard
from apps.contracts.models import ChecklistItem, RedFlagWaiver
from apps.contracts.rules import RED_STATUSES
from apps.core.contributions import Item, Section
from apps.core.roles import Role
from apps.costs import dashboard as costs_dashboard

if TYPE_CHECKING:
    # Choice labels are lazy translations, rendered in the reader's language.
    from django.utils.functional import _StrOrPromise

LIMIT = 50
# Apps adding a section: ``dashboard_section(user, *, roles, today) -> Section | None``.
DASHBOARD_PROVIDERS = (comments_dashboard, costs_dashboard)


@dataclass
class DueRow:
    item: DueItem
    kind: "_StrOrPromise"
    days_left: int
    overdue_days: int
    reminded: int | None


@dataclass
class Board:
    sections: list[Section]
    expiring: list[DueRow]
    cases_by_state: "list[tuple[str, _StrOrPromise, int]]"
    chain: object = None
    today: date | None = None


def _roles(user) -> set[str]:
    names = set(user.groups.values_list("name", flat=True))
    if user.is_superuser or Role.ADMIN in names:
        return set(Role.values)
    return names


def dashboard_for(user) -> Board:
    today = timezone.localdate()
    roles = _roles(user)
    sees_all = bool(roles & {Role.ADMIN, Role.AUDITOR})
    sections = []
    if Role.LEGAL in roles:
        sections.append(_legal(today))
    if Role.TECH_LEAD in roles:
        sections.append(_tech_lead(user, today))
    if Role.PROCUREMENT in roles:
        sections.append(_procurement(user, all_cases=Role.ADMIN in roles))
    chain = None
    if Role.AUDITOR in roles:
        section, chain = _auditor()
        sections.append(section)
    for module in DASHBOARD_PROVIDERS:
        provided = module.dashboard_section(user, roles=roles, today=today)
        if provided is not None:
            sections.append(provided)
    return Board(
        sections=sections,
        expiring=_expiring(user, today, sees_all=sees_all),
        cases_by_state=_cases_by_state(user),
        chain=chain,
        today=today,
    )


def _legal(today: date) -> Section:
    section = Section(_("To review: legal"))
    rows = (
        DataExportAssessment.objects.filter(Q(signed_off_at__isnull=True) | Q(review_by__lt=today))
        .select_related("case", "offer__vendor")
        .order_by("review_by", "pk")[:LIMIT]
    )
    for a in rows:
        expired = a.signed_off_at is not None
        section.items.append(
            Item(
                str(a),
                _("Expired on %(date)s") % {"date": a.review_by}
                if expired
                else _("Not signed off"),
                reverse("assessments:detail", args=[a.pk]),
                "bad" if expired else "warn",
            )
        )
    waived = RedFlagWaiver.objects.filter(
        item=OuterRef("pk"), lapsed_at__isnull=True, waived_status=OuterRef("status")
    )
    red_items = (
        ChecklistItem.objects.filter(status__in=RED_STATUSES)
        .exclude(Exists(waived))
        .select_related("checklist__offer__vendor", "checklist__offer__case")
        .order_by("checklist__offer__case_id", "number")[:LIMIT]
    )
    for item in red_items:
        offer = item.checklist.offer
        section.items.append(
            Item(
                f"{offer.case} — {offer.vendor}",
                _("Red flag: %(item)s (%(status)s)")
                % {"item": item, "status": item.get_status_display()},
                reverse("contracts:checklist", args=[offer.pk]),
                "bad",
            )
        )
    return section


def _tech_lead(user, today: date) -> Section:
    section = Section(_("To review: tech lead"))
    pending = ProcurementCase.objects.filter(
        status=ProcurementCase.Status.PENDING_APPROVAL
    ).select_related("owner")
    for case in pending.order_by("updated_at")[:LIMIT]:
        own = case.owner_id == user.pk
        section.items.append(
            Item(
                str(case),
                _("Pending approval (you raised it: another tech lead decides)")
                if own
                else _("Pending approval"),
                reverse("approvals:case", args=[case.pk]),
            )
        )
    rows = AccessMatrix.objects.filter(
        Q(reviewed_at__isnull=True) | Q(review_by__lt=today)
    ).select_related("case")
    for matrix in rows.order_by("pk")[:LIMIT]:
        section.items.append(
            Item(
                str(matrix.case),
                _("Access matrix not reviewed")
                if matrix.reviewed_at is None
                else _("Access-matrix review expired on %(date)s") % {"date": matrix.review_by},
                reverse("access:matrix", args=[matrix.case_id]),
            )
        )
    current = list(
        Approval.objects.filter(
            decision=Approval.Decision.APPROVED, superseded_at__isnull=True
        ).select_related("case")[:LIMIT]
    )
    changes = changes_for(current)
    for approval in current:
        found = changes.get(approval.pk) or approval.stale_changes
        if found:
            section.items.append(
                Item(
                    str(approval.case),
                    _("Approval stale: %(n)s record(s) changed since the decision")
                    % {"n": len(found)},
                    reverse("approvals:case", args=[approval.case_id]),
                    "bad",
                )
            )
    return section


def _procurement(user, *, all_cases: bool) -> Section:
    section = Section(_("To do: procurement"))
    cases = ProcurementCase.objects.filter(
        status__in=[ProcurementCase.Status.DRAFT, ProcurementCase.Status.EVALUATING]
    )
    if not all_cases:
        cases = cases.filter(owner=user)
    cases = cases.annotate(
        offer_count=Count("offers", distinct=True),
        unscored=Count("offers", filter=Q(offers__scorecards__isnull=True), distinct=True),
    ).order_by("pk")
    for case in cases[:LIMIT]:
        problems = []
        if case.offer_count < MINIMUM_COMPARED_OFFERS and not case.offer_minimum_waiver.strip():
            problems.append(
                _("%(n)s of %(required)s offers")
                % {"n": case.offer_count, "required": MINIMUM_COMPARED_OFFERS}
            )
        if case.unscored:
            problems.append(_("%(n)s offer(s) not scored") % {"n": case.unscored})
        if problems:
            section.items.append(
                Item(str(case), "; ".join(problems), reverse("cases:detail", args=[case.pk]))
            )
    return section


def _auditor():
    section = Section(_("Recent decisions"), todo=False)
    rows = Approval.objects.select_related("case", "offer__vendor", "decided_by").order_by(
        "-decided_at", "-pk"
    )[:20]
    for approval in rows:
        who = approval.decided_by.get_full_name() or approval.decided_by.get_username()
        detail = f"{approval.get_decision_display()} · {who} · {approval.decided_at:%Y-%m-%d}"
        if approval.offer is not None:
            detail += f" · {approval.offer.vendor}"
        if approval.superseded_at:
            detail += " · " + _("superseded")
        if approval.stale_at:
            detail += " · " + _("stale")
        section.items.append(
            Item(
                str(approval.case),
                detail,
                reverse("approvals:case", args=[approval.case_id]),
                "ok" if approval.decision == Approval.Decision.APPROVED else "bad",
            )
        )
    return section, chain_status()


def _expiring(user, today: date, *, sees_all: bool) -> list[DueRow]:
    items = due_items(today)
    if not sees_all:
        items = [i for i in items if any(o is not None and o.pk == user.pk for o in i.owners)]
    items = items[:LIMIT]
    reminded = {
        (r.kind, r.object_pk, r.due_on): r.threshold
        for r in Reminder.objects.filter(object_pk__in={i.object_pk for i in items}).order_by(
            "-threshold"
        )
    }
    rows = []
    for item in items:
        days_left = item.days_left(today)
        rows.append(
            DueRow(
                item=item,
                kind=Reminder.Kind(item.kind).label,
                days_left=days_left,
                overdue_days=-days_left if days_left < 0 else 0,
                reminded=reminded.get((item.kind, item.object_pk, item.due_on)),
            )
        )
    return rows


def _cases_by_state(user) -> "list[tuple[str, _StrOrPromise, int]]":
    counts = {}
    if user.has_perm("cases.view_procurementcase"):
        counts = dict(
            ProcurementCase.objects.order_by().values_list("status").annotate(n=Count("pk"))
        )
    return [(value, label, counts.get(value, 0)) for value, label in ProcurementCase.Status.choices]

"""What waits for one person, in a fixed number of queries (docs/rules/my-work.md).

The items are those of ``apps.casework.worklist`` (every role's work, from the
findings register and the case lifecycle), kept to what the person can act on
(``mine``), with the assignments in force. Besides: what comes due (auditors and
administrators: all of it, to read), the recent decisions and the audit chain for
auditors, and the cases by state.
"""

from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING

from django.db.models import Count
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.approvals.assignments import assignments_of_cases, leads_of
from apps.approvals.findings import Entry
from apps.approvals.models import Approval, Reminder
from apps.audit.selectors import chain_status
from apps.cases.models import ProcurementCase
from apps.casework import worklist
from apps.casework.registers import CaseFindings, area_registers, findings_url, open_cases
from apps.casework.reminders import DueItem, due_items
from apps.casework.worklist import CaseGroup, WorkItem
from apps.comments import dashboard as comments_dashboard
from apps.core.contributions import Item, Section
from apps.core.roles import Role, roles_of
from apps.costs import dashboard as costs_dashboard

if TYPE_CHECKING:
    # Choice labels are lazy translations, rendered in the reader's language.
    from django.utils.functional import _StrOrPromise

LIMIT = 50
# Apps adding a section: ``dashboard_section(user, *, roles, today) -> Section | None``.
DASHBOARD_PROVIDERS = (comments_dashboard, costs_dashboard)
# An acceptance is an item for the person who gave it this many days before it runs out.
ACCEPTANCE_NOTICE_DAYS = 14


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
    # What the person can act on, sorted (``work``) and by case (``groups``).
    work: list[WorkItem] = field(default_factory=list)
    groups: list[CaseGroup] = field(default_factory=list)


def _roles(user) -> set[str]:
    held = roles_of(user)
    if Role.ADMIN in held:
        return set(Role.values)
    return held


def dashboard_for(user) -> Board:
    today = timezone.localdate()
    roles = _roles(user)
    sees_all = bool(roles & {Role.ADMIN, Role.AUDITOR})
    expiring = _expiring(user, today, sees_all=sees_all)
    cases = open_cases(LIMIT)
    registers = area_registers(cases, today=today) if roles & worklist.FINDING_OWNERS else []
    items = worklist.candidates(roles, today, cases=cases, registers=registers)
    items += worklist.reminders([row.item for row in expiring], today)
    if registers:
        running_out = _acceptances_running_out(user, registers, today)
        items += [_acceptance_item(row, today) for row in running_out]
        expiring += running_out
        expiring.sort(key=lambda row: row.item.due_on)
    sections: list[Section] = []
    chain = None
    if Role.AUDITOR in roles:
        section, chain = _auditor()
        sections.append(section)
    # Only audit work is the auditor's: what other apps add is for those who act on it.
    if roles - {Role.AUDITOR}:
        for module in DASHBOARD_PROVIDERS:
            provided = module.dashboard_section(user, roles=roles, today=today)
            if provided is not None:
                items += _provided(provided, user)
    work = sorted(mine(items, user, roles_of(user), today), key=worklist.order)
    return Board(
        sections=sections,
        expiring=expiring,
        cases_by_state=_cases_by_state(user),
        chain=chain,
        today=today,
        work=work,
        groups=worklist.grouped(work),
    )


def case_item(case, key: str) -> WorkItem | None:
    """The item ``key`` of ``case`` as it waits now, for any role (None: none waits)."""
    today = timezone.localdate()
    registers = area_registers([case], today=today)
    items = worklist.candidates(set(Role.values), today, cases=[case], registers=registers)
    return next((item for item in items if item.case_id == case.pk and item.key == key), None)


def mine(items: list[WorkItem], user, held: set[str], today: date) -> list[WorkItem]:
    """What ``user`` (holding the roles ``held``) can act on, each item once: an assigned
    item for its assignee (and, overdue, for its role's lead); an unassigned one for its
    role's holders (those it names, if any, and not those it rules out); a reminder for
    the people it names. The administrator acts on every role's items but accepts none."""
    admin = Role.ADMIN in held
    assigned = assignments_of_cases({item.case_id for item in items if item.case_id})
    leads: dict[str, set[int]] = {}
    shown: dict[tuple, WorkItem] = {}
    for item in items:
        identity = (item.case_id, item.key)
        if identity in shown:
            continue
        if item.personal:
            if item.holders is not None and user.pk in item.holders:
                shown[identity] = item
            continue
        assignment = assigned.get((item.case_id, item.key)) if item.case_id is not None else None
        if assignment is not None:
            item = worklist.dated(
                replace(
                    item,
                    assignee_id=assignment.assignee_id,
                    assignee_name=_name(assignment.assignee),
                    assigned_by_name=_name(assignment.assigned_by),
                ),
                assignment.due_on,
                today,
            )
            if assignment.assignee_id == user.pk:
                shown[identity] = item
            elif item.overdue:
                if assignment.role not in leads:
                    leads[assignment.role] = leads_of(assignment.role)
                if user.pk in leads[assignment.role]:
                    shown[identity] = replace(item, escalated=True, tone="bad")
            continue
        if user.pk in item.not_for:
            continue
        if admin:
            if not item.accept_only:
                shown[identity] = item
            continue
        if not set(item.roles) & held:
            continue
        if item.holders is not None and user.pk not in item.holders:
            continue
        shown[identity] = item
    return list(shown.values())


def _name(person) -> str:
    if person is None:
        return ""
    return person.get_full_name() or person.get_username()


def _provided(section: Section, user) -> list[WorkItem]:
    """An app's section as items of the person's own (mentions, budgets crossed): the app
    built it for them, so it reaches them and nobody else."""
    return [
        WorkItem(
            key=f"{section.title}:{item.url}:{item.title}",
            case_id=None,
            case_name=str(item.title),
            subject=str(section.title),
            detail=str(item.detail),
            url=item.url,
            tone=item.tone,
            personal=True,
            holders=frozenset({user.pk}),
        )
        for item in section.items
    ]


def _acceptance_item(row: DueRow, today: date) -> WorkItem:
    item = row.item
    return worklist.dated(
        WorkItem(
            key=f"acceptance:{item.object_pk}",
            case_id=getattr(item.case, "pk", None),
            case_name=str(item.case),
            subject="",
            detail=str(item.label),
            url=item.url,
            personal=True,
            holders=frozenset(o.pk for o in item.owners),
        ),
        item.due_on,
        today,
    )


def _finding_title(found: CaseFindings, entry: Entry) -> str:
    offer = found.offers.get(entry.finding.offer_id or 0)
    return str(offer.vendor) if offer is not None else ""


def _acceptances_running_out(user, registers: list[CaseFindings], today: date) -> list[DueRow]:
    """The person's own acceptances in force that run out within the notice period."""
    rows = []
    for found in registers:
        for entry in found.entries:
            for acceptance in entry.acceptances:
                days_left = (acceptance.expires_on - today).days
                if acceptance.accepted_by_id != user.pk or days_left > ACCEPTANCE_NOTICE_DAYS:
                    continue
                subject = _finding_title(found, entry)
                item = DueItem(
                    kind="finding_acceptance",
                    object_model="approvals.findingacceptance",
                    object_pk=acceptance.pk,
                    label=_("Your acceptance runs out: %(finding)s")
                    % {
                        "finding": f"{subject}: {entry.rule.title}" if subject else entry.rule.title
                    },
                    due_on=acceptance.expires_on,
                    case=found.case,
                    url=findings_url(found.case.pk),
                    owners=[user],
                    remind_overdue=False,
                )
                rows.append(
                    DueRow(
                        item=item,
                        kind=_("Acceptance of a finding runs out"),
                        days_left=days_left,
                        overdue_days=0,
                        reminded=None,
                    )
                )
    return rows


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

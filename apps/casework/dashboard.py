"""What waits for one person, by role, in a fixed number of queries.

Legal reviewers: unsigned or expired assessments, open red flags. Tech leads:
cases pending approval, unreviewed or expired access matrices, stale
approvals. Procurement: their cases still lacking offers or scores.
Auditors: recent decisions and the audit chain's state. Everyone: items
coming due that they own (auditors and admins: all), and cases by state.

The findings register (docs/rules/findings.md#in-my-work): each finding that awaits
the acceptance of a role the person holds, each area finding that blocks in the
section of the role that owns it, and the person's own acceptances that run out
within two weeks.
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
from apps.approvals.findings import Entry, Severity, Status
from apps.approvals.models import Approval, Reminder
from apps.assessments.models import DataExportAssessment
from apps.audit.selectors import chain_status
from apps.cases.models import MINIMUM_COMPARED_OFFERS, ProcurementCase
from apps.casework.registers import CaseFindings, area_registers, findings_url, open_cases
from apps.casework.reminders import DueItem, due_items
from apps.comments import dashboard as comments_dashboard
from apps.contracts.models import ChecklistItem, RedFlagWaiver
from apps.contracts.rules import RED_STATUSES
from apps.core.contributions import Item, Section
from apps.core.roles import Role, roles_of
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
    held = roles_of(user)
    if Role.ADMIN in held:
        return set(Role.values)
    return held


def dashboard_for(user) -> Board:
    today = timezone.localdate()
    roles = _roles(user)
    sees_all = bool(roles & {Role.ADMIN, Role.AUDITOR})
    # Each role's own section: what waits for it, what blocks among them.
    own: dict[str, Section] = {}
    if Role.LEGAL in roles:
        own[Role.LEGAL] = _legal(today)
    if Role.TECH_LEAD in roles:
        own[Role.TECH_LEAD] = _tech_lead(user, today)
    if Role.PROCUREMENT in roles:
        own[Role.PROCUREMENT] = _procurement(user, all_cases=Role.ADMIN in roles)
    sections = list(own.values())
    expiring = _expiring(user, today, sees_all=sees_all)
    if roles & FINDING_OWNERS:
        registers = area_registers(open_cases(LIMIT), today=today)
        sections.append(_findings_to_accept(user, roles, registers))
        _blocking_findings(own, registers)
        expiring += _acceptances_running_out(user, registers, today)
        expiring.sort(key=lambda row: row.item.due_on)
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
        expiring=expiring,
        cases_by_state=_cases_by_state(user),
        chain=chain,
        today=today,
    )


# docs/rules/findings.md#in-my-work: the register's findings as items of My work.
FINDING_OWNERS = frozenset({Role.PROCUREMENT, Role.LEGAL, Role.TECH_LEAD, Role.FINANCE})
# An acceptance is an item for the person who gave it this many days before it runs out.
ACCEPTANCE_NOTICE_DAYS = 14


def _finding_title(found: CaseFindings, entry: Entry) -> str:
    offer = found.offers.get(entry.finding.offer_id or 0)
    return f"{found.case} — {offer.vendor}" if offer is not None else str(found.case)


def _findings_to_accept(user, roles: set[str], registers: list[CaseFindings]) -> Section:
    """One item per finding that awaits the acceptance of a role the person holds, unless
    they accepted it already for another of its owners (a joint decision needs two)."""
    section = Section(_("Findings to accept"))
    for found in registers:
        for entry in found.entries:
            if not entry.blocking or entry.rule.severity is not Severity.NEEDS_ACCEPTANCE:
                continue
            if not set(entry.awaiting) & roles:
                continue
            if any(a.accepted_by_id == user.pk for a in entry.acceptances):
                continue
            section.items.append(
                Item(
                    _finding_title(found, entry),
                    _("Accept or fix: %(finding)s") % {"finding": entry.finding.message},
                    findings_url(found.case.pk),
                    "bad" if entry.status is Status.EXPIRED else "warn",
                )
            )
    return section


def _blocking_findings(own: dict[str, Section], registers: list[CaseFindings]) -> None:
    """Each area finding that blocks, once, in the section of the first of its owning roles
    that the person holds (the gates' own findings are what those sections already list)."""
    for found in registers:
        for entry in found.entries:
            if entry.status is not Status.OPEN or entry.rule.severity is not Severity.BLOCKS:
                continue
            section = next((own[role] for role in entry.rule.owners if role in own), None)
            if section is None:
                continue
            section.items.append(
                Item(
                    _finding_title(found, entry),
                    _("Blocks: %(finding)s") % {"finding": entry.finding.message},
                    entry.finding.fix_url or findings_url(found.case.pk),
                    "bad",
                )
            )


def _acceptances_running_out(user, registers: list[CaseFindings], today: date) -> list[DueRow]:
    """The person's own acceptances in force that run out within the notice period."""
    rows = []
    for found in registers:
        for entry in found.entries:
            for acceptance in entry.acceptances:
                days_left = (acceptance.expires_on - today).days
                if acceptance.accepted_by_id != user.pk or days_left > ACCEPTANCE_NOTICE_DAYS:
                    continue
                item = DueItem(
                    kind="finding_acceptance",
                    object_model="approvals.findingacceptance",
                    object_pk=acceptance.pk,
                    label=_("%(case)s — your acceptance: %(finding)s")
                    % {"case": _finding_title(found, entry), "finding": entry.rule.title},
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

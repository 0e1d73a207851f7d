"""My work, item by item: everything that waits on a case, for the roles that act on it
(docs/rules/findings.md#in-my-work, docs/rules/my-work.md).

Each item has a stable key within its case (``<kind>:<ids>``, never words of a language),
the roles that act on it, and the page with the form that mends it. The list is made
once for every role the reader may hold, then kept to what the reader can act on
(``mine``): so the administrator, who holds every role, sees each item once, and an
item assigned to one person leaves the others' lists.

Once a case is decided, its losing offers' work closes; the approved offer's acceptance
opens. Reminders of a due date go to the people they name (whoever signed, reviewed or
issued the record), never to a whole role.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

from django.db.models import Count, Exists, OuterRef, Q
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.acceptance import rules as acceptance_rules
from apps.acceptance.conditions import open_conditional_approvals
from apps.acceptance.models import AcceptancePlan, Layer
from apps.acceptance.panels import RECORDED_BY_HAND
from apps.acceptance.selectors import acceptance_state
from apps.access.models import AccessMatrix
from apps.approvals import policies
from apps.approvals.binding import changes_for
from apps.approvals.findings import Severity, Status
from apps.approvals.models import Approval, ApprovalChain, Reminder
from apps.assessments.models import DataExportAssessment
from apps.audit.selectors import chain_status
from apps.cases.models import MINIMUM_COMPARED_OFFERS, ProcurementCase
from apps.casework.overview import spec_fix_url
from apps.casework.registers import (
    DECIDED_STATUSES,
    CaseFindings,
    approved_offers,
    findings_url,
)
from apps.casework.reminders import NOTICE_MODEL, DueItem
from apps.contracts.models import ChecklistItem, ContractTerms, RedFlagWaiver
from apps.contracts.rules import RED_STATUSES
from apps.contracts.terms import DATES_AHEAD_DAYS
from apps.core import formats
from apps.core.notifications import roles_granting
from apps.core.roles import Role
from apps.offers.models import Offer
from apps.offers.rules import declared_spec_status
from apps.portal.claims import SECTION_PERMISSION
from apps.portal.models import (
    ClaimSection,
    DocumentStatus,
    Proposal,
    ProposalStatus,
    VendorDocument,
)

LIMIT = 50
P, L, T, F, A = Role.PROCUREMENT, Role.LEGAL, Role.TECH_LEAD, Role.FINANCE, Role.AUDITOR
# docs/rules/findings.md#in-my-work: the roles that own findings of the register.
FINDING_OWNERS = frozenset({P, L, T, F})
# Cases whose offers are still weighed against each other.
WEIGHED = (
    ProcurementCase.Status.DRAFT,
    ProcurementCase.Status.EVALUATING,
    ProcurementCase.Status.PENDING_APPROVAL,
    ProcurementCase.Status.REJECTED,
)
# The audit chain is verified at least this often; an older verification is audit work.
VERIFY_EVERY_DAYS = 7


@dataclass(frozen=True)
class WorkItem:
    """One thing to do on one case (or, for the audit chain, on none)."""

    key: str  # stable within its case: assignments are kept under it
    case_id: int | None
    case_name: str
    subject: str  # the offer it is about (its vendor), or "" for the whole case
    detail: str  # what to do
    url: str  # the page whose form mends it
    tone: str = "warn"
    roles: tuple[str, ...] = ()  # the roles that act on it
    due_on: date | None = None
    days_left: int | None = None
    # Among the role's holders, only these people act on it (None: every holder); the
    # administrator sees it all the same unless ``personal``.
    holders: frozenset[int] | None = None
    personal: bool = False  # a reminder for the people named, nobody else
    not_for: frozenset[int] = frozenset()  # holders who may not act on it
    accept_only: bool = False  # only accepting mends it: never the administrator's
    assignee_id: int | None = None
    assignee_name: str = ""
    assigned_by_name: str = ""
    escalated: bool = False  # assigned, overdue, shown to the role's lead

    @property
    def title(self) -> str:
        return f"{self.case_name} — {self.subject}" if self.subject else self.case_name

    @property
    def overdue(self) -> bool:
        return self.days_left is not None and self.days_left < 0

    @property
    def overdue_days(self) -> int:
        return -self.days_left if self.overdue and self.days_left is not None else 0

    @property
    def assignable(self) -> bool:
        return self.case_id is not None and bool(self.roles) and not self.personal


@dataclass
class CaseGroup:
    """The items of one case, in the order they are due."""

    case_id: int | None
    case_name: str
    items: list[WorkItem] = field(default_factory=list)


def dated(item: WorkItem, due_on: date | None, today: date) -> WorkItem:
    if due_on is None:
        return replace(item, due_on=None, days_left=None)
    return replace(item, due_on=due_on, days_left=(due_on - today).days)


def order(item: WorkItem) -> tuple:
    """Overdue first (longest overdue first), then by due date, then the undated."""
    if item.due_on is None:
        return (2, date.max)
    return (0 if item.overdue else 1, item.due_on)


def grouped(items: list[WorkItem]) -> list[CaseGroup]:
    """The items by case, each case where its most pressing item stands."""
    groups: dict[int | None, CaseGroup] = {}
    for item in sorted(items, key=order):
        groups.setdefault(item.case_id, CaseGroup(item.case_id, item.case_name)).items.append(item)
    return list(groups.values())


# --- every item, for every role --------------------------------------------------------


def candidates(
    roles: set[str], today: date, *, cases: list, registers: list[CaseFindings]
) -> list[WorkItem]:
    """Every item of the roles in ``roles`` on the open ``cases`` (``registers``: their
    areas' findings), in a fixed number of queries but for one acceptance read per
    approved case."""
    winners = approved_offers(cases)
    items: list[WorkItem] = []
    live = _live_offers(winners)
    if P in roles:
        items += _procurement(live)
        items += _contract_notices(live, today)
    if L in roles:
        items += _legal(live, winners, today)
    if T in roles:
        items += _tech_lead(live, winners, today)
    if roles & {P, L, T}:
        items += _vendor_answers(live)
        items += _vendor_documents(live)
    if roles & FINDING_OWNERS:
        started = set(
            Offer.objects.filter(
                pk__in=[o.pk for o in live], clause_checklist__isnull=False
            ).values_list("pk", flat=True)
        )
        unstarted = {o.pk for o in live} - started
        items += _findings(registers, winners, unstarted)
    if A in roles:
        items += _audit(today)
    items += _chain_steps()
    return items


def _chain_steps() -> list[WorkItem]:
    """The waiting steps of the running approval chains, each for the people who may
    decide it (its role's holders, its named person, their delegates for today)."""
    items = []
    running = ApprovalChain.objects.filter(state=ApprovalChain.State.RUNNING).select_related(
        "case", "offer__vendor", "tech_lead"
    )
    for chain in running.order_by("tech_lead_at")[:LIMIT]:
        state = policies.chain_state(chain)
        for step in state.open_steps:
            if not step.next_people:
                continue
            items.append(
                _item(
                    chain.case,
                    f"chain:{chain.pk}:{step.position}",
                    _("Pending approval, %(step)s: approve or reject %(vendor)s's offer")
                    % {"step": step.label, "vendor": chain.offer.vendor},
                    reverse("approvals:case", args=[chain.case_id]) + "#approval-chain",
                    (),
                    subject=str(chain.offer.vendor),
                    holders=frozenset(person.pk for person in step.next_people),
                    personal=True,
                )
            )
    return items


def _live_offers(winners: dict[int, int]) -> list[Offer]:
    """The offers still in play: every offer of a case being weighed, and the approved one
    of a decided case (1 query)."""
    offers = Offer.objects.filter(
        Q(case__status__in=WEIGHED) | Q(pk__in=list(winners.values()))
    ).select_related("case", "vendor", "declared_spec")
    found = list(offers.order_by("case_id", "pk")[: LIMIT * 4])
    for offer in found:
        try:
            spec = offer.declared_spec
        except Offer.declared_spec.RelatedObjectDoesNotExist:
            spec = None
        offer.spec_status = declared_spec_status(offer, spec)
    return found


def _item(case, key: str, detail: str, url: str, roles, **extra) -> WorkItem:
    return WorkItem(
        key=key,
        case_id=case.pk,
        case_name=str(case),
        subject=extra.pop("subject", ""),
        detail=detail,
        url=url,
        roles=tuple(roles),
        **extra,
    )


def _procurement(live: list[Offer]) -> list[WorkItem]:
    """The owner's cases still lacking offers or scores (the administrator: all)."""
    items = []
    cases = (
        ProcurementCase.objects.filter(
            status__in=[ProcurementCase.Status.DRAFT, ProcurementCase.Status.EVALUATING]
        )
        .annotate(offer_count=Count("offers", distinct=True))
        .order_by("pk")[:LIMIT]
    )
    for case in cases:
        owner = frozenset({case.owner_id})
        if case.offer_count < MINIMUM_COMPARED_OFFERS and not case.offer_minimum_waiver.strip():
            items.append(
                _item(
                    case,
                    "offers:minimum",
                    _("%(n)s of %(required)s offers: add an offer or record a waiver")
                    % {"n": case.offer_count, "required": MINIMUM_COMPARED_OFFERS},
                    reverse("offers:create", args=[case.pk]),
                    (P,),
                    holders=owner,
                )
            )
    scored = set(
        Offer.objects.filter(pk__in=[o.pk for o in live], scorecards__isnull=False).values_list(
            "pk", flat=True
        )
    )
    for offer in live:
        if offer.pk in scored or offer.case.status not in WEIGHED:
            continue
        items.append(
            _item(
                offer.case,
                f"offer:{offer.pk}:score",
                _("Not scored yet: score the offer"),
                reverse("scorecards:scorecard", args=[offer.pk]),
                (P,),
                subject=str(offer.vendor),
                holders=frozenset({offer.case.owner_id}),
            )
        )
    return items


def _contract_notices(live: list[Offer], today: date) -> list[WorkItem]:
    """docs/rules/contracts.md#contract-dates: a contract whose last day to give notice
    against its renewal is within ``DATES_AHEAD_DAYS`` days, due on that day (1 query)."""
    by_pk = {offer.pk: offer for offer in live}
    rows = ContractTerms.objects.filter(
        checklist__offer_id__in=list(by_pk),
        notice_deadline__gte=today,
        notice_deadline__lte=today + timedelta(days=DATES_AHEAD_DAYS),
    ).select_related("checklist")
    items = []
    for terms in rows.order_by("notice_deadline", "pk"):
        offer = by_pk[terms.checklist.offer_id]
        deadline = terms.notice_deadline
        assert deadline is not None  # the query keeps only terms with one
        detail = _("Give notice by %(deadline)s if the contract is not to renew on %(renewal)s") % {
            "deadline": formats.date(deadline),
            "renewal": formats.date(terms.renewal_date) if terms.renewal_date else "—",
        }
        items.append(
            dated(
                _item(
                    offer.case,
                    f"offer:{offer.pk}:notice",
                    detail,
                    reverse("contracts:documents", args=[offer.pk]),
                    (P,),
                    subject=str(offer.vendor),
                ),
                deadline,
                today,
            )
        )
    return items


def _legal(live: list[Offer], winners: dict[int, int], today: date) -> list[WorkItem]:
    items = []
    rows = DataExportAssessment.objects.filter(
        Q(signed_off_at__isnull=True) | Q(review_by__lt=today)
    ).select_related("case", "offer__vendor")
    for a in rows.order_by("review_by", "pk")[:LIMIT]:
        # A losing offer's own assessment closes with the decision.
        if a.case_id in winners and a.offer_id not in (None, winners[a.case_id]):
            continue
        if a.case.status == ProcurementCase.Status.DRAFT:
            continue
        expired = a.signed_off_at is not None
        items.append(
            dated(
                _item(
                    a.case,
                    f"assessment:{a.pk}",
                    _("Data-export assessment expired on %(date)s: review and sign off again")
                    % {"date": formats.date(a.review_by)}
                    if expired
                    else _("Data-export assessment not signed off: answer it and sign it off"),
                    reverse("assessments:sign_off" if expired else "assessments:edit", args=[a.pk]),
                    (L,),
                    subject=str(a.offer.vendor) if a.offer is not None else "",
                    tone="bad" if expired else "warn",
                ),
                a.review_by if expired else None,
                today,
            )
        )
    live_ids = {offer.pk: offer for offer in live}
    waived = RedFlagWaiver.objects.filter(
        item=OuterRef("pk"), lapsed_at__isnull=True, waived_status=OuterRef("status")
    )
    red_items = (
        ChecklistItem.objects.filter(
            status__in=RED_STATUSES, checklist__offer_id__in=list(live_ids)
        )
        .exclude(Exists(waived))
        .order_by("checklist__offer__case_id", "number")[:LIMIT]
        .values_list("pk", "number", "title", "status", "checklist__offer_id")
    )
    labels = dict(ChecklistItem._meta.get_field("status").choices or [])
    for pk, number, title, status, offer_id in red_items:
        offer = live_ids[offer_id]
        items.append(
            _item(
                offer.case,
                f"redflag:{pk}",
                _("Red flag: %(item)s (%(status)s): mend it or waive it")
                % {"item": f"{number}. {title}", "status": labels.get(status, status)},
                reverse("contracts:checklist", args=[offer.pk]),
                (L,),
                subject=str(offer.vendor),
                tone="bad",
            )
        )
    with_checklist = set(
        Offer.objects.filter(pk__in=list(live_ids), clause_checklist__isnull=False).values_list(
            "pk", flat=True
        )
    )
    for offer in live:
        if offer.pk in with_checklist:
            continue
        items.append(
            _item(
                offer.case,
                f"offer:{offer.pk}:checklist",
                _("No clause checklist yet: start it"),
                reverse("offers:detail", args=[offer.pk]),
                (L,),
                subject=str(offer.vendor),
            )
        )
    return items


def _tech_lead(live: list[Offer], winners: dict[int, int], today: date) -> list[WorkItem]:
    items = []
    pending = ProcurementCase.objects.filter(
        status=ProcurementCase.Status.PENDING_APPROVAL
    ).exclude(
        # The tech lead approved already: the case waits for the later steps of its chain.
        approval_chains__state=ApprovalChain.State.RUNNING
    )
    for case in pending.order_by("updated_at")[:LIMIT]:
        items.append(
            _item(
                case,
                "decision",
                _("Pending approval: approve one offer or reject the case"),
                reverse("approvals:decide", args=[case.pk]),
                (T,),
                # Who raised or submitted the case does not decide it.
                not_for=frozenset(pk for pk in (case.owner_id, case.submitted_by_id) if pk),
            )
        )
    rows = AccessMatrix.objects.filter(
        Q(reviewed_at__isnull=True) | Q(review_by__lt=today)
    ).select_related("case")
    for matrix in rows.order_by("pk")[:LIMIT]:
        expired = matrix.reviewed_at is not None
        items.append(
            dated(
                _item(
                    matrix.case,
                    "matrix",
                    _("Access matrix not reviewed: review it")
                    if matrix.reviewed_at is None
                    else _("Access-matrix review expired on %(date)s: review it again")
                    % {"date": formats.date(matrix.review_by)},
                    reverse("access:matrix", args=[matrix.case_id]),
                    (T,),
                    tone="bad" if expired else "warn",
                ),
                matrix.review_by if expired else None,
                today,
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
            items.append(
                _item(
                    approval.case,
                    f"stale:{approval.pk}",
                    _("Approval stale: %(n)s record(s) changed since the decision")
                    % {"n": len(found)},
                    reverse("approvals:case", args=[approval.case_id]),
                    (T,),
                    tone="bad",
                )
            )
    for offer in live:
        if offer.case.status in DECIDED_STATUSES or offer.spec_status.confirmed:
            continue
        items.append(
            _item(
                offer.case,
                f"offer:{offer.pk}:spec",
                _("Declared spec unconfirmed — missing %(items)s")
                % {"items": ", ".join(offer.spec_status.missing)},
                spec_fix_url(offer),
                (T,),
                subject=str(offer.vendor),
            )
        )
    items += _acceptance(winners, today)
    return items


def _acceptance(winners: dict[int, int], today: date) -> list[WorkItem]:
    """The approved offer's acceptance: planned, run, then signed off by another tech lead.
    Under an approval subject to acceptance, each step is due by its deadline."""
    approved = [
        case
        for case in ProcurementCase.objects.filter(
            pk__in=list(winners), status=ProcurementCase.Status.APPROVED
        ).order_by("pk")
    ]
    due_by = dict(
        open_conditional_approvals()
        .filter(case_id__in=[case.pk for case in approved])
        .values_list("case_id", "condition_deadline")
    )
    items = _acceptance_steps(approved, winners)
    return [
        dated(item, due_by[item.case_id], today) if item.case_id in due_by else item
        for item in items
    ]


def _acceptance_steps(approved: list, winners: dict[int, int]) -> list[WorkItem]:
    plans = {
        plan.offer_id: plan
        for plan in AcceptancePlan.objects.filter(
            offer_id__in=[winners[c.pk] for c in approved]
        ).select_related("case", "offer__vendor")
    }
    items = []
    for case in approved:
        plan = plans.get(winners[case.pk])
        if plan is None:
            items.append(
                _item(
                    case,
                    "acceptance:plan",
                    _("Approved: plan the acceptance tests"),
                    reverse("acceptance:plan_create", args=[case.pk]),
                    (T,),
                )
            )
            continue
        state = acceptance_state(plan)
        if state.accepted:
            continue
        subject = str(plan.offer.vendor)
        titles = dict(Layer.choices)
        by_harness = [
            layer
            for layer in state.layers
            if layer.status != acceptance_rules.PASSED
            and layer.status != acceptance_rules.NOT_APPLICABLE
            and layer.layer not in RECORDED_BY_HAND
        ]
        by_hand = [
            layer
            for layer in state.layers
            if layer.status not in (acceptance_rules.PASSED, acceptance_rules.NOT_APPLICABLE)
            and layer.layer in RECORDED_BY_HAND
        ]
        failed = any(layer.status == acceptance_rules.FAILED for layer in state.layers)
        if by_harness:
            items.append(
                _item(
                    case,
                    "acceptance:run",
                    _("Run the acceptance tests with the harness: %(layers)s")
                    % {"layers": ", ".join(str(titles[layer.layer]) for layer in by_harness)},
                    reverse("evidence:tokens", args=[case.pk]),
                    (T,),
                    subject=subject,
                    tone="bad" if failed else "warn",
                )
            )
        if by_hand:
            items.append(
                _item(
                    case,
                    "acceptance:record",
                    _("Record the acceptance results: %(layers)s")
                    % {"layers": ", ".join(str(titles[layer.layer]) for layer in by_hand)},
                    reverse("acceptance:result_create", args=[plan.pk]),
                    (T,),
                    subject=subject,
                    tone="bad" if failed else "warn",
                )
            )
        if state.overall == acceptance_rules.PASSED and not state.signed_off:
            items.append(
                _item(
                    case,
                    "acceptance:signoff",
                    _("Acceptance passed every layer: sign it off"),
                    reverse("acceptance:signoff", args=[plan.pk]),
                    (T,),
                    subject=subject,
                    # Whoever recorded the results does not sign them off.
                    not_for=frozenset(state.recorders),
                )
            )
    return items


def section_roles(section: str) -> tuple[str, ...]:
    """The roles that review a section of the vendor's answers."""
    return tuple(sorted(roles_granting(SECTION_PERMISSION[section])))


def _vendor_answers(live: list[Offer]) -> list[WorkItem]:
    """The vendor's answers awaiting review, one item per offer and section, for the
    reviewers of the section."""
    by_pk = {offer.pk: offer for offer in live}
    counts = (
        Proposal.objects.filter(status=ProposalStatus.PENDING, invitation__offer_id__in=list(by_pk))
        .values_list("invitation__offer_id", "section")
        .annotate(n=Count("pk"))
        .order_by("invitation__offer_id", "section")
    )
    labels = dict(ClaimSection.choices)
    items = []
    for offer_id, section, n in counts:
        offer = by_pk[offer_id]
        items.append(
            _item(
                offer.case,
                f"offer:{offer_id}:answers:{section}",
                ngettext(
                    "%(n)s vendor answer awaits your review (%(section)s)",
                    "%(n)s vendor answers await your review (%(section)s)",
                    n,
                )
                % {"n": n, "section": labels.get(section, section)},
                reverse("portal:answers", args=[offer_id]),
                section_roles(section),
                subject=str(offer.vendor),
            )
        )
    return items


# Who decides a document a vendor sent: the holders of this permission.
DOCUMENT_PERMISSION = "portal.change_vendordocument"


def _vendor_documents(live: list[Offer]) -> list[WorkItem]:
    """The documents vendors sent that await review, one item per offer, for the roles
    that decide them."""
    by_pk = {offer.pk: offer for offer in live}
    counts = (
        VendorDocument.objects.filter(
            status=DocumentStatus.PENDING, invitation__offer_id__in=list(by_pk)
        )
        .values_list("invitation__offer_id")
        .annotate(n=Count("pk"))
        .order_by("invitation__offer_id")
    )
    roles = tuple(sorted(roles_granting(DOCUMENT_PERMISSION)))
    return [
        _item(
            by_pk[offer_id].case,
            f"offer:{offer_id}:documents",
            ngettext(
                "%(n)s vendor document awaits your review",
                "%(n)s vendor documents await your review",
                n,
            )
            % {"n": n},
            reverse("portal:answers", args=[offer_id]) + "#documents",
            roles,
            subject=str(by_pk[offer_id].vendor),
        )
        for offer_id, n in counts
    ]


def _findings(
    registers: list[CaseFindings], winners: dict[int, int], unstarted: set[int]
) -> list[WorkItem]:
    """docs/rules/findings.md#in-my-work: each finding awaiting acceptance, for the roles it
    awaits; each area finding that blocks, for its owners; a losing offer's close. A
    contract term of an offer without a clause checklist is mended by starting one, on
    the offer's page (``unstarted``: those offers)."""
    items = []
    for found in registers:
        winner = winners.get(found.case.pk)
        for entry in found.entries:
            offer_id = entry.finding.offer_id
            if winner is not None and offer_id not in (None, winner):
                continue
            offer = found.offers.get(offer_id or 0)
            subject = str(offer.vendor) if offer is not None else ""
            identity = f"finding:{entry.rule.code}:{offer_id or 0}:{entry.finding.key}"
            if entry.blocking and entry.rule.severity is Severity.NEEDS_ACCEPTANCE:
                items.append(
                    _item(
                        found.case,
                        identity,
                        _("Accept or fix: %(finding)s") % {"finding": entry.finding.message},
                        findings_url(found.case.pk),
                        entry.awaiting,
                        subject=subject,
                        tone="bad" if entry.status is Status.EXPIRED else "warn",
                        # A joint decision needs a different person for each role.
                        not_for=frozenset(a.accepted_by_id for a in entry.acceptances),
                        accept_only=True,
                    )
                )
            elif entry.status is Status.OPEN and entry.rule.severity is Severity.BLOCKS:
                url = entry.finding.fix_url or findings_url(found.case.pk)
                if offer_id in unstarted and entry.rule.code.startswith("contracts."):
                    url = reverse("offers:detail", args=[offer_id])
                items.append(
                    _item(
                        found.case,
                        identity,
                        _("Blocks: %(finding)s") % {"finding": entry.finding.message},
                        url,
                        entry.rule.owners,
                        subject=subject,
                        tone="bad",
                    )
                )
    return items


def _audit(today: date) -> list[WorkItem]:
    """The auditor's own work: the audit chain verified, recently and intact."""
    chain = chain_status()
    if chain.verified is None:
        detail = _("Audit chain never verified: verify it")
    elif not chain.verified:
        detail = _("Audit chain verification found problems: look into them and verify again")
    elif chain.verified_at is None or chain.verified_at.date() < today - timedelta(
        days=VERIFY_EVERY_DAYS
    ):
        detail = _("Audit chain last verified over %(n)s days ago: verify it") % {
            "n": VERIFY_EVERY_DAYS
        }
    else:
        return []
    return [
        WorkItem(
            key="audit:chain",
            case_id=None,
            case_name=str(_("Across cases")),
            subject="",
            detail=detail,
            url=reverse("audit:chain"),
            tone="bad" if chain.verified is False else "warn",
            roles=(A,),
        )
    ]


# --- reminders: for the people they name --------------------------------------------

# What each reminder's record is mended by, for assigning it.
REMINDER_ROLES = {
    Reminder.Kind.ASSESSMENT_REVIEW: (L,),
    Reminder.Kind.MATRIX_REVIEW: (T,),
    Reminder.Kind.CONTRACT_RENEWAL: (P,),
    Reminder.Kind.TOKEN_EXPIRY: (T,),
}


OVERDUE_IS_THE_ROLES = (Reminder.Kind.ASSESSMENT_REVIEW, Reminder.Kind.MATRIX_REVIEW)


def reminders(due: list[DueItem], today: date) -> list[WorkItem]:
    """What comes due, for the people each names (who signed, reviewed, decided or
    issued it). Harness tokens: one item per case for whoever issued them, due when the
    first of them expires."""
    items = []
    tokens: dict[tuple[int, int], list[DueItem]] = defaultdict(list)
    for entry in due:
        owners = frozenset(o.pk for o in entry.owners if o is not None)
        # An overdue review is the role's own item already (dated, overdue): once.
        if entry.kind in OVERDUE_IS_THE_ROLES and entry.days_left(today) < 0:
            continue
        # A contract's notice deadline is procurement's own item already: once.
        if entry.object_model == NOTICE_MODEL:
            continue
        if entry.kind == Reminder.Kind.TOKEN_EXPIRY:
            for owner in owners:
                tokens[(getattr(entry.case, "pk", 0), owner)].append(entry)
            continue
        items.append(
            dated(
                _item(
                    entry.case,
                    f"due:{entry.kind}:{entry.object_pk}",
                    _("%(kind)s: %(label)s")
                    % {"kind": Reminder.Kind(entry.kind).label, "label": entry.label},
                    entry.url,
                    REMINDER_ROLES[Reminder.Kind(entry.kind)],
                    holders=owners,
                    personal=True,
                    tone="bad" if entry.days_left(today) < 0 else "warn",
                ),
                entry.due_on,
                today,
            )
        )
    for (_case, issuer), issued in tokens.items():
        first = min(issued, key=lambda entry: entry.due_on)
        items.append(
            dated(
                _item(
                    first.case,
                    f"tokens:{issuer}",
                    ngettext(
                        "%(n)s harness token you issued expires: issue another if a run "
                        "still needs one",
                        "%(n)s harness tokens you issued expire: issue another if a run "
                        "still needs one",
                        len(issued),
                    )
                    % {"n": len(issued)},
                    first.url,
                    (T,),
                    holders=frozenset({issuer}),
                    personal=True,
                ),
                first.due_on,
                today,
            )
        )
    return items

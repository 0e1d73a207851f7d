"""What the approval page, the case panel and the API show for one case.

Staleness is computed on read, so a change shows on the next page view; the
beat task ``record_stale_approvals_task`` writes it into history and sends the
case back to pending approval (pages never write on a GET). Once recorded, the
stored list of changes is shown.
"""

from dataclasses import dataclass, field

from django.utils.dateparse import parse_datetime

from apps.approvals.binding import Change, changes_for
from apps.approvals.findings import Entry
from apps.approvals.models import Approval
from apps.approvals.selectors import (
    OfferGates,
    case_approvals,
    case_gates,
    current_approval,
    register_of,
)
from apps.cases.models import ProcurementCase
from apps.offers.models import Offer


@dataclass
class ApprovalOverview:
    case: ProcurementCase
    offers: list[OfferGates]
    approvals: list[Approval]
    current: Approval | None
    stale_changes: list[Change] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return bool(self.stale_changes)

    @property
    def register(self) -> list[tuple[Offer | None, Entry]]:
        """The case's findings register, each finding once, beside the offer it is about
        (None: the whole case)."""
        offers = {entry.offer.pk: entry.offer for entry in self.offers}
        return [
            (offers.get(e.finding.offer_id) if e.finding.offer_id is not None else None, e)
            for e in register_of(self.offers)
        ]

    @property
    def ready_offers(self) -> list[OfferGates]:
        return [entry for entry in self.offers if entry.all_held]

    @property
    def pending(self) -> bool:
        return self.case.status == ProcurementCase.Status.PENDING_APPROVAL

    @property
    def submittable(self) -> bool:
        return self.case.status in (
            ProcurementCase.Status.EVALUATING,
            ProcurementCase.Status.REJECTED,
        )


def stored_changes(approval: Approval) -> list[Change]:
    return [
        Change(
            model=c.get("model", ""),
            record=c.get("record", ""),
            label=c.get("label", ""),
            when=parse_datetime(c["when"]) if c.get("when") else None,
            user=c.get("user", ""),
            action=c.get("action", ""),
            reason=c.get("reason", ""),
        )
        for c in approval.stale_changes
    ]


def stale_changes_of(approval: Approval | None) -> list[Change]:
    """What changed since a current approval (recorded, else computed now)."""
    if approval is None or approval.decision != Approval.Decision.APPROVED:
        return []
    if approval.superseded_at is not None:
        return []
    if approval.stale_at is not None:
        return stored_changes(approval)
    return changes_for([approval]).get(approval.pk, [])


def approval_overview(case, *, with_gates: bool = True) -> ApprovalOverview:
    approvals = case_approvals(case)
    current = current_approval(approvals)
    return ApprovalOverview(
        case=case,
        offers=case_gates(case) if with_gates else [],
        approvals=approvals,
        current=current,
        stale_changes=stale_changes_of(current),
    )

"""Approvals subject to acceptance: where each condition stands, and settling them
(docs/rules/approvals.md#approval-subject-to-acceptance).

An approval subject to acceptance names what is still to be measured on the rented
machine. Each condition is read here from what the offer's acceptance already shows:

- **hardware identity**: the offer's verification and endpoint-security gates hold (a
  passing spec verification, every required probe of the endpoint passed);
- **performance**, **soak** and **correctness**: the acceptance plan's performance,
  connectivity-and-environment (which holds the soak) and correctness layers passed.

Settling closes the condition once every named one has passed, and lets the approval
lapse once the deadline is behind with one still not passed. It runs after each
acceptance write on the offer, and every quarter of an hour for what the harness
uploads (``apps.acceptance.tasks``).
"""

from dataclasses import dataclass, field
from datetime import date

from django.utils import timezone
from django.utils.translation import gettext as _

from apps.acceptance import rules
from apps.acceptance.models import AcceptancePlan, Layer
from apps.acceptance.selectors import acceptance_state
from apps.approvals.gates import MEASURED_ON_THE_RENTED_MACHINE
from apps.approvals.models import AcceptanceCondition, Approval
from apps.approvals.selectors import offer_gates
from apps.approvals.services import approval_condition_met, approval_lapse

# The acceptance layer each condition other than hardware identity is read from.
CONDITION_LAYERS = {
    AcceptanceCondition.PERFORMANCE: Layer.PERFORMANCE,
    AcceptanceCondition.SOAK: Layer.CONNECTIVITY,
    AcceptanceCondition.CORRECTNESS: Layer.CORRECTNESS,
}


@dataclass(frozen=True)
class ConditionState:
    condition: AcceptanceCondition
    passed: bool
    reasons: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.condition.label)


def condition_states(approval: Approval) -> list[ConditionState]:
    """Each condition the approval names, and whether it has passed (with why not)."""
    wanted = [AcceptanceCondition(c) for c in approval.conditions or ()]
    if not wanted:
        return []
    states = []
    if AcceptanceCondition.IDENTITY in wanted:
        gates = offer_gates(approval.case, approval.offer)
        open_ = [
            f"{gate.title}: {gate.reason}"
            for gate in gates.gates
            if gate.key in MEASURED_ON_THE_RENTED_MACHINE and not gate.held
        ]
        states.append(ConditionState(AcceptanceCondition.IDENTITY, not open_, open_))
    layered = [c for c in wanted if c in CONDITION_LAYERS]
    if layered:
        plan = AcceptancePlan.objects.filter(offer=approval.offer).first()
        layers = {}
        if plan is not None:
            layers = {layer.layer: layer for layer in acceptance_state(plan).layers}
        for condition in layered:
            layer = layers.get(CONDITION_LAYERS[condition])
            if plan is None:
                reasons = [_("No acceptance plan for this offer yet.")]
            elif layer is None:
                reasons = [_("Not measured yet.")]
            else:
                reasons = list(layer.reasons) or [_("Not passed yet.")]
            passed = layer is not None and layer.status == rules.PASSED
            states.append(ConditionState(condition, passed, [] if passed else reasons))
    return states


def open_conditional_approvals(offer_id: int | None = None):
    """Approvals in force whose acceptance has neither passed nor lapsed."""
    found = Approval.objects.filter(
        decision=Approval.Decision.APPROVED,
        conditions__isnull=False,
        condition_met_at__isnull=True,
        lapsed_at__isnull=True,
        superseded_at__isnull=True,
        stale_at__isnull=True,
    ).select_related("case", "offer__vendor")
    if offer_id is not None:
        found = found.filter(offer_id=offer_id)
    return found


def settle_conditions(
    *, today: date | None = None, offer_id: int | None = None, actor=None
) -> tuple[list[Approval], list[Approval]]:
    """Close each open condition whose acceptance passed; let lapse each whose deadline
    is behind. Returns (met, lapsed)."""
    today = today or timezone.localdate()
    met, lapsed = [], []
    for approval in open_conditional_approvals(offer_id):
        states = condition_states(approval)
        waiting = [state for state in states if not state.passed]
        if not waiting:
            summary = ", ".join(state.condition.value for state in states)
            done = approval_condition_met(approval=approval, summary=summary, actor=actor)
            if done is not None:
                met.append(done)
        elif approval.condition_deadline is not None and today > approval.condition_deadline:
            reasons = [
                f"{state.label}: {'; '.join(state.reasons)}" if state.reasons else state.label
                for state in waiting
            ]
            done = approval_lapse(approval=approval, reasons=reasons, actor=actor)
            if done is not None:
                lapsed.append(done)
    return met, lapsed

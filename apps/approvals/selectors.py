"""Reads of the approvals app: every offer's gates (gathered by the whole-case layer,
``apps.approvals.gathering``) and the decisions on a case."""

from dataclasses import dataclass, field

from django.shortcuts import get_object_or_404

from apps.approvals.binding import Scope
from apps.approvals.gates import Gate, GateInputs
from apps.approvals.gathering import gate_gatherer
from apps.approvals.models import Approval
from apps.offers.models import Offer


@dataclass
class OfferGates:
    """One offer's gate inputs and verdicts, and the records they were computed from."""

    offer: Offer
    inputs: GateInputs
    gates: list[Gate]
    scopes: list[Scope] = field(default_factory=list)
    evidence: list[dict] = field(default_factory=list)

    @property
    def all_held(self) -> bool:
        return all(gate.held for gate in self.gates)

    @property
    def open(self) -> list[Gate]:
        return [gate for gate in self.gates if not gate.held]


def case_gates(case, offers=None) -> list[OfferGates]:
    """Every offer's gates (or only ``offers``'), in a fixed number of queries."""
    return gate_gatherer()(case, offers)


def gate_inputs(case, offer) -> GateInputs:
    """What the gates read for one offer of the case."""
    return offer_gates(case, offer).inputs


def offer_gates(case, offer) -> OfferGates:
    found = case_gates(case, offers=[offer])
    if not found:
        raise ValueError(f"Offer {offer.pk} is not an offer of case {case.pk}.")
    return found[0]


# --- decisions ---------------------------------------------------------------


def approval_list_for(actor):
    if not actor.has_perm("approvals.view_approval"):
        return Approval.objects.none()
    return Approval.objects.select_related("case", "offer__vendor", "decided_by", "superseded_by")


def approval_get_for(actor, pk: int) -> Approval:
    return get_object_or_404(approval_list_for(actor), pk=pk)


def case_approvals(case) -> list[Approval]:
    """Every decision on the case, newest first (1 query)."""
    return list(
        Approval.objects.filter(case=case)
        .select_related("offer__vendor", "decided_by")
        .order_by("-decided_at", "-pk")
    )


def current_approval(approvals: list[Approval]) -> Approval | None:
    """The decision in force: the newest one not superseded."""
    return next((a for a in approvals if a.superseded_at is None), None)


def approval_history_querysets(case) -> list:
    """History of the case's decisions, for timelines and the packet."""
    return [Approval.history.filter(case_id=case.pk)]

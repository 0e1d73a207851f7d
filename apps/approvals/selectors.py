"""Reads of the approvals app: every offer's gates (gathered by the whole-case layer,
``apps.approvals.gathering``) and the decisions on a case."""

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from apps.approvals.binding import Scope
from apps.approvals.findings import AcceptanceFacts, Entry
from apps.approvals.gates import MEASURED_ON_THE_RENTED_MACHINE, Gate, GateInputs
from apps.approvals.gathering import gate_gatherer
from apps.approvals.models import Approval, ApprovalChain, ChainDecision, FindingAcceptance
from apps.core.downloads import StoredFile
from apps.offers.models import Offer


@dataclass
class OfferGates:
    """One offer's gate inputs and verdicts, its findings in the case's register (those of
    the whole case among them), and the records they were computed from."""

    offer: Offer
    inputs: GateInputs
    gates: list[Gate]
    scopes: list[Scope] = field(default_factory=list)
    evidence: list[dict] = field(default_factory=list)
    findings: list[Entry] = field(default_factory=list)

    @property
    def all_held(self) -> bool:
        # The gates are read from the register (apps.approvals.findings.bind_gates); both
        # are asked, so that no open finding can sit beside a decision.
        return all(gate.held for gate in self.gates) and not any(
            entry.blocking for entry in self.findings
        )

    @property
    def open(self) -> list[Gate]:
        return [gate for gate in self.gates if not gate.held]

    @property
    def open_until_measured(self) -> list[Gate]:
        """The open gates only the rented machine can hold, when no other gate or finding
        stands in the way (an approval subject to acceptance may then be given); empty
        otherwise."""
        measured = MEASURED_ON_THE_RENTED_MACHINE
        if any(gate.key not in measured for gate in self.open):
            return []
        if any(entry.blocking and entry.rule.gate not in measured for entry in self.findings):
            return []
        return self.open

    @property
    def approvable_subject_to_acceptance(self) -> bool:
        """Every gate held, or only those the rented machine must hold still open."""
        return self.all_held or bool(self.open_until_measured)


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


def case_register(case) -> list[Entry]:
    """The case's findings register: every offer's findings and the whole case's, each once."""
    return register_of(case_gates(case))


def register_of(offers: Iterable[OfferGates]) -> list[Entry]:
    """The register of the offers' gates already read (``case_gates``): each finding once,
    those of the whole case too, which every offer carries."""
    seen: set[tuple] = set()
    entries = []
    for offer_gates in offers:
        for entry in offer_gates.findings:
            if entry.finding.identity not in seen:
                seen.add(entry.finding.identity)
                entries.append(entry)
    return entries


def finding_acceptance_list_for(actor) -> QuerySet[FindingAcceptance]:
    """Every acceptance of a finding, withdrawn and expired ones included, for those who
    read approvals (one organisation per deployment: every case is visible to them)."""
    if not actor.has_perm("approvals.view_findingacceptance"):
        return FindingAcceptance.objects.none()
    return FindingAcceptance.objects.select_related("accepted_by", "withdrawn_by", "offer__vendor")


def finding_acceptance_get_for(actor, pk: int) -> FindingAcceptance:
    return get_object_or_404(finding_acceptance_list_for(actor), pk=pk)


def acceptance_document(acceptance: FindingAcceptance) -> StoredFile:
    """The document an acceptance carries, as a download sends it, checked against its
    SHA-256."""
    return StoredFile(
        case_id=acceptance.case_id,
        record=f"Document of the acceptance of {acceptance.code}",
        name=acceptance.evidence_storage_name or "",
        sha256=acceptance.evidence_sha256 or "",
        filename=acceptance.evidence_name or "document",
        content_type=acceptance.evidence_content_type or None,
    )


def acceptance_facts(case) -> list[AcceptanceFacts]:
    """Every acceptance recorded on the case's findings, withdrawn ones included (1 query)."""
    return acceptance_facts_of_cases([case.pk])[case.pk]


def acceptance_facts_of_cases(case_ids: Iterable[int]) -> dict[int, list[AcceptanceFacts]]:
    """``acceptance_facts`` of many cases, by case, in one query."""
    found: dict[int, list[AcceptanceFacts]] = {pk: [] for pk in case_ids}
    rows = (
        FindingAcceptance.objects.filter(case_id__in=found)
        .select_related("accepted_by")
        .order_by("accepted_at", "pk")
    )
    for row in rows:
        found[row.case_id].append(
            AcceptanceFacts(
                pk=row.pk,
                code=row.code,
                offer_id=row.offer_id,
                key=row.finding_key,
                role=row.role,
                facts=row.facts,
                accepted_by_id=row.accepted_by_id,
                accepted_by=row.accepted_by.get_full_name() or row.accepted_by.get_username(),
                accepted_on=row.accepted_at.date(),
                reason=row.justification,
                expires_on=row.expires_on,
                withdrawn=row.withdrawn_at is not None,
                document=row.evidence_name or "",
                document_sha256=row.evidence_sha256 or "",
            )
        )
    return found


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
    return [
        Approval.history.filter(case_id=case.pk),
        FindingAcceptance.history.filter(case_id=case.pk),
        ApprovalChain.history.filter(case_id=case.pk),
        ChainDecision.history.filter(chain__case_id=case.pk),
    ]

"""What the organisation's pages read of an offer's invitations, answers and documents.

Each function reads a bounded number of queries whatever the number of claims,
proposals or invitations: the offer page shows part of it.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404

from apps.contracts.models import ChecklistItem, ContractTerms
from apps.offers.models import DeclaredSpec, Offer
from apps.portal.claims import SPEC_CLAIMS, Claim, claim_named
from apps.portal.models import (
    ClaimSection,
    InvitationUse,
    Proposal,
    ProposalStatus,
    VendorDocument,
    VendorInvitation,
)
from apps.portal.review import DECIDABLE, claim_label, may_decide


def invitations_of(offer: Offer) -> list[VendorInvitation]:
    """The offer's invitations, newest first, with who invited and what happened (2 queries)."""
    return list(
        VendorInvitation.objects.filter(offer=offer)
        .select_related("invited_by", "revoked_by")
        .prefetch_related(Prefetch("uses", queryset=InvitationUse.objects.order_by("created_at")))
    )


def proposal_of_offer(offer: Offer, pk: int) -> Proposal:
    """One proposal, only through the offer it answers for (404 otherwise)."""
    return get_object_or_404(
        Proposal.objects.select_related("invitation"), pk=pk, invitation__offer=offer
    )


def document_of_offer(offer: Offer, pk: int) -> VendorDocument:
    return get_object_or_404(
        VendorDocument.objects.select_related("invitation"), pk=pk, invitation__offer=offer
    )


@dataclass
class AnswerRow:
    proposal: Proposal
    label: str
    current: str
    answer: str
    accepted: str
    can_decide: bool


@dataclass
class AnswerSection:
    key: str
    label: str
    rows: list[AnswerRow] = field(default_factory=list)


def _records(offer: Offer) -> tuple[DeclaredSpec | None, ContractTerms | None]:
    spec = DeclaredSpec.objects.filter(offer=offer).first()
    terms = ContractTerms.objects.filter(checklist__offer=offer).first()
    return spec, terms


def _display(claim: Claim, text: str) -> str:
    return claim.display(text) if text else ""


def _same(claim: Claim, accepted: str, value: Any) -> bool:
    """Whether the accepted text is the value the record holds (2.95 is 2.950000)."""
    try:
        return claim.parse(accepted) == value
    except ValidationError:
        return accepted == claim.as_text(value)


def answers_of(offer: Offer, *, actor) -> list[AnswerSection]:
    """Every proposal of the offer's invitations, by section, beside what the record holds."""
    proposals = list(
        Proposal.objects.filter(invitation__offer=offer).select_related("invitation", "reviewed_by")
    )
    spec, terms = _records(offer)
    items = {item.key: item for item in ChecklistItem.objects.filter(checklist__offer=offer)}
    records: dict[type, Any] = {Offer: offer, DeclaredSpec: spec, ContractTerms: terms}
    sections = {key: AnswerSection(key, str(label)) for key, label in ClaimSection.choices}
    for proposal in proposals:
        if proposal.section == ClaimSection.CLAUSE:
            item = items.get(proposal.claim)
            current = (
                " — ".join(part for part in (item.clause_reference, item.excerpt) if part)
                if item
                else ""
            )
            answer, accepted = proposal.value, proposal.accepted_value
        else:
            try:
                claim = claim_named(proposal.section, proposal.claim)
            except KeyError:
                continue
            record = records.get(claim.model)
            current = _display(claim, claim.text_on(record))
            answer = _display(claim, proposal.value)
            accepted = _display(claim, proposal.accepted_value)
        sections[proposal.section].rows.append(
            AnswerRow(
                proposal=proposal,
                label=claim_label(proposal, items),
                current=current,
                answer=answer,
                accepted=accepted,
                can_decide=proposal.status in DECIDABLE and may_decide(actor, proposal.section),
            )
        )
    return [section for section in sections.values() if section.rows]


def documents_of(offer: Offer) -> list[VendorDocument]:
    return list(
        VendorDocument.objects.filter(invitation__offer=offer).select_related(
            "invitation", "reviewed_by"
        )
    )


@dataclass
class VendorSummary:
    invitations: int
    open_invitations: int
    awaiting: int
    documents_awaiting: int


def vendor_summary(offer: Offer) -> VendorSummary:
    """How the offer's vendor answers stand, for the offer page (three queries)."""
    invitations = list(
        VendorInvitation.objects.filter(offer=offer).only("expires_at", "revoked_at")
    )
    statuses = Counter(
        Proposal.objects.filter(invitation__offer=offer).values_list("status", flat=True)
    )
    documents = VendorDocument.objects.filter(invitation__offer=offer, status="pending").count()
    return VendorSummary(
        invitations=len(invitations),
        open_invitations=sum(1 for invitation in invitations if invitation.is_open),
        awaiting=statuses[ProposalStatus.PENDING],
        documents_awaiting=documents,
    )


# The verification's checks that measured a declared claim, by the claim's field.
MEASURED_BY = {
    "accelerator_model": "identity.sku",
    "memory_per_card_gib": "identity.memory",
    "cards_per_node": "identity.device_count",
    "driver_version": "versions.driver",
    "cuda_version": "versions.cuda",
    "rate_limit_rps": "security.rate_limit",
}


@dataclass
class ClaimProvenance:
    claim: Claim
    value: str
    vendor: str = ""  # the contact whose accepted answer the record holds
    accepted_by: Any = None
    accepted_at: Any = None
    entered_by: Any = None
    measured: Any = None
    measured_status: str = ""

    @property
    def label(self) -> str:
        return self.claim.label


def spec_provenance(offer: Offer, spec: DeclaredSpec | None, verification=None) -> list:
    """Each declared-spec claim: its value, who claimed it and what was measured for it.

    A claim is the vendor's when the newest accepted answer for it carries the value the
    record holds now; otherwise it is whoever last changed that field in the record's
    history. Four queries, whatever the number of claims or edits.
    """
    accepted: dict[str, Proposal] = {}
    for proposal in (
        Proposal.objects.filter(
            invitation__offer=offer,
            section=ClaimSection.SPEC,
            status__in=(ProposalStatus.ACCEPTED, ProposalStatus.EDITED),
        )
        .select_related("invitation", "reviewed_by")
        .order_by("reviewed_at", "pk")
    ):
        accepted[proposal.claim] = proposal
    last_changed = _last_changed_by(offer, "accelerator_model", "accelerator_count")
    if spec is not None:
        last_changed |= _last_changed_by(
            spec, *(c.name for c in SPEC_CLAIMS if c.model is not Offer)
        )
    checks = {c.get("key"): c for c in (verification.checks if verification else []) or []}
    rows = []
    for claim in SPEC_CLAIMS:
        record = offer if claim.model is Offer else spec
        held = None if record is None else getattr(record, claim.name)
        value = claim.text_on(record)
        row = ClaimProvenance(claim=claim, value=_display(claim, value))
        taken = accepted.get(claim.name)
        if taken is not None and value and _same(claim, taken.accepted_value, held):
            row.vendor = taken.invitation.contact_name
            row.accepted_by = taken.reviewed_by
            row.accepted_at = taken.reviewed_at
        elif value:
            row.entered_by = last_changed.get(claim.name)
        check = checks.get(MEASURED_BY.get(claim.name))
        if check is not None:
            row.measured = check.get("measured")
            row.measured_status = check.get("status") or ""
        rows.append(row)
    return rows


def _last_changed_by(record, *names: str) -> dict[str, Any]:
    """The user who last changed each of ``names``, from the record's history (one query)."""
    changed: dict[str, Any] = {}
    previous: dict[str, Any] = {}
    for row in record.history.select_related("history_user").order_by("history_date", "history_id"):
        for name in names:
            value = getattr(row, name)
            if value != previous.get(name) and value not in (None, ""):
                changed[name] = row.history_user
            previous[name] = value
    return changed

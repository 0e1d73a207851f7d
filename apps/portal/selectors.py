"""What the portal's pages read.

The vendor's side reads only what the vendor may see: its own offer's record values,
its own proposals and how the reviewer answered them. A clause is shown by its number,
title and sub-points only; the organisation's judgement of it (status, note, reviewer,
guidance, waivers) never leaves the organisation's pages. Every record is looked up
through the invitation; an id from the request that is not the invitation's own
answers 404.

The organisation's side reads an offer's invitations, answers and documents, each in
a bounded number of queries whatever the number of claims, proposals or invitations:
the offer page shows part of it.
"""

from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from apps.contracts.models import ChecklistItem, ContractTerms
from apps.core.downloads import StoredFile
from apps.evidence import datasheet
from apps.evidence.models import SpecVerification
from apps.evidence.selectors import latest_verification
from apps.offers.models import DeclaredSpec, Interconnect, Offer
from apps.portal.claims import (
    BY_SECTION,
    SPEC_CLAIMS,
    Claim,
    claim_label,
    claim_named,
    clause_items,
    may_decide,
)
from apps.portal.models import (
    DECIDABLE,
    LOCKED,
    ClaimSection,
    InvitationUse,
    Proposal,
    ProposalStatus,
    VendorDocument,
    VendorInvitation,
)

# --- The vendor's side ------------------------------------------------------------------


@dataclass
class SectionStanding:
    """One section of what the vendor is asked: how many claims, and their answers' states."""

    key: str
    label: str
    asked: int
    by_status: Counter = field(default_factory=Counter)

    @property
    def answered(self) -> int:
        return sum(self.by_status.values())

    @property
    def questioned(self) -> int:
        return self.by_status[ProposalStatus.QUESTIONED]


def sections_of(invitation: VendorInvitation) -> list[SectionStanding]:
    counts: dict[str, Counter] = {key: Counter() for key in ClaimSection.values}
    for section, status in Proposal.objects.filter(invitation=invitation).values_list(
        "section", "status"
    ):
        counts[section][status] += 1
    asked = {key: len(claims) for key, claims in BY_SECTION.items()}
    asked[ClaimSection.CLAUSE] = len(clause_items(invitation.offer))
    return [
        SectionStanding(key, str(label), asked[key], counts[key])
        for key, label in ClaimSection.choices
    ]


@dataclass
class ClaimRow:
    """One claim of a section page: what it is, what the record holds, what the vendor said."""

    key: str  # the claim's name, or the checklist item's key
    label: str
    help_text: str
    on_record: str  # as shown ("" when the record states none, and for clauses)
    proposal: Proposal | None
    claim: Claim | None = None  # None for a clause
    number: int | None = None  # a clause's number
    sub_points: tuple[str, ...] = ()

    @property
    def locked(self) -> bool:
        return self.proposal is not None and self.proposal.status in LOCKED

    @property
    def questioned(self) -> bool:
        return self.proposal is not None and self.proposal.status == ProposalStatus.QUESTIONED

    @property
    def editable(self) -> bool:
        return not (self.locked or self.questioned)

    def shown(self, text: str) -> str:
        return self.claim.display(text) if self.claim is not None else text

    @property
    def proposed_shown(self) -> str:
        return self.shown(self.proposal.value) if self.proposal else ""

    @property
    def accepted_shown(self) -> str:
        return self.shown(self.proposal.accepted_value) if self.proposal else ""


def section_rows(invitation: VendorInvitation, section: str) -> list[ClaimRow]:
    proposals = {p.claim: p for p in invitation.proposals.filter(section=section)}
    if section == ClaimSection.CLAUSE:
        return [
            ClaimRow(
                key=item.key,
                label=item.title,
                help_text="",
                on_record="",
                proposal=proposals.get(item.key),
                number=item.number,
                sub_points=tuple(str(point) for point in item.sub_points or ()),
            )
            for item in clause_items(invitation.offer)
        ]
    offer = invitation.offer
    claims = BY_SECTION[section]
    # One read per record (the offer, its declared spec, its contract terms), not per claim.
    records = {
        claim.model: claim.record_of(offer) for claim in {c.model: c for c in claims}.values()
    }
    return [
        ClaimRow(
            key=claim.name,
            label=claim.label,
            help_text=claim.help_text,
            on_record=claim.display(claim.text_on(records[claim.model])),
            proposal=proposals.get(claim.name),
            claim=claim,
        )
        for claim in claims
    ]


def _number(value: Decimal) -> str:
    value = value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return format(value.normalize(), "f") if value == value.to_integral() else str(value)


def datasheet_values(sku: datasheet.Sku) -> dict[str, str]:
    """The declared-spec answers a card's datasheet gives, as the vendor would type them."""
    if sku.memory_total_mib.value is not None:
        memory = Decimal(sku.memory_total_mib.value) / 1024
    else:
        # Marketed GB are decimal; the spec asks for GiB.
        memory = Decimal(sku.marketed_memory_gb.value) * 10**9 / 2**30
    nvlink = sku.nvlink.value
    values = {
        "accelerator_model": sku.name,
        "memory_per_card_gib": _number(memory),
        "intra_node_interconnect": Interconnect.NVLINK if nvlink else Interconnect.PCIE,
    }
    if nvlink:
        values["intra_node_bandwidth_gbps"] = _number(Decimal(str(nvlink["total_gbps"])))
    return values


def datasheet_card(key: str | None, accelerator_model: str = "") -> datasheet.Sku | None:
    """The card chosen by its key, else the one the offer's accelerator model names."""
    return datasheet.by_key(key) or datasheet.by_name(accelerator_model)


def datasheet_answers(card: datasheet.Sku, rows: list[ClaimRow]) -> dict[str, str]:
    """The card's datasheet figures for the answers the vendor may still change."""
    editable = {row.key for row in rows if row.editable}
    return {name: value for name, value in datasheet_values(card).items() if name in editable}


def proposal_of_invitation(invitation: VendorInvitation, pk: int, section: str) -> Proposal:
    """One of the invitation's own answers in ``section`` (404 for any other)."""
    try:
        return invitation.proposals.get(pk=pk, section=section)
    except Proposal.DoesNotExist:
        raise Http404(_("There is no such answer.")) from None


def invitation_documents(invitation: VendorInvitation) -> list[VendorDocument]:
    return list(invitation.documents.all())


# --- The organisation's side ------------------------------------------------------------


def invitations_of(offer: Offer) -> list[VendorInvitation]:
    """The offer's invitations, newest first, with who invited and what happened (2 queries)."""
    return list(
        VendorInvitation.objects.filter(offer=offer)
        .select_related("invited_by", "revoked_by")
        .prefetch_related(Prefetch("uses", queryset=InvitationUse.objects.order_by("created_at")))
    )


def invitation_of_offer(offer: Offer, pk: int) -> VendorInvitation:
    """One invitation, only through the offer it is for (404 otherwise)."""
    invitation = next((i for i in offer.vendor_invitations.filter(pk=pk)), None)
    if invitation is None:
        raise Http404(_("No such invitation for this offer."))
    return invitation


def proposal_of_offer(offer: Offer, pk: int) -> Proposal:
    """One proposal, only through the offer it answers for (404 otherwise)."""
    return get_object_or_404(
        Proposal.objects.select_related("invitation"), pk=pk, invitation__offer=offer
    )


def document_of_offer(offer: Offer, pk: int) -> VendorDocument:
    return get_object_or_404(
        VendorDocument.objects.select_related("invitation"), pk=pk, invitation__offer=offer
    )


def document_stored_file(offer: Offer, document: VendorDocument) -> StoredFile:
    """The document's bytes as a download sends them, checked against its SHA-256."""
    return StoredFile(
        case_id=offer.case_id,
        record=f"Vendor document {document.name} of {offer.vendor}",
        name=document.storage_name,
        sha256=document.sha256,
        filename=document.name,
        content_type=document.content_type or None,
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
    "tokens_scoped": "security.forbidden_token",
    # The goodput of the open-loop rate search at the case's service levels.
    "throughput_requests_per_s": "service.throughput_at_slo.requests",
    "throughput_tokens_per_s": "service.throughput_at_slo.tokens",
    # Inside the node and the local disk.
    "intra_node_interconnect": "interconnect.topology",
    "intra_node_bandwidth_gbps": "interconnect.bandwidth",
    "local_nvme_tb": "disk.capacity",
}
# Between nodes (net-peer) and the environment's runtime versions.
MEASURED_BY |= {
    "inter_node_network": "network.inter_node",
    "inter_node_bandwidth_gbit": "network.inter_node_bandwidth",
    "runtime_versions": "versions.runtime",
}

# A reference to the vendor's own document, not a figure a harness could measure.
NOT_MEASURABLE = frozenset({"source_document"})


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

    @property
    def measurable(self) -> bool:
        return self.claim.name not in NOT_MEASURABLE


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
        elif claim.name == "accelerator_count" and value:
            cards = checks.get("identity.device_count")
            if cards is not None and cards.get("expected") == held:  # one node: judged
                row.measured, row.measured_status = cards.get("measured"), cards.get("status")
            else:
                row.measured = _cards_seen(cards, held)
        rows.append(row)
    return rows


def _cards_seen(check: dict | None, declared: Any) -> str | None:
    """The offer's card count as far as a run sees it: one node's cards. Shown, not judged,
    where the offer spans several nodes (each bundle measures the node it ran on)."""
    seen = check.get("measured") if check else None
    if not isinstance(seen, int):
        return None
    return _("%(seen)s cards on the node measured, of the %(declared)s declared") % {
        "seen": seen,
        "declared": declared,
    }


# Measurements no declared value stands for: the acceptance plan's thresholds are what
# they are held to (the reference training step).
PLAN_MEASURED_PREFIXES = ("training.",)
NOT_MEASURED_STATUS = "not_measured"


def plan_measurements(offer: Offer, verification) -> tuple[list[dict], list[str]]:
    """The verification's checks of what only the acceptance plan asks for, and the plan's
    thresholds for them in words."""
    checks = [
        check
        for check in (verification.checks if verification else []) or []
        if str(check.get("key", "")).startswith(PLAN_MEASURED_PREFIXES)
        and check.get("status") != NOT_MEASURED_STATUS  # a run without the step
    ]
    plan = getattr(offer, "acceptance_plan", None)
    return checks, list(plan.training_thresholds) if plan is not None else []


def offer_claims(offer: Offer) -> tuple[list[ClaimProvenance], SpecVerification | None]:
    """Each declared claim of the offer with its provenance, and the verification read."""
    spec = getattr(offer, "declared_spec", None)
    verification = latest_verification(offer)
    return spec_provenance(offer, spec, verification), verification


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

"""What the vendor's pages read: each claim of a section beside the vendor's answer to it.

Only what the vendor may see: its own offer's record values, its own proposals and
how the reviewer answered them. A clause is shown by its number, title and
sub-points only; the organisation's judgement of it (status, note, reviewer,
guidance, waivers) never leaves the organisation's pages.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from apps.evidence import datasheet
from apps.offers.models import Interconnect
from apps.portal.claims import BY_SECTION, Claim, clause_items
from apps.portal.models import ClaimSection, Proposal, ProposalStatus, VendorInvitation
from apps.portal.proposals import LOCKED


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

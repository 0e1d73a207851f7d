"""What the portal reads: an invitation's sections and how its answers stand."""

from collections import Counter
from dataclasses import dataclass, field

from apps.portal.claims import BY_SECTION, clause_items
from apps.portal.models import ClaimSection, Proposal, ProposalStatus, VendorInvitation


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

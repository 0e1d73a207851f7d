"""Reads of the audit chain's state, for the case page, packets and the API."""

from dataclasses import dataclass
from datetime import datetime

from apps.audit.chain import HEAD_PK
from apps.audit.models import GENESIS_HASH, ChainHead, ChainVerification


@dataclass(frozen=True)
class ChainStatus:
    """The chain head now, and what the last verification said.

    ``verified`` is True only when the last verification found the chain
    intact; ``rows_since`` counts history rows written after it, which that
    verification could not yet vouch for.
    """

    head_seq: int
    head_hash: str
    verified: bool | None
    verified_at: datetime | None
    verified_head_seq: int | None
    verified_head_hash: str | None
    problem_count: int
    first_problem: str

    @property
    def short_hash(self) -> str:
        return self.head_hash[:16]

    @property
    def rows_since(self) -> int:
        return self.head_seq - (self.verified_head_seq or 0)

    def as_dict(self) -> dict:
        return {
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "verified": self.verified,
            "verified_at": self.verified_at.isoformat() if self.verified_at else None,
            "verified_head_seq": self.verified_head_seq,
            "verified_head_hash": self.verified_head_hash,
            "problem_count": self.problem_count,
            "first_problem": self.first_problem,
        }


def chain_status() -> ChainStatus:
    """Chain head and last verification result, in two queries (packets and the case page)."""
    head = ChainHead.objects.filter(pk=HEAD_PK).first()
    last = ChainVerification.objects.order_by("-pk").first()
    return ChainStatus(
        head_seq=head.seq if head else 0,
        head_hash=head.entry_hash if head else GENESIS_HASH,
        verified=last.intact if last else None,
        verified_at=last.finished_at if last else None,
        verified_head_seq=last.head_seq if last else None,
        verified_head_hash=last.head_hash if last else None,
        problem_count=last.problem_count if last else 0,
        first_problem=(last.first_problem or {}).get("text", "") if last else "",
    )

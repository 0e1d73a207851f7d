"""The packet's executive summary: one page, first, drawn from the other chapters.

Nothing here is worked out afresh. The summary reads what the other chapters
already gathered (their sections' contexts): the approval overview with its
gates, its findings register and waivers, the comparison's scores and prices, the acceptance in
force, the cost view, each offer's composed verification and the audit chain.
So the summary and the chapter behind each line always say the same thing.
"""

from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from apps.approvals.findings import Entry, Status
from apps.approvals.models import Approval
from apps.core.contributions import PacketSection
from apps.offers.models import Offer
from apps.scorecards.selectors import OfferComparisonRow

SUMMARY_ORDER = 5

COMPARISON_TEMPLATE = "packets/sections/comparison.html"
APPROVALS_TEMPLATE = "approvals/packet_section.html"
ACCEPTANCE_TEMPLATE = "acceptance/packet_section.html"
COSTS_TEMPLATE = "costs/packet_section.html"
EVIDENCE_TEMPLATE = "evidence/packet_section.html"
AUDIT_TEMPLATE = "audit/packet_section.html"


@dataclass
class Recommendation:
    """The offer that holds every gate, with its comparison row (score and price)."""

    offer: Offer
    row: OfferComparisonRow | None  # None when the offer is not compared
    others: list[Offer] = field(default_factory=list)  # other offers that also hold every gate


@dataclass
class Blockers:
    """One offer's open findings (``offer`` None: the whole case's)."""

    offer: Offer | None
    findings: list[Entry]


def _context(sections: list[PacketSection], template: str) -> dict | None:
    for section in sections:
        if section.template == template:
            return section.context
    return None


def _rank(row) -> tuple:
    # The best score first; among equal scores, the cheaper (lower price rank).
    if row is None or row.score.unscored:
        return (1, 0, 0)
    return (0, -row.score.total, row.price_rank or 10**6)


def recommendation(overview, comparison) -> Recommendation | None:
    """The offer that holds every gate; of several, the best scored, then the cheapest."""
    rows = {row.offer.pk: row for row in comparison.rows} if comparison else {}
    ready = sorted(overview.ready_offers, key=lambda entry: _rank(rows.get(entry.offer.pk)))
    if not ready:
        return None
    first = ready[0]
    return Recommendation(
        offer=first.offer,
        row=rows.get(first.offer.pk),
        others=[entry.offer for entry in ready[1:]],
    )


def blockers(overview) -> list[Blockers]:
    """Every open finding of the register (docs/rules/findings.md#in-the-packet), by offer:
    each offer, the one that holds every gate too, then the whole case's if any."""
    open_ = [(offer, entry) for offer, entry in overview.register if entry.blocking]
    found = [
        Blockers(
            offer=each.offer,
            findings=[e for offer, e in open_ if offer is not None and offer.pk == each.offer.pk],
        )
        for each in overview.offers
    ]
    whole = [entry for offer, entry in open_ if offer is None]
    return found + ([Blockers(offer=None, findings=whole)] if whole else [])


def accepted_findings(overview) -> list[tuple[Offer | None, Entry]]:
    """Every finding the register holds accepted, beside its offer."""
    return [(offer, entry) for offer, entry in overview.register if entry.status is Status.ACCEPTED]


def relied_on(approvals: dict, overview, recommended: Recommendation | None) -> list:
    """The waivers the decision relies on: the case's own, and those of the offer it
    approved (before a decision, of the offer recommended); never another offer's."""
    current = overview.current if overview is not None else None
    if current is not None and current.decision == Approval.Decision.APPROVED and current.offer_id:
        offer_pk = current.offer_id
    elif recommended is not None:
        offer_pk = recommended.offer.pk
    else:
        offer_pk = None
    by_offer = approvals.get("waivers_by_offer", {})
    return [*approvals.get("case_waivers", []), *by_offer.get(offer_pk, [])]


def summary_section(sections: list[PacketSection]) -> PacketSection:
    """The executive summary of the packet whose other ``sections`` are given."""
    approvals = _context(sections, APPROVALS_TEMPLATE) or {}
    comparison = (_context(sections, COMPARISON_TEMPLATE) or {}).get("comparison")
    overview = approvals.get("overview")
    recommended = recommendation(overview, comparison) if overview is not None else None
    acceptance = _context(sections, ACCEPTANCE_TEMPLATE)
    costs = _context(sections, COSTS_TEMPLATE)
    evidence = _context(sections, EVIDENCE_TEMPLATE)
    audit = _context(sections, AUDIT_TEMPLATE) or {}
    return PacketSection(
        title=_("Executive summary"),
        template="packets/sections/summary.html",
        context={
            "overview": overview,
            "recommended": recommended,
            "blockers": blockers(overview) if overview is not None else [],
            "accepted_findings": accepted_findings(overview) if overview is not None else [],
            "waivers": relied_on(approvals, overview, recommended),
            "acceptance": next(iter((acceptance or {}).get("states", [])), None),
            "cost_view": (costs or {}).get("view"),
            "verdicts": [
                (offer, composed["verification"] if composed else None)
                for offer, composed, _entries in (evidence or {}).get("groups", [])
                if offer is not None
            ],
            "chain": audit.get("chain"),
        },
        order=SUMMARY_ORDER,
        after_cover=True,
    )

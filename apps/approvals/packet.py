"""The approval chapter of the signed packet: gates, decisions, waivers and staleness."""

from django.utils.translation import gettext as _

from apps.approvals import policies
from apps.approvals.overview import approval_overview
from apps.approvals.selectors import approval_history_querysets
from apps.core.contributions import PacketSection


def packet_section(case):
    overview = approval_overview(case)
    case_waivers = []
    if case.offer_minimum_waiver.strip():
        case_waivers.append((_("Three-offer minimum"), case.offer_minimum_waiver.strip()))
    by_offer: dict[int, list[tuple[str, str]]] = {}
    for entry in overview.offers:
        for gate in entry.gates:
            if gate.key == "red_flags":
                by_offer.setdefault(entry.offer.pk, []).extend(
                    (f"{entry.offer.vendor}", w) for w in gate.waivers
                )
    waivers = case_waivers + [w for offer_waivers in by_offer.values() for w in offer_waivers]
    return PacketSection(
        title=_("Approval: gates, decisions and waivers"),
        template="approvals/packet_section.html",
        # The case's own waivers and each offer's, apart: a decision relies on the case's
        # and on those of the offer it approves only (the executive summary).
        context={
            "overview": overview,
            "waivers": waivers,
            "case_waivers": case_waivers,
            "waivers_by_offer": by_offer,
            # Each chain as it ran: the steps it copied, who decided each and when.
            "chains": [
                policies.chain_state(chain, with_people=False)
                for chain in policies.case_chains(case)
            ],
        },
        history_querysets=approval_history_querysets(case),
    )

"""The approval chapter of the signed packet: gates, decisions, waivers and staleness."""

from django.utils.translation import gettext as _

from apps.approvals.overview import approval_overview
from apps.approvals.selectors import approval_history_querysets
from apps.core.contributions import PacketSection


def packet_section(case):
    overview = approval_overview(case)
    waivers = []
    if case.offer_minimum_waiver.strip():
        waivers.append((_("Three-offer minimum"), case.offer_minimum_waiver.strip()))
    for entry in overview.offers:
        for gate in entry.gates:
            if gate.key == "red_flags":
                waivers += [(f"{entry.offer.vendor}", w) for w in gate.waivers]
    return PacketSection(
        title=_("Approval: gates, decisions and waivers"),
        template="approvals/packet_section.html",
        context={"overview": overview, "waivers": waivers},
        history_querysets=approval_history_querysets(case),
    )

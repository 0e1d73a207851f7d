"""The clause-checklist chapter of the signed packet (DESIGN §2.4): every item, red flag and waiver.

The checklists' change history already joins the packet through the case
timeline (``apps.contracts.selectors.case_history_querysets``), so this
section names none of its own.
"""

from django.utils.translation import gettext as _

from apps.contracts.selectors import case_red_flags


def packet_section(case):
    from apps.packets.sections import PacketSection

    offers = case_red_flags(case)
    if not offers:
        return None
    return PacketSection(
        title=_("Contract clause checklists"),
        template="contracts/packet_section.html",
        context={
            "offers": [
                (entry, [(row.item, w) for row in entry.rows for w in row.waivers])
                for entry in offers
            ]
        },
        order=40,
    )

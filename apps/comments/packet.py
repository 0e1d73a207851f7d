"""The comments put on the record, as a chapter of the signed packet.

Other comments stay out of the packet, its change history and its manifest
(``Comment.in_packet``); they are in the case's timeline and its export.
"""

from django.utils.translation import gettext as _

from apps.comments.selectors import for_the_record
from apps.core.contributions import PacketSection


def packet_section(case):
    comments = list(for_the_record(case))
    if not comments:
        return None
    return PacketSection(
        title=_("Comments for the record"),
        template="comments/packet_section.html",
        context={"comments": comments},
    )

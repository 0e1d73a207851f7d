"""The audit-chain chapter of the signed packet: the chain head and whether it verifies."""

from django.utils.translation import gettext as _

from apps.audit.selectors import chain_status


def packet_section(case):
    from apps.packets.sections import PacketSection

    # The last recorded verification, not a fresh walk of the whole chain: a
    # packet's queries must not grow with the history (issue 6 benchmark). Rows
    # written since that verification are counted and shown as not yet vouched for.
    return PacketSection(
        title=_("Audit chain"),
        template="audit/packet_section.html",
        context={"chain": chain_status()},
        order=90,
    )

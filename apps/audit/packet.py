"""The audit app's chapters of the signed packet: the audit chain, and the change history.

The change history is summarised (``apps.audit.history_summary``): per record
type and per person, with every status change, decision, waiver and sign-off
in full. The full history travels inside the packet as attached files
(``apps.audit.history_files``), listed in the chapter with their digests.
"""

from django.utils.translation import gettext as _

from apps.audit.history_summary import HistorySummary, summarise_history
from apps.audit.selectors import chain_status
from apps.core.contributions import PacketSection


def packet_section(case):
    # The last recorded verification, not a fresh walk of the whole chain: a
    # packet's queries must not grow with the history (the packet benchmark). Rows
    # written since that verification are counted and shown as not yet vouched for.
    return PacketSection(
        title=_("Audit chain"),
        template="audit/packet_section.html",
        context={"chain": chain_status()},
    )


def history_summary(history, *, record_counts=None) -> HistorySummary:
    """``history``: the ``(HistorySource, queryset)`` pairs the packet covers."""
    return summarise_history(history, record_counts=record_counts)


def history_section(summary: HistorySummary, history_files, *, order: int):
    """The change-history chapter; ``history_files`` name the files that carry it in full."""
    return PacketSection(
        title=_("Change history"),
        template="audit/packet_history.html",
        context={"summary": summary, "history_files": history_files},
        order=order,
    )

"""The chapters a document is made of, as the whole-case layer composes them.

Which areas speak in a packet, in what order, what each deliverable selects and
the executive summary drawn from them read every area, so they are composed in
the whole-case layer, above this app (docs/layers.md). This app issues, renders,
signs and verifies what it is handed. The layer registers its composer once,
when it is ready (``apps.casework.apps``); a document asked for before then
fails loudly rather than issue without its chapters.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

from apps.core.contributions import PacketSection

if TYPE_CHECKING:
    from apps.cases.models import ProcurementCase


@dataclass(frozen=True)
class PacketComposer:
    """The two questions issuing asks about a document of a kind (a ``DocumentKind``)."""

    # Its chapters before the change history and the manifest, in order; none when a
    # deliverable's own chapters have nothing recorded.
    document_sections: Callable[["ProcurementCase", str], list[PacketSection]]
    # Whether it would have something of its own to say (cheaper than its sections).
    has_chapters: Callable[["ProcurementCase", str], bool]
    # The decision in force, as every document's cover prints it ("" before any): approved
    # or rejected, and whether subject to acceptance.
    decision_line: Callable[["ProcurementCase"], str] = lambda case: ""


_composer: PacketComposer | None = None


def set_composer(composer: PacketComposer) -> None:
    """Register the composer (the whole-case layer does, once, when it is ready)."""
    global _composer
    _composer = composer


def packet_composer() -> PacketComposer:
    """The registered composer; a start-up fault when the layer registered none."""
    if _composer is None:
        raise ImproperlyConfigured(
            "No packet composer is registered: the whole-case layer (apps.casework) "
            "registers one when it is ready, so it must be in INSTALLED_APPS."
        )
    return _composer

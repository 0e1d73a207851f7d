"""Who gathers what the gates read: the whole-case layer, registered at start-up.

The gates (``apps.approvals.gates``) are this app's rules, but what they read comes
from every area, so it is gathered in the whole-case layer (``apps.casework.gates``,
docs/layers.md), which registers its gatherer once, when it is ready
(``apps.casework.apps``). Gates asked for before then fail loudly rather than read
nothing and hold.
"""

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from apps.approvals.selectors import OfferGates
    from apps.cases.models import ProcurementCase
    from apps.offers.models import Offer

# Every offer's gates of a case, or only those of the offers given, in offer order.
GateGatherer = Callable[["ProcurementCase", "Sequence[Offer] | None"], "list[OfferGates]"]

_gatherer: GateGatherer | None = None


def set_gate_gatherer(gatherer: GateGatherer) -> None:
    """Register the gatherer (the whole-case layer does, once, when it is ready)."""
    global _gatherer
    _gatherer = gatherer


def gate_gatherer() -> GateGatherer:
    """The registered gatherer; a start-up fault when the layer registered none."""
    if _gatherer is None:
        raise ImproperlyConfigured(
            "No gate gatherer is registered: the whole-case layer (apps.casework) "
            "registers one when it is ready, so it must be in INSTALLED_APPS."
        )
    return _gatherer


# What an approval policy's conditions read of the areas (the contract value, whether
# personal data is handled), for one case and the offer its tech lead approved: a dict
# with ``contract_value`` (Decimal or None) and ``personal_data`` (bool).
PolicyFactsReader = Callable[["ProcurementCase", "Offer"], dict]

_facts_reader: PolicyFactsReader | None = None


def set_policy_facts_reader(reader: PolicyFactsReader) -> None:
    """Register the reader (the whole-case layer does, once, when it is ready)."""
    global _facts_reader
    _facts_reader = reader


def policy_facts_reader() -> PolicyFactsReader:
    if _facts_reader is None:
        raise ImproperlyConfigured(
            "No policy facts reader is registered: the whole-case layer (apps.casework) "
            "registers one when it is ready, so it must be in INSTALLED_APPS."
        )
    return _facts_reader

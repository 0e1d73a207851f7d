"""What the chosen offer's load test served, for the unit costs: read by the whole-case layer.

The unit costs (docs/rules/costs.md#unit-costs) divide the bills by what the offer's
newest load test served at its safe level. That load test is the evidence app's, and its
safe level the acceptance rules' against the case's service levels; this app reads
neither, so the whole-case layer registers the reader once, when it is ready
(``apps/casework/apps.py``, docs/layers.md#domain-apps). Asked for before then, it fails
loudly rather than call every unit cost not computable.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

from apps.costs.rules import MeasuredThroughput

if TYPE_CHECKING:
    from apps.cases.models import ProcurementCase
    from apps.offers.models import Offer

# The case and its chosen offer → what its newest load test served at the safe level,
# or None when the offer has no load test.
ThroughputReader = Callable[["ProcurementCase", "Offer"], MeasuredThroughput | None]

_reader: ThroughputReader | None = None


def set_throughput_reader(reader: ThroughputReader) -> None:
    """Register the reader (the whole-case layer does, once, when it is ready)."""
    global _reader
    _reader = reader


def measured_throughput(case, offer) -> MeasuredThroughput | None:
    """What the offer's newest load test served at its safe level; None without an offer or
    a load test."""
    if _reader is None:
        raise ImproperlyConfigured(
            "No throughput reader is registered: the whole-case layer (apps.casework) "
            "registers one when it is ready, so it must be in INSTALLED_APPS."
        )
    if offer is None:
        return None
    return _reader(case, offer)

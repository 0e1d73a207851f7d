"""The case's requirement spec, as the verification reads its floors: read by the whole-case
layer.

A measured figure is checked against the vendor's declared floor and against the case's
requirement spec (the inter-node bandwidth floor, docs/rules/evidence.md#between-nodes).
The requirement spec is the sizing app's, which reads this app's evidence; this app does
not import it, so the whole-case layer registers the reader once, when it is ready
(``apps/casework/apps.py``, docs/layers.md#domain-apps). Asked for before then, it fails
loudly rather than check every figure against no requirement at all.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from apps.cases.models import ProcurementCase

# The case → every item of its saved requirement spec and its tolerance (empty: none saved).
RequirementReader = Callable[["ProcurementCase"], dict[str, Any]]

_reader: RequirementReader | None = None


def set_requirement_reader(reader: RequirementReader) -> None:
    """Register the reader (the whole-case layer does, once, when it is ready)."""
    global _reader
    _reader = reader


def requirement_values(case) -> dict[str, Any]:
    """The case's saved requirement spec as plain values; empty when it has none."""
    if _reader is None:
        raise ImproperlyConfigured(
            "No requirement reader is registered: the whole-case layer (apps.casework) "
            "registers one when it is ready, so it must be in INSTALLED_APPS."
        )
    return dict(_reader(case) or {})

"""The case's requirement spec for the evidence rules: its floors, read from the sizing app.

The verification checks measured figures against the requirement's floors
(docs/rules/evidence.md#between-nodes) but the evidence app does not read the sizing app,
which reads the evidence; this layer does, and registers the reader with the evidence
app when it is ready (``apps/casework/apps.py``).
"""

from typing import Any

from apps.sizing.selectors import requirement_of
from apps.sizing.selectors import requirement_values as saved_values


def case_requirement(case) -> dict[str, Any]:
    """Every item of the case's saved requirement spec and its tolerance; empty: none."""
    requirement = requirement_of(case)
    return saved_values(requirement) if requirement is not None else {}

"""The case page's panels: every app that shows one, listed here in order.

Each module listed has ``case_panel(case, *, actor) -> CasePanel | None`` and may
set ``CASE_PANEL_CACHEABLE = True`` when its panel reads tracked records only.
A module missing from the code base is an import error at start-up, never a
panel silently left out.
"""

from apps.acceptance import panels as acceptance_panels
from apps.access import panels as access_panels
from apps.approvals import panels as approvals_panels
from apps.assessments import panels as assessments_panels
from apps.audit import panels as audit_panels
from apps.cases.overview import CasePanel, case_summary
from apps.cases.reads import shared_reads
from apps.contracts import panels as contracts_panels
from apps.costs import panels as costs_panels
from apps.evidence import panels as evidence_panels
from apps.packets import panels as packets_panels

CASE_PANEL_PROVIDERS = (
    contracts_panels,
    assessments_panels,
    access_panels,
    evidence_panels,
    packets_panels,
    audit_panels,
    approvals_panels,
    costs_panels,
    acceptance_panels,
)


def case_panels(case, *, actor) -> list[CasePanel]:
    panels = []
    for module in CASE_PANEL_PROVIDERS:
        panel = module.case_panel(case, actor=actor)
        if panel is not None:
            panels.append(panel)
    return sorted(panels, key=lambda panel: panel.order)


def case_overview(case, *, actor) -> dict:
    """The whole case page's context, computed now (no cache)."""
    with shared_reads():
        overview = case_summary(case)
        panels = case_panels(case, actor=actor)
    for panel in panels:
        overview["missing"].extend(panel.missing)
    return {**overview, "panels": panels}

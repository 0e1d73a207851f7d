"""The case's areas: every app that shows one, listed here by area, in cockpit order.

Each area names the permission a viewer needs to see it, and (but for the
case's own two) the module whose ``case_panel(case, *, actor) -> CasePanel``
computes it. A module missing from the code base is an import error at
start-up, never an area silently left out. Every panel reads tracked records
only (written with a history row), the viewer's permissions, the language and
today's date, so the case page may store where the case stands until the next
tracked write touching it (``apps.casework.standing``).
"""

from collections.abc import Collection
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING

from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from apps.acceptance import panels as acceptance_panels
from apps.access import panels as access_panels
from apps.approvals import panels as approvals_panels
from apps.assessments import panels as assessments_panels
from apps.audit import panels as audit_panels
from apps.casework.overview import CasePanel, case_summary, summary_panels
from apps.contracts import panels as contracts_panels
from apps.core.reads import shared_reads
from apps.costs import panels as costs_panels
from apps.evidence import panels as evidence_panels
from apps.packets import panels as packets_panels

if TYPE_CHECKING:
    from django.utils.functional import _StrOrPromise


@dataclass(frozen=True)
class Area:
    label: "_StrOrPromise"  # in the reader's language when shown
    permission: str  # to see the area ("" : whoever sees the case)
    provider: ModuleType | None = None  # None: the case's own (``summary_panels``)


AREAS: dict[str, Area] = {
    "sizing": Area(_("Sizing"), ""),
    "offers": Area(_("Offers"), ""),
    "contracts": Area(_("Contracts"), "contracts.view_clausechecklist", contracts_panels),
    "data-export": Area(
        _("Data export"), "assessments.view_dataexportassessment", assessments_panels
    ),
    "access": Area(_("Access and network"), "access.view_accessmatrix", access_panels),
    "evidence": Area(_("Evidence"), "evidence.view_evidencebundle", evidence_panels),
    "approval": Area(_("Approval"), "approvals.view_approval", approvals_panels),
    "acceptance": Area(_("Acceptance"), "acceptance.view_acceptanceplan", acceptance_panels),
    "costs": Area(_("Costs"), "costs.view_budget", costs_panels),
    "packets": Area(_("Packets"), "packets.view_auditpacket", packets_panels),
    "audit": Area(_("Audit trail"), "", audit_panels),
}


def visible(area: str, actor) -> bool:
    permission = AREAS[area].permission
    return not permission or actor.has_perm(permission)


def _panel(area: str, case, *, actor, summary: list[CasePanel] | None) -> CasePanel:
    provider = AREAS[area].provider
    if provider is None:
        assert summary is not None
        return next(panel for panel in summary if panel.area == area)
    return replace(provider.case_panel(case, actor=actor), area=area)


def case_panels(case, *, actor, areas: Collection[str] | None = None) -> list[CasePanel]:
    """Every area the viewer may see (of ``areas`` only, when given), computed (not
    rendered), in cockpit order."""
    shown = [a for a in AREAS if visible(a, actor) and (areas is None or a in areas)]
    with shared_reads():
        own = any(AREAS[area].provider is None for area in shown)
        summary = summary_panels(case_summary(case)) if own else None
        panels = [_panel(area, case, actor=actor, summary=summary) for area in shown]
    return sorted(panels, key=lambda panel: panel.order)


def case_area_panel(case, area: str, *, actor) -> CasePanel | None:
    """One area's panel, for its details page; None when the viewer may not see it."""
    if not visible(area, actor):
        return None
    with shared_reads():
        own = AREAS[area].provider is None
        summary = summary_panels(case_summary(case)) if own else None
        return _panel(area, case, actor=actor, summary=summary)


def case_nav(case, actor) -> list[tuple[str, str, str]]:
    """The case's pages a viewer may open: (area, label, address), the cockpit first."""
    pages = [("", str(_("Overview")), reverse("cases:detail", args=[case.pk]))]
    for area, entry in AREAS.items():
        if visible(area, actor):
            pages.append((area, str(entry.label), reverse("cases:area", args=[case.pk, area])))
    pages.append(("history", str(_("History")), reverse("audit:case-timeline", args=[case.pk])))
    return pages


def case_overview(case, *, actor) -> dict:
    """Every area's panel and everything they lack, computed now (no cache)."""
    panels = case_panels(case, actor=actor)
    return {"panels": panels, "missing": [line for p in panels for line in p.missing]}

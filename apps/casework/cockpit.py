"""The case cockpit: where the case stands, one tile per area, and who has what to mend.

Every area of a case (sizing, offers, contracts, data export, access and
network, evidence, approval, acceptance, costs, packets, the audit trail) is a
panel (``apps.casework.panels``); the cockpit shows each one as a tile and lists
what it lacks, grouped by area and by the roles that can mend it. The panels'
details are one click away, on the area's own page (``case_area`` view).

What stands in the way of a decision is the findings register's: the cockpit lists
every open finding first, with its owners and the page where it is fixed, so a
finding the approval refuses on is never missing from the case page.
"""

from dataclasses import dataclass, field

from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.approvals.findings import Severity
from apps.approvals.findings import Status as FindingStatus
from apps.approvals.overview import ApprovalOverview
from apps.cases.models import ProcurementCase
from apps.casework.overview import CasePanel
from apps.casework.panels import AREAS
from apps.casework.registers import approved_offer_id, findings_url
from apps.core.access import roles_holding

Status = ProcurementCase.Status

# The lifecycle as the stepper shows it; a rejected case stands at "pending approval".
STEPS = (
    Status.DRAFT,
    Status.EVALUATING,
    Status.PENDING_APPROVAL,
    Status.APPROVED,
    Status.ACCEPTED,
)

# What moves the case on from each status, in a reviewer's words.
NEXT_MOVE = {
    Status.DRAFT: gettext_lazy("Add the first offer: the case then moves to evaluation."),
    Status.EVALUATING: gettext_lazy(
        "Once an offer holds every approval gate, submit the case for approval."
    ),
    Status.PENDING_APPROVAL: gettext_lazy(
        "A tech lead approves one offer, whose gates all hold, or rejects the case."
    ),
    Status.REJECTED: gettext_lazy(
        "Mend what the decision named, then submit the case for approval again."
    ),
    Status.APPROVED: gettext_lazy(
        "Run the acceptance tests and sign off their results: the case is then accepted."
    ),
    Status.ACCEPTED: gettext_lazy(
        "The case is accepted. Keep its access reviews and data-export assessment current."
    ),
}


@dataclass(frozen=True)
class Step:
    label: str
    state: str  # "done", "current" or "upcoming"


@dataclass
class Tile:
    """One area of the case: its state, what it lacks, and who can mend it."""

    area: str
    title: str
    missing: list[str]
    details_url: str
    fix_url: str
    fix_permission: str = ""
    owners: list[str] = field(default_factory=list)
    started: bool = True

    @property
    def needs_area_fix(self) -> bool:
        """Some line has no page of its own: the area's own form mends it."""
        return any(not getattr(line, "url", "") for line in self.missing)

    @property
    def state(self) -> str:
        if self.missing:
            return "open" if self.started else "todo"
        return "done" if self.started else "idle"

    @property
    def state_label(self) -> str:
        return {
            "open": _("Needs work"),
            "todo": _("Not started"),
            "done": _("In place"),
            "idle": _("Nothing yet"),
        }[self.state]


def steps(case: ProcurementCase) -> list[Step]:
    current = Status.PENDING_APPROVAL if case.status == Status.REJECTED else case.status
    position = STEPS.index(current)
    shown = []
    for index, status in enumerate(STEPS):
        state = "done" if index < position else "current" if index == position else "upcoming"
        label = str(Status(status).label)
        if index == position and case.status == Status.REJECTED:
            label = _("%(step)s (rejected)") % {"step": label}
        shown.append(Step(label, state))
    return shown


def owners_of(permission: str) -> list[str]:
    """The roles that can mend an area; the administrator only when nobody else can."""
    if not permission:
        return []
    roles = roles_holding(permission)
    others = [role for role in roles if role != _("Administrator")]
    return others or roles


def tile(case: ProcurementCase, panel: CasePanel, *, winner: int | None = None) -> Tile:
    """The area's tile; ``winner``, the offer the case's decision approved: once decided,
    what the other offers lack no longer stands in the way (their lines close)."""
    details = reverse("cases:area", args=[case.pk, panel.area])
    missing = list(panel.missing)
    if winner is not None:
        missing = [line for line in missing if getattr(line, "offer_id", None) in (None, winner)]
    return Tile(
        area=panel.area,
        title=str(AREAS[panel.area].label),
        missing=missing,
        details_url=details,
        fix_url=panel.fix_url or details,
        fix_permission=panel.fix_permission,
        owners=owners_of(panel.fix_permission),
        started=panel.started,
    )


def by_role(tiles: list[Tile]) -> list[tuple[str, list[Tile]]]:
    """Each role with the areas it can mend that have something missing, in role order."""
    groups: dict[str, list[Tile]] = {}
    for entry in tiles:
        if not entry.missing:
            continue
        for role in entry.owners:
            groups.setdefault(role, []).append(entry)
    return list(groups.items())


# --- the findings register: what stands in the way of a decision ---------------------

FINDINGS_ANCHOR = "open-findings"


@dataclass(frozen=True)
class OpenFinding:
    """One open finding of the register as the cockpit lists it."""

    subject: str  # the offer it is about ("" : the whole case)
    title: str  # what the rule checks
    line: str  # the finding, with whom it awaits or when its acceptance expired
    severity: str
    owners: list[str]  # the roles (their labels) that fix it or still have to accept it
    owners_named: bool  # the line names them already ("Awaits acceptance by: …")
    fix_url: str  # where it is fixed ("" : nowhere one page mends it)
    accept_url: str  # where an owner accepts it ("" : it cannot be accepted)


def open_findings(case: ProcurementCase, panels: list[CasePanel]) -> list[OpenFinding]:
    """The register's open findings (docs/rules/findings.md#on-the-case-page), read from the
    approval panel, which has read the gates and their register already; none for a
    viewer who may not see the approval."""
    overview = next(
        (panel.context.get("overview") for panel in panels if panel.area == "approval"), None
    )
    if not isinstance(overview, ApprovalOverview):
        return []
    shown = []
    for offer, entry in overview.register:
        if not entry.blocking:
            continue
        acceptable = entry.rule.severity is Severity.NEEDS_ACCEPTANCE
        shown.append(
            OpenFinding(
                subject=str(offer.vendor) if offer is not None else "",
                title=str(entry.rule.title),
                line=entry.line(),
                severity=entry.rule.severity_label,
                owners=entry.awaiting_labels or entry.rule.owner_labels,
                owners_named=acceptable and entry.status is FindingStatus.OPEN,
                fix_url=entry.finding.fix_url or "",
                accept_url=findings_url(case.pk) if acceptable else "",
            )
        )
    return shown


def by_role_with_findings(
    tiles: list[Tile], findings: list[OpenFinding]
) -> list[tuple[str, list[Tile]]]:
    """``by_role``, with the open findings each role owns beside its areas."""
    groups = dict(by_role(tiles))
    owned: dict[str, list[str]] = {}
    for found in findings:
        for role in found.owners:
            owned.setdefault(role, []).append(found.line)
    for role, lines in owned.items():
        groups.setdefault(role, []).append(
            Tile(
                area="findings",
                title=_("Open findings"),
                missing=lines,
                details_url=f"#{FINDINGS_ANCHOR}",
                fix_url=f"#{FINDINGS_ANCHOR}",
            )
        )
    return list(groups.items())


def cockpit(case: ProcurementCase, panels: list[CasePanel], nav: list) -> dict:
    """The cockpit's context from the case's panels (computed, not rendered)."""
    winner = approved_offer_id(case)
    tiles = [tile(case, panel, winner=winner) for panel in panels]
    return cockpit_from_tiles(case, tiles, nav, open_findings(case, panels))


def cockpit_from_tiles(
    case: ProcurementCase, tiles: list[Tile], nav: list, findings: list[OpenFinding] | None = None
) -> dict:
    """The cockpit's context from the areas' tiles and the register's open findings."""
    findings = findings or []
    return {
        "nav": nav,
        "steps": steps(case),
        "next_move": str(NEXT_MOVE[Status(case.status)]),
        "tiles": tiles,
        "open_tiles": [entry for entry in tiles if entry.missing],
        "findings": findings,
        "findings_anchor": FINDINGS_ANCHOR,
        "by_role": by_role_with_findings(tiles, findings),
        "missing_count": len(findings) + sum(len(entry.missing) for entry in tiles),
    }

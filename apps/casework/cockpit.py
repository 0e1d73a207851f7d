"""The case cockpit: where the case stands, one tile per area, and who has what to mend.

Every area of a case (sizing, offers, contracts, data export, access and
network, evidence, approval, acceptance, costs, packets, the audit trail) is a
panel (``apps.casework.panels``); the cockpit shows each one as a tile and lists
what it lacks, grouped by area and by the roles that can mend it. The panels'
details are one click away, on the area's own page (``case_area`` view).
"""

from dataclasses import dataclass, field

from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.cases.models import ProcurementCase
from apps.casework.overview import CasePanel
from apps.casework.panels import AREAS
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


def tile(case: ProcurementCase, panel: CasePanel) -> Tile:
    details = reverse("cases:area", args=[case.pk, panel.area])
    return Tile(
        area=panel.area,
        title=str(AREAS[panel.area].label),
        missing=list(panel.missing),
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


def cockpit(case: ProcurementCase, panels: list[CasePanel], nav: list) -> dict:
    """The cockpit's context from the case's panels (computed, not rendered)."""
    return cockpit_from_tiles(case, [tile(case, panel) for panel in panels], nav)


def cockpit_from_tiles(case: ProcurementCase, tiles: list[Tile], nav: list) -> dict:
    """The cockpit's context from the areas' tiles (stored or computed now)."""
    return {
        "nav": nav,
        "steps": steps(case),
        "next_move": str(NEXT_MOVE[Status(case.status)]),
        "tiles": tiles,
        "open_tiles": [entry for entry in tiles if entry.missing],
        "by_role": by_role(tiles),
        "missing_count": sum(len(entry.missing) for entry in tiles),
    }

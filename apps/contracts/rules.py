"""Red-flag rules for contract clause checklists (DESIGN §2.4, seed 000 §3, seed 004 §8).

Plain functions on plain data (no Django, no I/O), so the browser, the API,
the approval gates and the packet all judge a checklist the same way.

Decisions a reviewer or an auditor should know:

- The four statuses are those of the issue: acceptable, needs negotiation,
  missing, not applicable. "Missing or unacceptable items are red flags": an
  item that still *needs negotiation* is not acceptable yet, so it is a red
  flag as well as a *missing* one.
- An item with no status has never been reviewed. It is not a red flag (there
  is nothing to waive), but it blocks approval just the same: a checklist is
  only clear once every item has a decision.
- A waiver is bound to the status it waived. If the item's status changes
  (even from one red status to the other), the waiver lapses and the item is
  judged afresh; editing the excerpt, reference or note keeps the waiver.
- A required item may not be marked not applicable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from django.utils.translation import gettext as _

ACCEPTABLE = "acceptable"
NEEDS_NEGOTIATION = "needs_negotiation"
MISSING = "missing"
NOT_APPLICABLE = "not_applicable"
NOT_REVIEWED = ""

STATUSES = (ACCEPTABLE, NEEDS_NEGOTIATION, MISSING, NOT_APPLICABLE)
RED_STATUSES = frozenset({MISSING, NEEDS_NEGOTIATION})


class Verdict(StrEnum):
    NOT_REVIEWED = "not_reviewed"
    ACCEPTABLE = "acceptable"
    NOT_APPLICABLE = "not_applicable"
    RED_FLAG = "red_flag"
    WAIVED = "waived"


class BlockKind(StrEnum):
    RED_FLAG = "red_flag"
    NOT_REVIEWED = "not_reviewed"


@dataclass(frozen=True)
class WaiverState:
    waived_status: str
    lapsed: bool = False


@dataclass(frozen=True)
class ItemState:
    number: int
    key: str
    title: str
    status: str
    required: bool = True
    waivers: tuple[WaiverState, ...] = ()
    item_id: int | None = None


@dataclass(frozen=True)
class RedFlag:
    """An item that blocks approval, and why."""

    item_id: int | None
    number: int
    key: str
    title: str
    status: str
    kind: BlockKind


@dataclass(frozen=True)
class ChecklistSummary:
    total: int
    reviewed: int
    open_red_flags: tuple[RedFlag, ...]
    not_reviewed: tuple[RedFlag, ...]
    waived: tuple[ItemState, ...] = field(default_factory=tuple)

    @property
    def clear(self) -> bool:
        return not self.open_red_flags and not self.not_reviewed


def is_red(status: str) -> bool:
    return status in RED_STATUSES


def waiver_holds(status: str, waiver: WaiverState) -> bool:
    """A waiver covers the item only while it is current and the status is the one waived."""
    return not waiver.lapsed and is_red(status) and waiver.waived_status == status


def item_verdict(item: ItemState) -> Verdict:
    if item.status == NOT_REVIEWED:
        return Verdict.NOT_REVIEWED
    if item.status == NOT_APPLICABLE:
        return Verdict.NOT_APPLICABLE
    if not is_red(item.status):
        return Verdict.ACCEPTABLE
    if any(waiver_holds(item.status, waiver) for waiver in item.waivers):
        return Verdict.WAIVED
    return Verdict.RED_FLAG


def blocking_items(items: Iterable[ItemState]) -> list[RedFlag]:
    """Every item that blocks approval: unwaived red flags first, then unreviewed items."""
    red, unreviewed = [], []
    for item in sorted(items, key=lambda i: i.number):
        verdict = item_verdict(item)
        if verdict is Verdict.RED_FLAG:
            red.append(_flag(item, BlockKind.RED_FLAG))
        elif verdict is Verdict.NOT_REVIEWED:
            unreviewed.append(_flag(item, BlockKind.NOT_REVIEWED))
    return red + unreviewed


def summarise(items: Sequence[ItemState]) -> ChecklistSummary:
    blocking = blocking_items(items)
    return ChecklistSummary(
        total=len(items),
        reviewed=sum(1 for item in items if item.status != NOT_REVIEWED),
        open_red_flags=tuple(f for f in blocking if f.kind is BlockKind.RED_FLAG),
        not_reviewed=tuple(f for f in blocking if f.kind is BlockKind.NOT_REVIEWED),
        waived=tuple(i for i in items if item_verdict(i) is Verdict.WAIVED),
    )


def status_error(status: str, *, required: bool) -> str | None:
    """Why ``status`` cannot be saved on an item, or None."""
    if status not in (*STATUSES, NOT_REVIEWED):
        return (
            f"'{status}' is not a status; choose one of "
            + ", ".join(STATUSES)
            + " (or leave it blank for not reviewed)."
        )
    if required and status == NOT_APPLICABLE:
        return "This item is required and cannot be marked not applicable."
    return None


# Items no waiver can clear: the hardware's authorisation documents and origin are
# required by export-control law (the US Export Administration Regulations, China's
# Export Control Law), whatever the business gains.
NEVER_WAIVED = frozenset({"authorization_documents"})


def waive_error(item: ItemState) -> str | None:
    """Why ``item`` cannot be waived now, or None."""
    if item.key in NEVER_WAIVED:
        return str(
            _(
                "Item %(number)s (%(title)s) cannot be waived: export-control law requires "
                "the hardware's authorisation documents and origin on file. Obtain them, "
                "or choose another offer."
            )
            % {"number": item.number, "title": item.title}
        )
    if not is_red(item.status):
        shown = item.status or "not reviewed"
        return (
            f"Item {item.number} is not a red flag (status: {shown}); only a missing or "
            "needs-negotiation item can be waived."
        )
    if any(waiver_holds(item.status, waiver) for waiver in item.waivers):
        return f"Item {item.number} is already waived at its current status."
    return None


def _flag(item: ItemState, kind: BlockKind) -> RedFlag:
    return RedFlag(item.item_id, item.number, item.key, item.title, item.status, kind)

"""Red-flag rules for contract clause checklists (docs/rules/contracts.md).

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
- A waiver is in force up to and including its expiry date (by default
  ``WAIVER_DAYS`` after it was granted) and has expired from the day after:
  the item is an open red flag again until a new waiver is recorded.
- On an item the organisation's template marks high-severity, a waiver counts
  only once a second legal reviewer, not the one who granted it, confirmed it.
- A withdrawn waiver is over, as a lapsed one is: it never revives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from enum import StrEnum

from django.utils.translation import gettext as _

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

ACCEPTABLE = "acceptable"
NEEDS_NEGOTIATION = "needs_negotiation"
MISSING = "missing"
NOT_APPLICABLE = "not_applicable"
NOT_REVIEWED = ""

STATUSES = (ACCEPTABLE, NEEDS_NEGOTIATION, MISSING, NOT_APPLICABLE)
RED_STATUSES = frozenset({MISSING, NEEDS_NEGOTIATION})

# A waiver's default life: long enough for a contract round, short enough that
# an accepted risk is looked at again.
WAIVER_DAYS = 90


class Verdict(StrEnum):
    NOT_REVIEWED = "not_reviewed"
    ACCEPTABLE = "acceptable"
    NOT_APPLICABLE = "not_applicable"
    RED_FLAG = "red_flag"
    WAIVED = "waived"


class BlockKind(StrEnum):
    RED_FLAG = "red_flag"
    NOT_REVIEWED = "not_reviewed"


class WaiverIssue(StrEnum):
    """Why a waiver recorded at the item's status does not clear it."""

    EXPIRED = "expired"
    UNCONFIRMED = "awaits_confirmation"


@dataclass(frozen=True)
class WaiverState:
    waived_status: str
    lapsed: bool = False  # lapsed on a status change, or withdrawn
    # The last day it is in force; None only where no expiry applies (plain data in tests).
    expires_on: date | None = None
    confirmed: bool = False  # by a second legal reviewer
    waived_by: int | None = None
    waiver_id: int | None = None


@dataclass(frozen=True)
class ItemState:
    number: int
    key: str
    title: str
    status: str
    required: bool = True
    waivers: tuple[WaiverState, ...] = ()
    item_id: int | None = None
    high_severity: bool = False


@dataclass(frozen=True)
class RedFlag:
    """An item that blocks approval, and why."""

    item_id: int | None
    number: int
    key: str
    title: str
    status: str
    kind: BlockKind
    # A waiver at the item's status that does not count, and why; with the day it expired.
    waiver_issue: WaiverIssue | None = None
    waiver_expired_on: date | None = None


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


def default_expiry(granted_on: date) -> date:
    """The expiry date of a waiver granted on ``granted_on`` when the reviewer sets none."""
    return granted_on + timedelta(days=WAIVER_DAYS)


def waiver_expired(expires_on: date | None, today: date | None) -> bool:
    """In force up to and including ``expires_on``; expired from the day after."""
    if expires_on is None:
        return False
    if today is None:
        raise ValueError("Judging a waiver with an expiry date needs today's date.")
    return today > expires_on


def waiver_holds(status: str, waiver: WaiverState) -> bool:
    """A waiver covers the item only while it is current and the status is the one waived."""
    return not waiver.lapsed and is_red(status) and waiver.waived_status == status


def waiver_counts(item: ItemState, waiver: WaiverState, *, today: date | None = None) -> bool:
    """The waiver clears the item: it holds, has not expired, and is confirmed where the
    item is high-severity."""
    return (
        waiver_holds(item.status, waiver)
        and not waiver_expired(waiver.expires_on, today)
        and (waiver.confirmed or not item.high_severity)
    )


def effective_waiver(item: ItemState, *, today: date | None = None) -> WaiverState | None:
    """The waiver that clears ``item`` today, or None."""
    if not is_red(item.status):
        return None
    return next((w for w in item.waivers if waiver_counts(item, w, today=today)), None)


def pending_waiver(item: ItemState, *, today: date | None = None) -> WaiverState | None:
    """A waiver in force at the item's status that awaits its second legal confirmation."""
    if not item.high_severity:
        return None
    return next(
        (
            w
            for w in item.waivers
            if waiver_holds(item.status, w)
            and not w.confirmed
            and not waiver_expired(w.expires_on, today)
        ),
        None,
    )


def waiver_issue(
    item: ItemState, *, today: date | None = None
) -> tuple[WaiverIssue, date | None] | None:
    """Why the item's waiver does not clear it (with the day it expired), or None.

    A waiver awaiting its confirmation is the newer news (a renewal, say) and is
    named before an expired one; of several expired waivers, the latest expiry.
    """
    if not is_red(item.status) or effective_waiver(item, today=today) is not None:
        return None
    if pending_waiver(item, today=today) is not None:
        return WaiverIssue.UNCONFIRMED, None
    expired = [
        w.expires_on
        for w in item.waivers
        if waiver_holds(item.status, w)
        and w.expires_on is not None
        and waiver_expired(w.expires_on, today)
    ]
    if expired:
        return WaiverIssue.EXPIRED, max(expired)
    return None


def item_verdict(item: ItemState, *, today: date | None = None) -> Verdict:
    if item.status == NOT_REVIEWED:
        return Verdict.NOT_REVIEWED
    if item.status == NOT_APPLICABLE:
        return Verdict.NOT_APPLICABLE
    if not is_red(item.status):
        return Verdict.ACCEPTABLE
    if effective_waiver(item, today=today) is not None:
        return Verdict.WAIVED
    return Verdict.RED_FLAG


def blocking_items(items: Iterable[ItemState], *, today: date | None = None) -> list[RedFlag]:
    """Every item that blocks approval: unwaived red flags first, then unreviewed items."""
    red, unreviewed = [], []
    for item in sorted(items, key=lambda i: i.number):
        verdict = item_verdict(item, today=today)
        if verdict is Verdict.RED_FLAG:
            red.append(_flag(item, BlockKind.RED_FLAG, waiver_issue(item, today=today)))
        elif verdict is Verdict.NOT_REVIEWED:
            unreviewed.append(_flag(item, BlockKind.NOT_REVIEWED))
    return red + unreviewed


def summarise(items: Sequence[ItemState], *, today: date | None = None) -> ChecklistSummary:
    blocking = blocking_items(items, today=today)
    return ChecklistSummary(
        total=len(items),
        reviewed=sum(1 for item in items if item.status != NOT_REVIEWED),
        open_red_flags=tuple(f for f in blocking if f.kind is BlockKind.RED_FLAG),
        not_reviewed=tuple(f for f in blocking if f.kind is BlockKind.NOT_REVIEWED),
        waived=tuple(i for i in items if item_verdict(i, today=today) is Verdict.WAIVED),
    )


def waiver_problem(flag: RedFlag) -> str | None:
    """What is wrong with the waiver of a blocking item, in the words every page uses."""
    if flag.waiver_issue is WaiverIssue.EXPIRED:
        shown = flag.waiver_expired_on.isoformat() if flag.waiver_expired_on else "—"
        return str(_("the waiver expired on %(date)s") % {"date": shown})
    if flag.waiver_issue is WaiverIssue.UNCONFIRMED:
        return str(_("the waiver awaits a second legal confirmation"))
    return None


def flag_label(flag: RedFlag) -> str:
    """``3. Title``, and what is wrong with its waiver: the gate, the case page and the
    packet name a blocking item with this one text."""
    label = f"{flag.number}. {flag.title}"
    problem = waiver_problem(flag)
    return f"{label} ({problem})" if problem else label


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


def waive_error(item: ItemState, *, today: date | None = None) -> str | None:
    """Why ``item`` cannot be waived now, or None. An expired waiver may be renewed."""
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
    if effective_waiver(item, today=today) is not None:
        return f"Item {item.number} is already waived at its current status."
    if pending_waiver(item, today=today) is not None:
        return str(
            _(
                "Item %(number)s already has a waiver awaiting a second legal confirmation: "
                "have it confirmed, or withdraw it first."
            )
            % {"number": item.number}
        )
    return None


def waiver_grant_errors(*, reason: str, expires_on: date | None, today: date) -> dict[str, str]:
    """What is wrong with a new waiver's reason and expiry date (None: the default)."""
    errors = {}
    if not (reason or "").strip():
        errors["reason"] = str(_("A waiver needs a reason."))
    if expires_on is not None and expires_on < today:
        errors["expires_on"] = str(
            _("The expiry date %(date)s is in the past; choose today or a later day.")
            % {"date": expires_on.isoformat()}
        )
    return errors


def confirm_error(
    item: ItemState, waiver: WaiverState, *, actor_id: int, note: str, today: date
) -> str | None:
    """Why ``actor_id`` cannot confirm ``waiver`` of ``item`` as the second legal reviewer."""
    if not item.high_severity:
        return str(
            _("Item %(number)s is not high-severity: its waiver needs no second confirmation.")
            % {"number": item.number}
        )
    if waiver.confirmed:
        return str(_("This waiver is already confirmed."))
    if not waiver_holds(item.status, waiver):
        return str(
            _(
                "This waiver is no longer in force (withdrawn, or the item's status changed): "
                "there is nothing to confirm."
            )
        )
    if waiver_expired(waiver.expires_on, today):
        shown = waiver.expires_on.isoformat() if waiver.expires_on else "—"
        return str(
            _("This waiver expired on %(date)s: record a new waiver instead.") % {"date": shown}
        )
    if waiver.waived_by is not None and waiver.waived_by == actor_id:
        return str(
            _(
                "You granted this waiver: a second legal reviewer, not the one who granted it, "
                "must confirm it."
            )
        )
    if not (note or "").strip():
        return str(_("Say why you confirm this waiver."))
    return None


def withdraw_error(waiver: WaiverState, *, reason: str) -> str | None:
    """Why ``waiver`` cannot be withdrawn, or None."""
    if waiver.lapsed:
        return str(_("This waiver is no longer in force: there is nothing to withdraw."))
    if not (reason or "").strip():
        return str(_("Say why the waiver is withdrawn."))
    return None


def _flag(
    item: ItemState, kind: BlockKind, issue: tuple[WaiverIssue, date | None] | None = None
) -> RedFlag:
    return RedFlag(
        item.item_id,
        item.number,
        item.key,
        item.title,
        item.status,
        kind,
        waiver_issue=issue[0] if issue else None,
        waiver_expired_on=issue[1] if issue else None,
    )

"""The case lifecycle: every status change of a procurement case goes through here.

draft → evaluating → pending approval → approved → accepted, with rejected as
the other outcome of a decision. An approval that goes stale sends an approved
case back to pending approval; a voided acceptance sign-off sends an accepted
case back to approved.

Each move locks the case row and re-reads its status inside the caller's
transaction, so two people acting at once cannot both move the case: the
second waits for the first, then finds the case moved on and is told so
(``CaseStatusConflict``). On SQLite the same holds because write transactions
start immediately (``transaction_mode: IMMEDIATE`` in the settings).
"""

from collections.abc import Iterable

from django.db import transaction
from django.utils.translation import gettext as _

from apps.cases.models import ProcurementCase
from apps.core.services import StateConflict, tracked_update

Status = ProcurementCase.Status

# Which moves the lifecycle allows, from each status.
MOVES: dict[str, frozenset[str]] = {
    Status.DRAFT: frozenset({Status.EVALUATING}),
    Status.EVALUATING: frozenset({Status.PENDING_APPROVAL}),
    Status.PENDING_APPROVAL: frozenset({Status.APPROVED, Status.REJECTED}),
    Status.REJECTED: frozenset({Status.PENDING_APPROVAL}),
    Status.APPROVED: frozenset({Status.PENDING_APPROVAL, Status.ACCEPTED}),
    Status.ACCEPTED: frozenset({Status.APPROVED}),
}


class CaseStatusConflict(StateConflict):
    """The case is not (or no longer) in a status from which this move is allowed."""

    def __init__(self, case: ProcurementCase, message: str) -> None:
        self.case = case
        super().__init__({"status": message})


def case_lock(
    case: ProcurementCase,
    *,
    expect: Iterable[str] | None = None,
    message: str = "",
    **params: str,
) -> ProcurementCase:
    """The case row, locked for this transaction, refused unless its status is in ``expect``.

    ``message`` is a translated template; ``%(status)s`` in it names the status
    the case is in now. Must be called inside ``transaction.atomic()``: the lock
    holds until the transaction ends.
    """
    locked = ProcurementCase.objects.select_for_update().get(pk=case.pk)
    if expect is not None and locked.status not in set(expect):
        raise CaseStatusConflict(
            locked, message % {"status": locked.get_status_display(), **params}
        )
    return locked


def case_transition(
    *,
    actor,
    case: ProcurementCase,
    target: str,
    reason: str,
    expect: Iterable[str] | None = None,
    message: str | None = None,
    fields: dict | None = None,
) -> ProcurementCase:
    """Move the case to ``target``, writing history with ``reason``.

    ``expect`` narrows the statuses the caller moves from (a decision only from
    pending approval); without it every move the lifecycle allows is accepted.
    A refused move raises ``CaseStatusConflict`` naming the current status.
    """
    allowed_from = {s for s, targets in MOVES.items() if target in targets}
    if expect is not None:
        allowed_from &= set(expect)
    with transaction.atomic():
        locked = case_lock(
            case,
            expect=allowed_from,
            message=message or _("The case is '%(status)s' now; it cannot move to '%(target)s'."),
            target=str(Status(target).label),
        )
        return tracked_update(
            locked,
            actor=actor,
            reason=reason,
            fields={"status": target, **(fields or {})},
        )

"""Writes: submitting a case for approval, deciding it, and recording staleness.

The decisions of docs/rules/approvals.md#approval-lifecycle (evaluating or rejected →
pending approval → approved / rejected; a stale approval sends the case back to pending
approval) move the case through ``apps.cases.lifecycle``, which locks the case row and
re-checks its status, so each move happens once and is in the history with who and why.
"""

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.approvals.binding import Change, capture, changes_for
from apps.approvals.models import Approval
from apps.approvals.selectors import offer_gates
from apps.cases.lifecycle import case_lock, case_transition
from apps.cases.models import ProcurementCase
from apps.core.notifications import Event, notify, people_holding
from apps.core.services import tracked_create, tracked_update
from apps.evidence import selectors as evidence_selectors

Status = ProcurementCase.Status
SUBMITTABLE = (Status.EVALUATING, Status.REJECTED)
NOT_PENDING = gettext_lazy("The case is '%(status)s'; only a case pending approval can be decided.")


def case_submit_for_approval(*, actor, case: ProcurementCase, note: str = "") -> ProcurementCase:
    """Evaluating (or rejected, for a second round) → pending approval."""
    if not (actor.has_perm("approvals.submit_approval") or actor.pk == case.owner_id):
        raise PermissionDenied(
            _("Only the case owner or a procurement reviewer may submit it for approval.")
        )
    reason = "Submitted for approval"
    if note.strip():
        reason += f": {note.strip()}"
    # Two submits at once: the second finds the case pending approval and is told so.
    return case_transition(
        actor=actor,
        case=case,
        target=Status.PENDING_APPROVAL,
        expect=SUBMITTABLE,
        message=_(
            "A case in status '%(status)s' cannot be submitted; it must be evaluating or rejected."
        ),
        reason=reason,
        fields={"submitted_by": actor},
    )


def _check_decider(actor, case: ProcurementCase) -> None:
    if not actor.has_perm("approvals.decide_approval"):
        raise PermissionDenied(_("Only a tech lead may approve or reject a case."))
    # Segregation of duties: whoever raised the request, or put it up for the
    # decision, does not decide it.
    if actor.pk == case.owner_id:
        raise PermissionDenied(
            _("You raised this request, so you cannot decide it; ask another tech lead.")
        )
    if actor.pk == case.submitted_by_id:
        raise PermissionDenied(
            _(
                "You submitted this case for approval, so you cannot decide it; "
                "ask another tech lead."
            )
        )


def approval_decide(
    *, actor, case: ProcurementCase, decision: str, comment: str, offer=None
) -> Approval:
    """Approve one offer (every gate must hold) or reject, with a comment.

    The approval stores the gates as they stood and the history ids of every
    record they read (``bound_state``); earlier decisions are superseded.
    """
    _check_decider(actor, case)
    case = _reopen_if_stale(case, actor=actor)
    errors = {}
    if decision not in Approval.Decision.values:
        errors["decision"] = _("Choose approve or reject.")
    if not (comment or "").strip():
        errors["comment"] = _("A decision needs a comment.")
    if offer is not None and offer.case_id != case.pk:
        errors["offer"] = _("This offer belongs to another case.")
    if decision == Approval.Decision.APPROVED and offer is None:
        errors["offer"] = _("Choose the offer you approve.")
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        # The status is read under the row lock: of two deciders at once, the
        # second waits, then finds the case decided and is told so.
        case = case_lock(case, expect={Status.PENDING_APPROVAL}, message=str(NOT_PENDING))
        _check_decider(actor, case)
        gates = offer_gates(case, offer) if offer is not None else None
        if decision == Approval.Decision.APPROVED:
            assert gates is not None  # an approval names its offer (refused above otherwise)
            if not gates.all_held:
                raise ValidationError(
                    {
                        "offer": [
                            _("Gate not held — %(title)s: %(reason)s")
                            % {"title": g.title, "reason": g.reason}
                            for g in gates.open
                        ]
                    }
                )
        verb = "Approved" if decision == Approval.Decision.APPROVED else "Rejected"
        target = Status.APPROVED if decision == Approval.Decision.APPROVED else Status.REJECTED
        case = case_transition(
            case=case,
            actor=actor,
            target=target,
            expect={Status.PENDING_APPROVAL},
            message=str(NOT_PENDING),
            reason=f"{verb}{f' ({offer.vendor})' if offer else ''}: {comment.strip()}",
        )
        # Bound after the case's own transition, so that write is not a "change".
        scopes = gates.scopes if gates else []
        approval = tracked_create(
            Approval,
            actor=actor,
            reason=f"{verb}: {comment.strip()}",
            case=case,
            offer=offer,
            decision=decision,
            decided_by=actor,
            decided_at=timezone.now(),
            comment=comment.strip(),
            gates=[_gate_dict(g) for g in gates.gates] if gates else [],
            bound_state={
                "records": capture(scopes),
                "evidence": gates.evidence if gates else [],
                "verification": bound_verification(gates),
            },
        )
        for earlier in Approval.objects.filter(case=case, superseded_at__isnull=True).exclude(
            pk=approval.pk
        ):
            tracked_update(
                earlier,
                actor=actor,
                reason=f"Superseded by decision #{approval.pk}",
                fields={"superseded_by": approval, "superseded_at": approval.decided_at},
            )
        _decision_tell(approval, actor=actor)
    return approval


def _decision_tell(approval: Approval, *, actor) -> None:
    """The case's owner, whoever submitted it and the approvers hear of the decision
    (docs/notifications.md#who-is-told)."""
    case = approval.case
    who = actor.get_full_name() or actor.get_username()
    if approval.decision == Approval.Decision.APPROVED:
        text = gettext_lazy("%(who)s approved %(vendor)s's offer on %(case)s: %(comment)s")
    else:
        text = gettext_lazy("%(who)s rejected %(case)s: %(comment)s")
    notify(
        Event.DECISION,
        case=case,
        text=text,
        params={
            "who": who,
            "vendor": approval.offer.vendor.name if approval.offer else "",
            "case": case.name,
            "comment": approval.comment,
        },
        path=reverse("approvals:case", args=[case.pk]),
        recipients=[
            case.owner,
            case.submitted_by,
            *people_holding("approvals.decide_approval"),
        ],
        actor=actor,
    )


def bound_verification(gates) -> dict | None:
    """The verification the gates read and the values it showed (see ``binding``)."""
    verification_id = gates.inputs.verification.verification_id if gates else None
    if verification_id is None:
        return None
    return evidence_selectors.verification_binding(verification_id)


def _reopen_if_stale(case: ProcurementCase, *, actor) -> ProcurementCase:
    """An approved case whose approval went stale may be decided afresh at once."""
    if case.status != Status.APPROVED:
        return case
    current = Approval.objects.filter(case=case, superseded_at__isnull=True).first()
    if current is None or current.stale_at is not None:
        return case
    approval_mark_stale(approval=current, changes=changes_for([current])[current.pk], actor=actor)
    case.refresh_from_db()
    return case


def _gate_dict(gate) -> dict:
    return {
        "key": gate.key,
        "title": str(gate.title),
        "held": gate.held,
        "reason": str(gate.reason),
        "waivers": list(gate.waivers),
    }


def approval_mark_stale(
    *, approval: Approval, changes: list[Change], actor=None
) -> Approval | None:
    """Record that a current approval no longer matches the records it approved.

    Writes the changes into the approval's history and sends an approved case
    back to pending approval, so it needs a fresh decision. Does nothing when
    already recorded or when nothing changed.
    """
    if not changes or approval.stale_at is not None or approval.superseded_at is not None:
        return None
    if approval.decision != Approval.Decision.APPROVED:
        return None
    summary = "; ".join(str(c) for c in changes)[:1500]
    with transaction.atomic():
        # Locks in the order every writer takes them (case, then its records), and
        # re-reads the approval: two checks at once record the staleness once.
        case = case_lock(approval.case)
        approval = Approval.objects.select_for_update().get(pk=approval.pk)
        if approval.stale_at is not None or approval.superseded_at is not None:
            return None
        approval = tracked_update(
            approval,
            actor=actor,
            reason=f"Stale: {summary}",
            fields={"stale_at": timezone.now(), "stale_changes": [c.as_dict() for c in changes]},
        )
        if case.status == Status.APPROVED:
            case_transition(
                case=case,
                actor=actor,
                target=Status.PENDING_APPROVAL,
                expect={Status.APPROVED},
                reason=f"Approval #{approval.pk} is stale, a fresh decision is needed: {summary}",
            )
    return approval


def stale_approvals_record(*, actor=None) -> list[Approval]:
    """Check every current approval not yet known stale; record those that are."""
    current = list(
        Approval.objects.filter(
            decision=Approval.Decision.APPROVED,
            superseded_at__isnull=True,
            stale_at__isnull=True,
        ).select_related("case")
    )
    changes = changes_for(current)
    marked = []
    for approval in current:
        result = approval_mark_stale(approval=approval, changes=changes[approval.pk], actor=actor)
        if result is not None:
            marked.append(result)
    return marked

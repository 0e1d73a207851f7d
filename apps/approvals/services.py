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

from apps.approvals import policies
from apps.approvals.binding import Change, capture, changes_for
from apps.approvals.models import Approval, ApprovalChain, ChainDecision
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
) -> Approval | ApprovalChain:
    """Approve one offer (every gate must hold) or reject, with a comment.

    The approval stores the gates as they stood and the history ids of every
    record they read (``bound_state``); earlier decisions are superseded. Under an
    approval policy, an approval starts the chain instead (returned while it runs).
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
        if ApprovalChain.objects.filter(case=case, state=ApprovalChain.State.RUNNING).exists():
            raise ValidationError(
                _(
                    "The tech lead's step is decided; the case waits for the later steps "
                    "of its chain."
                )
            )
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
        if decision == Approval.Decision.APPROVED:
            assert gates is not None and offer is not None
            policy = policies.policy_in_force()
            if policy is not None:
                chain = _chain_start(
                    actor=actor,
                    case=case,
                    offer=offer,
                    gates=gates,
                    comment=comment,
                    policy=policy,
                )
                if chain.state == ApprovalChain.State.RUNNING:
                    return chain
                assert chain.approval is not None
                return chain.approval
        return _record(
            actor=actor,
            case=case,
            offer=offer,
            decision=decision,
            comment=comment,
            decided_by=actor,
            decided_at=timezone.now(),
            gates=[_gate_dict(g) for g in gates.gates] if gates else [],
            bound_state=lambda: _bound(gates),
        )


def _bound(gates) -> dict:
    return {
        "records": capture(gates.scopes if gates else []),
        "evidence": gates.evidence if gates else [],
        "verification": bound_verification(gates),
    }


def _record(
    *, actor, case, offer, decision, comment, decided_by, decided_at, gates, bound_state
) -> Approval:
    """Move the case to its decided status and write the decision (in the caller's
    transaction, with the case locked); earlier decisions are superseded."""
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
    if callable(bound_state):
        bound_state = bound_state()
    approval = tracked_create(
        Approval,
        actor=actor,
        reason=f"{verb}: {comment.strip()}",
        case=case,
        offer=offer,
        decision=decision,
        decided_by=decided_by,
        decided_at=decided_at,
        comment=comment.strip(),
        gates=gates,
        bound_state=bound_state,
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


# --- approval chains (docs/rules/approvals.md#approval-chains) --------------------------


def _chain_start(*, actor, case, offer, gates, comment, policy) -> ApprovalChain:
    """The tech lead approved under a policy: copy the policy as it applies to the offer
    onto a new chain. With no step applying, the approval is written at once."""
    if ApprovalChain.objects.filter(case=case, state=ApprovalChain.State.RUNNING).exists():
        raise ValidationError(_("An approval chain already runs on this case."))
    facts = policies.policy_facts(
        case, offer, finding_codes=[entry.finding.rule.code for entry in gates.findings]
    )
    now = timezone.now()
    chain = tracked_create(
        ApprovalChain,
        actor=actor,
        reason=f"Approved by the tech lead ({offer.vendor}): {comment.strip()}",
        case=case,
        offer=offer,
        policy=policy,
        snapshot=policies.snapshot(policy, facts),
        state=ApprovalChain.State.RUNNING,
        tech_lead=actor,
        tech_lead_at=now,
        tech_lead_comment=comment.strip(),
        gates=[_gate_dict(g) for g in gates.gates],
        bound_state=_bound(gates),
    )
    return _chain_advance(chain, actor=actor, decisions=[])


def _chain_advance(chain: ApprovalChain, *, actor, decisions) -> ApprovalChain:
    """End the chain when no applicable step waits: the tech lead's approval is written."""
    if policies.open_positions(chain, decisions):
        _chain_tell_next(chain, actor=actor, decisions=decisions)
        return chain
    approval = _record(
        actor=actor,
        case=chain.case,
        offer=chain.offer,
        decision=Approval.Decision.APPROVED,
        comment=chain.tech_lead_comment,
        decided_by=chain.tech_lead,
        decided_at=chain.tech_lead_at,
        gates=chain.gates,
        bound_state=chain.bound_state,
    )
    return tracked_update(
        chain,
        actor=actor,
        reason="Every step of the chain has its approvals",
        fields={
            "state": ApprovalChain.State.APPROVED,
            "finished_at": timezone.now(),
            "approval": approval,
        },
    )


def chain_step_decide(
    *, actor, case: ProcurementCase, step: int, decision: str, comment: str
) -> ChainDecision:
    """One decision at one waiting step of the case's running chain, by a person the step
    names (its role's holder, the named person, or their delegate for today), once per
    person per chain. Two at once: the second waits for the case's lock, then finds the
    step decided (or the person taken) and is told so."""
    errors = {}
    if decision not in Approval.Decision.values:
        errors["decision"] = _("Choose approve or reject.")
    if not (comment or "").strip():
        errors["comment"] = _("A decision needs a comment.")
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        case = case_lock(case, expect={Status.PENDING_APPROVAL}, message=str(NOT_PENDING))
        chain = (
            ApprovalChain.objects.select_for_update()
            .filter(case=case, state=ApprovalChain.State.RUNNING)
            .first()
        )
        if chain is None:
            raise ValidationError(_("No approval chain waits on this case."))
        decisions = list(chain.decisions.all())
        if step not in policies.open_positions(chain, decisions):
            raise ValidationError(
                {"step": _("This step does not wait for a decision: it is decided or not due yet.")}
            )
        snap = next(s for s in chain.snapshot["steps"] if s["position"] == step)
        allowed, behalf = policies.eligibility(chain, snap, actor, decisions=decisions)
        if not allowed:
            raise PermissionDenied(
                _(
                    "You may not decide this step: it is for %(who)s, and nobody decides "
                    "twice in one chain, nor on a case they raised or submitted."
                )
                % {"who": policies.StepState(step=snap).who}
            )
        verb = "Approved" if decision == Approval.Decision.APPROVED else "Rejected"
        behalf_text = f" on behalf of {behalf.get_username()}" if behalf is not None else ""
        made = tracked_create(
            ChainDecision,
            actor=actor,
            reason=f"{verb} step {step} ({snap['label']}){behalf_text}: {comment.strip()}",
            chain=chain,
            step=step,
            decision=decision,
            decided_by=actor,
            on_behalf_of=behalf,
            decided_at=timezone.now(),
            comment=comment.strip(),
        )
        chain.case = case
        if decision == Approval.Decision.REJECTED:
            approval = _record(
                actor=actor,
                case=case,
                offer=chain.offer,
                decision=Approval.Decision.REJECTED,
                comment=f"{snap['label']}: {comment.strip()}",
                decided_by=actor,
                decided_at=made.decided_at,
                gates=chain.gates,
                bound_state={},
            )
            tracked_update(
                chain,
                actor=actor,
                reason=f"Rejected at step {step} ({snap['label']})",
                fields={
                    "state": ApprovalChain.State.REJECTED,
                    "finished_at": made.decided_at,
                    "approval": approval,
                },
            )
        else:
            _chain_advance(chain, actor=actor, decisions=[*decisions, made])
    return made


def _chain_tell_next(chain: ApprovalChain, *, actor, decisions) -> None:
    """Whoever may decide a waiting step hears that it waits for them."""
    positions = policies.open_positions(chain, decisions)
    people = []
    for snap in chain.snapshot["steps"]:
        if snap["position"] in positions:
            people += policies.eligible_people(chain, snap, decisions=decisions)
    if not people:
        return
    notify(
        Event.DECISION,
        case=chain.case,
        text=gettext_lazy("%(case)s waits for your approval at the next step of its chain."),
        params={"case": chain.case.name},
        path=reverse("approvals:case", args=[chain.case.pk]),
        recipients=people,
        actor=actor,
    )


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


# --- policies and delegations, as the administrator sets them (the admin) ---------------


def policy_record_create(model, *, actor, fields: dict):
    """A policy, a step of one or a delegation: validated as every record is; a running
    chain keeps the policy it copied."""
    if not actor.has_perm(f"approvals.add_{model._meta.model_name}"):
        raise PermissionDenied(_("Only an administrator sets approval policies and delegations."))
    return tracked_create(model, actor=actor, reason="Created by an administrator", **fields)


def policy_record_update(record, *, actor, fields: dict, reason: str, expected_version: int):
    if not actor.has_perm(f"approvals.change_{record._meta.model_name}"):
        raise PermissionDenied(_("Only an administrator sets approval policies and delegations."))
    return tracked_update(
        record, actor=actor, reason=reason, fields=fields, expected_version=expected_version
    )

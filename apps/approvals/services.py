"""Writes: submitting a case for approval, deciding it, and recording staleness.

The decisions of docs/rules/approvals.md#approval-lifecycle (evaluating or rejected →
pending approval → approved / rejected; a stale approval sends the case back to pending
approval) move the case through ``apps.cases.lifecycle``, which locks the case row and
re-checks its status, so each move happens once and is in the history with who and why.
"""

from datetime import date, timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy
from django.utils.translation import gettext as _

from apps.approvals import policies
from apps.approvals.binding import Change, capture, changes_for
from apps.approvals.models import (
    CONDITION_MAX_DAYS,
    AcceptanceCondition,
    Approval,
    ApprovalChain,
    ChainDecision,
)
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
    *,
    actor,
    case: ProcurementCase,
    decision: str,
    comment: str,
    offer=None,
    conditions=None,
    condition_deadline: date | None = None,
) -> Approval | ApprovalChain:
    """Approve one offer (every gate must hold) or reject, with a comment.

    The approval stores the gates as they stood and the history ids of every
    record they read (``bound_state``); earlier decisions are superseded. Under an
    approval policy, an approval starts the chain instead (returned while it runs).

    With ``conditions`` (``AcceptanceCondition`` values) and ``condition_deadline`` the
    approval is subject to acceptance: the gates only the rented machine can hold may
    still be open, and what is named must pass on it by the deadline
    (docs/rules/approvals.md#approval-subject-to-acceptance).
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
    conditions = _clean_conditions(conditions, condition_deadline, decision, errors)
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
            _check_gates(gates, conditions)
        deadline = condition_deadline if conditions else None
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
                    conditions=conditions,
                    deadline=deadline,
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
            bound_state=lambda: _bound(gates, conditional=bool(conditions)),
            conditions=conditions,
            deadline=deadline,
        )


def _clean_conditions(conditions, deadline, decision, errors) -> list[str] | None:
    """The conditions in their fixed order (None: approved without conditions); what is
    wrong with them goes into ``errors``."""
    if not conditions:
        return None
    if decision != Approval.Decision.APPROVED:
        errors["conditions"] = _("Only an approval can be made subject to acceptance.")
        return None
    unknown = set(conditions) - set(AcceptanceCondition.values)
    if unknown:
        errors["conditions"] = _("Unknown acceptance condition: %(items)s.") % {
            "items": ", ".join(sorted(map(str, unknown)))
        }
        return None
    today = timezone.localdate()
    if deadline is None:
        errors["condition_deadline"] = _(
            "An approval subject to acceptance needs the date the acceptance is due by."
        )
    elif deadline < today or deadline > today + timedelta(days=CONDITION_MAX_DAYS):
        errors["condition_deadline"] = _(
            "The acceptance must be due between today and %(n)s days ahead."
        ) % {"n": CONDITION_MAX_DAYS}
    return [c.value for c in AcceptanceCondition if c.value in set(conditions)]


def _check_gates(gates, conditions) -> None:
    """Every gate must hold; subject to acceptance, those only the rented machine can hold
    may still be open, if hardware identity is among the conditions."""
    if gates.all_held:
        return
    waiting = gates.open_until_measured if conditions else []
    if waiting and AcceptanceCondition.IDENTITY in conditions:
        return
    if waiting:
        raise ValidationError(
            {
                "conditions": _(
                    "%(gates)s: not held yet. Name hardware identity among the conditions, "
                    "so that it is measured on the rented machine."
                )
                % {"gates": "; ".join(str(g.title) for g in waiting)}
            }
        )
    raise ValidationError(
        {
            "offer": [
                _("Gate not held — %(title)s: %(reason)s") % {"title": g.title, "reason": g.reason}
                for g in gates.open
            ]
        }
    )


def _bound(gates, *, conditional: bool = False) -> dict:
    """What a decision is bound to. Subject to acceptance, the offer's evidence and
    verification are left out: the acceptance runs are expected to change them, and the
    approval is bound to them when its condition is met."""
    return {
        "records": capture(gates.scopes if gates else []),
        "evidence": gates.evidence if gates and not conditional else [],
        "verification": bound_verification(gates) if not conditional else None,
    }


def _record(
    *,
    actor,
    case,
    offer,
    decision,
    comment,
    decided_by,
    decided_at,
    gates,
    bound_state,
    conditions=None,
    deadline=None,
) -> Approval:
    """Move the case to its decided status and write the decision (in the caller's
    transaction, with the case locked); earlier decisions are superseded."""
    verb = "Approved" if decision == Approval.Decision.APPROVED else "Rejected"
    if conditions:
        verb += f" subject to acceptance ({', '.join(conditions)}, due {deadline})"
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
        conditions=conditions or None,
        condition_deadline=deadline if conditions else None,
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


def _chain_start(
    *, actor, case, offer, gates, comment, policy, conditions=None, deadline=None
) -> ApprovalChain:
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
        bound_state=_bound(gates, conditional=bool(conditions)),
        conditions=conditions or None,
        condition_deadline=deadline if conditions else None,
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
        conditions=chain.conditions,
        deadline=chain.condition_deadline,
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
    if approval.decision == Approval.Decision.APPROVED and approval.conditional:
        text = gettext_lazy(
            "%(who)s approved %(vendor)s's offer on %(case)s subject to acceptance of "
            "%(conditions)s by %(deadline)s: %(comment)s"
        )
    elif approval.decision == Approval.Decision.APPROVED:
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
            "conditions": _conditions_text(approval),
            "deadline": approval.condition_deadline,
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


# --- approval subject to acceptance (docs/rules/approvals.md#approval-subject-to-acceptance)


def approval_condition_met(*, approval: Approval, summary: str, actor=None) -> Approval | None:
    """The acceptance an approval was subject to passed on the rented machine: the
    approval is bound from now on to the offer's evidence and verification as they stand,
    and everyone who approved hears of it. Does nothing when no condition is open."""
    with transaction.atomic():
        case, waiting = _lock_waiting(approval)
        if waiting is None:
            return None
        approval = waiting
        gates = offer_gates(case, approval.offer)
        bound = {
            **approval.bound_state,
            "evidence": gates.evidence,
            "verification": bound_verification(gates),
        }
        approval = tracked_update(
            approval,
            actor=actor,
            reason=f"Acceptance condition met: {summary}"[:500],
            fields={"condition_met_at": timezone.now(), "bound_state": bound},
        )
        _condition_tell(
            approval,
            actor=actor,
            text=gettext_lazy(
                "%(case)s: the acceptance the approval of %(vendor)s's offer was subject to "
                "passed (%(conditions)s). The approval holds without conditions."
            ),
        )
    return approval


def approval_lapse(*, approval: Approval, reasons: list[str], actor=None) -> Approval | None:
    """The acceptance was not passed by its deadline: the approval lapses, the case is
    pending approval again with the reason, and everyone who approved is told. Does
    nothing when no condition is open."""
    with transaction.atomic():
        case, waiting = _lock_waiting(approval)
        if waiting is None:
            return None
        approval = waiting
        deadline = approval.condition_deadline
        reason = f"Acceptance not passed by {deadline}: " + "; ".join(reasons)
        now = timezone.now()
        change = Change(
            model="approvals.approval",
            record=str(approval.pk),
            label=gettext("acceptance condition"),
            when=now,
            user="",
            action="lapsed",
            reason=reason[:1000],
        )
        approval = tracked_update(
            approval,
            actor=actor,
            reason=f"Lapsed: {reason}"[:500],
            fields={
                "lapsed_at": now,
                "lapse_reason": reason,
                "stale_at": now,
                "stale_changes": [change.as_dict()],
            },
        )
        if case.status == Status.APPROVED:
            case_transition(
                case=case,
                actor=actor,
                target=Status.PENDING_APPROVAL,
                expect={Status.APPROVED},
                reason=f"Approval #{approval.pk} lapsed, a fresh decision is needed: {reason}"[
                    :500
                ],
            )
        _condition_tell(
            approval,
            actor=actor,
            text=gettext_lazy(
                "The approval of %(vendor)s's offer on %(case)s lapsed: the acceptance it was "
                "subject to (%(conditions)s) did not pass by %(deadline)s. The case waits for "
                "a fresh decision. %(reason)s"
            ),
            reason="; ".join(reasons),
        )
    return approval


def _lock_waiting(approval: Approval) -> tuple[ProcurementCase, Approval | None]:
    """The case, then the approval, locked as every writer takes them and read again:
    the approval only while its condition still waits (two settlements at once settle
    it once)."""
    case = case_lock(approval.case)
    approval = (
        Approval.objects.select_for_update(of=("self",))
        .select_related("offer__vendor")
        .get(pk=approval.pk)
    )
    waits = (
        approval.condition_open
        and approval.superseded_at is None
        and approval.stale_at is None
        and approval.decision == Approval.Decision.APPROVED
    )
    return case, approval if waits else None


def _conditions_text(approval: Approval):
    """The approval's conditions, named in the language the sentence is rendered in."""
    labels = [c.label for c in AcceptanceCondition if c.value in (approval.conditions or ())]
    return format_lazy(", ".join("{}" for _label in labels), *labels)


def approvers_of(approval: Approval) -> list:
    """Everyone who approved: the tech lead, each later step's approver of the chain it
    ended, and those they stood in for."""
    people = [approval.decided_by]
    for made in ChainDecision.objects.filter(
        chain__approval=approval, decision=Approval.Decision.APPROVED
    ).select_related("decided_by", "on_behalf_of"):
        people.append(made.decided_by)
        if made.on_behalf_of is not None:
            people.append(made.on_behalf_of)
    return people


def _condition_tell(approval: Approval, *, actor, text, reason: str = "") -> None:
    case = approval.case
    notify(
        Event.DECISION,
        case=case,
        text=text,
        params={
            "case": case.name,
            "vendor": approval.offer.vendor.name if approval.offer else "",
            "conditions": _conditions_text(approval),
            "deadline": approval.condition_deadline,
            "reason": reason,
        },
        path=reverse("approvals:case", args=[case.pk]),
        recipients=[case.owner, case.submitted_by, *approvers_of(approval)],
        actor=actor,
    )


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

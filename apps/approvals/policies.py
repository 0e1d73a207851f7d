"""Approval chains: which steps of the policy in force apply to an approved offer, who may
decide each, and where a chain stands (docs/rules/approvals.md#approval-chains).

A chain copies the policy when it starts (``snapshot``): the steps, their conditions,
whether each applied and the facts they were read against. Everything here reads the
snapshot, never the policy, so an edit of the policy changes no chain already running.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.approvals.gathering import policy_facts_reader
from apps.approvals.models import (
    Approval,
    ApprovalChain,
    ApprovalPolicy,
    ChainDecision,
    Delegation,
    PolicyStep,
)
from apps.core import formats
from apps.core.roles import Role, roles_of

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class PolicyFacts:
    """What a step's conditions read of the case and the offer its tech lead approved."""

    contract_value: Decimal | None  # None: it cannot be worked out from the offer
    currency: str
    prepayment_ratio: Decimal | None
    term_months: int | None
    finding_codes: tuple[str, ...] = ()  # the rules with a finding on the register
    personal_data: bool = False  # an assessment says personal information leaves

    def as_dict(self) -> dict:
        return {
            "contract_value": None if self.contract_value is None else str(self.contract_value),
            "currency": self.currency,
            "prepayment_ratio": (
                None if self.prepayment_ratio is None else str(self.prepayment_ratio)
            ),
            "term_months": self.term_months,
            "finding_codes": list(self.finding_codes),
            "personal_data": self.personal_data,
        }


def policy_facts(case, offer, *, finding_codes=()) -> PolicyFacts:
    read = policy_facts_reader()(case, offer)
    return PolicyFacts(
        contract_value=read.get("contract_value"),
        currency=offer.currency,
        prepayment_ratio=offer.prepayment_ratio,
        term_months=offer.contract_term_months,
        finding_codes=tuple(sorted(set(finding_codes))),
        personal_data=bool(read.get("personal_data")),
    )


def policy_in_force() -> ApprovalPolicy | None:
    return ApprovalPolicy.objects.filter(in_force=True).first()


# --- conditions ------------------------------------------------------------------------


def _conditions(step: PolicyStep, facts: PolicyFacts) -> list[dict]:
    """Each condition the step sets, with whether it held on ``facts``.

    Where a fact cannot be read (no contract value, an offer in another currency than
    the threshold's: no exchange rate is recorded, no term), the condition holds: the
    chain asks one approval too many rather than one too few."""
    found: list[dict] = []
    if step.value_above is not None:
        currency = step.value_currency or facts.currency
        if facts.contract_value is None or facts.currency != currency:
            held = True
        else:
            held = facts.contract_value > step.value_above
        found.append(
            {
                "kind": "value",
                "threshold": str(step.value_above),
                "currency": currency,
                "value": None if facts.contract_value is None else str(facts.contract_value),
                "value_currency": facts.currency,
                "held": held,
            }
        )
    if step.if_prepayment:
        ratio = facts.prepayment_ratio
        found.append(
            {
                "kind": "prepayment",
                "ratio": str(ratio) if ratio is not None else None,
                "held": ratio is None or ratio > 0,
            }
        )
    if step.term_above_months is not None:
        months = facts.term_months
        found.append(
            {
                "kind": "term",
                "months": step.term_above_months,
                "term": months,
                "held": months is None or months > step.term_above_months,
            }
        )
    if step.finding_code:
        found.append(
            {
                "kind": "finding",
                "code": step.finding_code,
                "held": step.finding_code in facts.finding_codes,
            }
        )
    if step.if_personal_data:
        found.append({"kind": "personal_data", "held": facts.personal_data})
    return found


def snapshot(policy: ApprovalPolicy, facts: PolicyFacts) -> dict:
    """The policy as it applies to one approved offer, to be kept on its chain."""
    steps = []
    for position, step in enumerate(
        policy.steps.select_related("person").order_by("order", "pk"), start=1
    ):
        conditions = _conditions(step, facts)
        person = step.person
        steps.append(
            {
                "position": position,
                "order": step.order,
                "label": step.label,
                "role": step.role,
                "person_id": step.person_id,
                "person": _name(person) if person is not None else "",
                "quorum": 1 if step.person_id else max(step.quorum, 1),
                "conditions": conditions,
                "applies": all(c["held"] for c in conditions),
            }
        )
    return {
        "policy": policy.name,
        "policy_id": policy.pk,
        "policy_version": policy.version,
        "steps": steps,
        "facts": facts.as_dict(),
    }


def condition_text(condition: dict) -> str:
    """One condition of a snapshot, in words, with what it read."""
    kind = condition.get("kind")
    if kind == "value":
        threshold = formats.money(_decimal(condition["threshold"]), condition["currency"])
        if condition.get("value") is None:
            return _("Contract value above %(threshold)s (value unknown: counted as above)") % {
                "threshold": threshold
            }
        value = formats.money(_decimal(condition["value"]), condition["value_currency"])
        if condition["value_currency"] != condition["currency"]:
            return _(
                "Contract value above %(threshold)s (offer priced at %(value)s, no exchange "
                "rate: counted as above)"
            ) % {"threshold": threshold, "value": value}
        return _("Contract value above %(threshold)s (offer: %(value)s)") % {
            "threshold": threshold,
            "value": value,
        }
    if kind == "prepayment":
        ratio = condition.get("ratio")
        share = formats.percent(_decimal(ratio)) if ratio is not None else _("unknown")
        return _("A prepayment is asked (offer: %(share)s)") % {"share": share}
    if kind == "term":
        term = condition.get("term")
        return _("Term longer than %(months)s months (offer: %(term)s)") % {
            "months": condition["months"],
            "term": term if term is not None else _("unknown"),
        }
    if kind == "finding":
        return _("Finding on the register: %(code)s") % {"code": condition["code"]}
    if kind == "personal_data":
        return _("Personal data is handled")
    return str(kind)


def _decimal(text) -> Decimal:
    try:
        return Decimal(str(text))
    except (InvalidOperation, ValueError):
        return Decimal(0)


# --- who decides -----------------------------------------------------------------------


def _name(person) -> str:
    return person.get_full_name() or person.get_username()


def active_delegations(today=None):
    today = today or timezone.localdate()
    return Delegation.objects.filter(starts_on__lte=today, ends_on__gte=today)


def taken(chain: ApprovalChain, decisions=None) -> set[int]:
    """Who may no longer decide in the chain: the case's owner and submitter, the tech
    lead, and whoever decided a step already or had it decided on their behalf."""
    case = chain.case
    people = {chain.tech_lead_id, case.owner_id, case.submitted_by_id}
    for decision in decisions if decisions is not None else chain.decisions.all():
        people.add(decision.decided_by_id)
        people.add(decision.on_behalf_of_id)
    people.discard(None)
    return people  # type: ignore[return-value]


def _holds(person, step: dict) -> bool:
    if step["person_id"]:
        return person.pk == step["person_id"]
    return bool(step["role"]) and step["role"] in roles_of(person)


def eligibility(chain: ApprovalChain, step: dict, actor, *, decisions=None):
    """``(may decide, on whose behalf)`` for ``actor`` at ``step`` of ``chain``: the step's
    role holder or named person, or their delegate for today, never one already taken."""
    excluded = taken(chain, decisions)
    if actor.pk in excluded:
        return False, None
    if _holds(actor, step):
        return True, None
    for delegation in active_delegations().filter(delegate=actor).select_related("delegator"):
        delegator = delegation.delegator
        if delegator.pk in excluded or not delegator.is_active:
            continue
        if _holds(delegator, step):
            return True, delegator
    return False, None


def eligible_people(chain: ApprovalChain, step: dict, *, decisions=None) -> list:
    """Everyone who may decide ``step`` now (holders, the named person, their delegates)."""
    User = get_user_model()
    excluded = taken(chain, decisions)
    if step["person_id"]:
        holders = list(User.objects.filter(pk=step["person_id"], is_active=True))
    elif step["role"] == Role.ADMIN:
        holders = list(User.objects.filter(is_active=True, is_superuser=True)) + list(
            User.objects.filter(is_active=True, groups__name=Role.ADMIN)
        )
    elif step["role"]:
        holders = list(User.objects.filter(is_active=True, groups__name=step["role"]))
    else:
        holders = []
    holders = [p for p in {p.pk: p for p in holders}.values() if p.pk not in excluded]
    people = {p.pk: p for p in holders}
    holder_ids = {p.pk for p in holders}
    for delegation in (
        active_delegations().filter(delegator_id__in=holder_ids).select_related("delegate")
    ):
        if delegation.delegate.is_active and delegation.delegate_id not in excluded:
            people.setdefault(delegation.delegate_id, delegation.delegate)
    return sorted(people.values(), key=_name)


# --- where a chain stands --------------------------------------------------------------


@dataclass
class StepState:
    step: dict
    decisions: list[ChainDecision] = field(default_factory=list)
    open: bool = False
    next_people: list = field(default_factory=list)

    @property
    def position(self) -> int:
        return self.step["position"]

    @property
    def label(self) -> str:
        return self.step["label"]

    @property
    def applies(self) -> bool:
        return self.step["applies"]

    @property
    def quorum(self) -> int:
        return self.step["quorum"]

    @property
    def approvals(self) -> int:
        return sum(1 for d in self.decisions if d.decision == Approval.Decision.APPROVED)

    @property
    def done(self) -> bool:
        return self.approvals >= self.quorum

    @property
    def who(self) -> str:
        if self.step["person_id"]:
            return self.step["person"]
        return str(Role(self.step["role"]).label) if self.step["role"] else ""

    @property
    def conditions(self) -> list[str]:
        return [condition_text(c) for c in self.step["conditions"]]

    @property
    def next_names(self) -> list[str]:
        return [_name(p) for p in self.next_people]

    @property
    def status(self) -> str:
        """skipped (its conditions did not hold), rejected, done, waiting or later."""
        if not self.applies:
            return "skipped"
        if any(d.decision == Approval.Decision.REJECTED for d in self.decisions):
            return "rejected"
        if self.done:
            return "done"
        return "waiting" if self.open else "later"

    @property
    def status_label(self) -> str:
        return str(
            {
                "skipped": _("does not apply"),
                "rejected": _("rejected"),
                "done": _("approved"),
                "waiting": _("waiting"),
                "later": _("after the steps before it"),
            }[self.status]
        )


@dataclass
class ChainState:
    chain: ApprovalChain
    steps: list[StepState]

    @property
    def open_steps(self) -> list[StepState]:
        return [s for s in self.steps if s.open]

    @property
    def running(self) -> bool:
        return self.chain.state == ApprovalChain.State.RUNNING

    @property
    def next_names(self) -> list[str]:
        return sorted({name for s in self.open_steps for name in s.next_names})

    def steps_for(self, actor) -> list[StepState]:
        """The open steps ``actor`` may decide now."""
        decisions = [d for s in self.steps for d in s.decisions]
        return [
            s
            for s in self.open_steps
            if eligibility(self.chain, s.step, actor, decisions=decisions)[0]
        ]


def open_positions(chain: ApprovalChain, decisions) -> set[int]:
    """The steps waiting now: the applicable steps not yet at their quorum that share the
    lowest order number among such steps (empty: every step has its quorum)."""
    if chain.state != ApprovalChain.State.RUNNING:
        return set()
    approvals: dict[int, int] = {}
    for decision in decisions:
        if decision.decision == Approval.Decision.APPROVED:
            approvals[decision.step] = approvals.get(decision.step, 0) + 1
    waiting = [
        s
        for s in chain.snapshot.get("steps", [])
        if s["applies"] and approvals.get(s["position"], 0) < s["quorum"]
    ]
    if not waiting:
        return set()
    lowest = min(s["order"] for s in waiting)
    return {s["position"] for s in waiting if s["order"] == lowest}


def chain_state(chain: ApprovalChain, *, with_people: bool = True) -> ChainState:
    decisions = list(chain.decisions.select_related("decided_by", "on_behalf_of"))
    positions = open_positions(chain, decisions)
    steps = []
    for step in chain.snapshot.get("steps", []):
        state = StepState(
            step=step,
            decisions=[d for d in decisions if d.step == step["position"]],
            open=step["position"] in positions,
        )
        if state.open and with_people:
            state.next_people = eligible_people(chain, step, decisions=decisions)
        steps.append(state)
    return ChainState(chain=chain, steps=steps)


def case_chains(case) -> list[ApprovalChain]:
    """Every chain of the case, newest first."""
    return list(
        ApprovalChain.objects.filter(case=case)
        .select_related("tech_lead", "offer__vendor", "case", "approval")
        .order_by("-tech_lead_at", "-pk")
    )


def running_chain(case) -> ApprovalChain | None:
    return (
        ApprovalChain.objects.filter(case=case, state=ApprovalChain.State.RUNNING)
        .select_related("tech_lead", "offer__vendor", "case")
        .first()
    )


@dataclass
class PolicyView:
    """The policy in force, as the approval page shows it (read-only)."""

    policy: ApprovalPolicy
    steps: list[dict]


def policy_view() -> PolicyView | None:
    policy = policy_in_force()
    if policy is None:
        return None
    steps = []
    for step in policy.steps.select_related("person").order_by("order", "pk"):
        conditions = _conditions(step, _ANY)
        steps.append(
            {
                "order": step.order,
                "label": step.label,
                "who": _name(step.person) if step.person else Role(step.role).label,
                "quorum": 1 if step.person_id else step.quorum,
                "conditions": [_condition_rule(c) for c in conditions],
            }
        )
    return PolicyView(policy=policy, steps=steps)


# Facts that satisfy nothing, to list a step's conditions without an offer.
_ANY = PolicyFacts(contract_value=None, currency="", prepayment_ratio=None, term_months=None)


def _condition_rule(condition: dict) -> str:
    """A condition of the policy, in words, without an offer to read it on."""
    kind = condition["kind"]
    if kind == "value":
        return _("contract value above %(threshold)s") % {
            "threshold": formats.money(_decimal(condition["threshold"]), condition["currency"])
        }
    if kind == "prepayment":
        return _("a prepayment is asked")
    if kind == "term":
        return _("term longer than %(months)s months") % {"months": condition["months"]}
    if kind == "finding":
        return _("a finding %(code)s on the register") % {"code": condition["code"]}
    return _("personal data is handled")

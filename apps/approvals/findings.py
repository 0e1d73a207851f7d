"""One register of findings per case (docs/rules/findings.md).

Every rule of every area that can stand in the way of a decision yields a
``Finding``: a stable code, the offer (or the whole case) it is about, a
severity, the roles that own it and the public source it rests on. The register
puts each finding beside the acceptances recorded for it and says where it
stands. The approval gates are read from the register (``bind_gates``), so a
finding the register holds open can never sit beside a green gate.

Plain functions on plain data (no Django models, no I/O).

Decisions a reviewer or an auditor should know:

- **Blocks**: nobody can accept it; the case cannot be approved on that offer
  until the finding is gone.
- **Needs acceptance**: each owning role accepts it, a different person for
  each, with a reason and an expiry date. Until every owner has accepted, it
  blocks like any other.
- **Informs**: shown everywhere, never blocks.
- An acceptance holds for the facts it was given on: when the finding's values
  change (a 35 % premium becomes 45 %), the acceptance lapses and the finding
  is open again. It holds up to and including its expiry date.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from enum import StrEnum

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.approvals.gates import GATE_BASIS, Gate
from apps.core.roles import Role

# The longest an acceptance may run, and its default: an accepted risk is looked at again.
ACCEPTANCE_DAYS = 90
ACCEPTANCE_MAX_DAYS = 365


class Severity(StrEnum):
    BLOCKS = "blocks"
    NEEDS_ACCEPTANCE = "needs_acceptance"
    INFORMS = "informs"


SEVERITY_LABELS = {
    Severity.BLOCKS: gettext_lazy("Blocks"),
    Severity.NEEDS_ACCEPTANCE: gettext_lazy("Needs acceptance"),
    Severity.INFORMS: gettext_lazy("Informs"),
}


class Status(StrEnum):
    OPEN = "open"  # blocks, or awaits an owner's acceptance
    ACCEPTED = "accepted"  # every owner accepted, and no acceptance expired
    EXPIRED = "expired"  # accepted once, but an acceptance expired: open again
    INFORMS = "informs"  # never blocks


STATUS_LABELS = {
    Status.OPEN: gettext_lazy("Open"),
    Status.ACCEPTED: gettext_lazy("Accepted"),
    Status.EXPIRED: gettext_lazy("Acceptance expired"),
    Status.INFORMS: gettext_lazy("For information"),
}


@dataclass(frozen=True)
class Rule:
    """What a finding is: its code, weight, owners, gate and public source."""

    code: str
    title: Promise | str
    severity: Severity
    owners: tuple[str, ...]  # role values; each must accept a finding that needs acceptance
    gate: str  # the approval gate it stands in
    source: Promise | str  # the public law, standard or stated need, in plain words
    # The document each acceptance must attach, in words ("" where none is asked).
    document: Promise | str = ""

    @property
    def severity_label(self) -> str:
        return str(SEVERITY_LABELS[self.severity])

    @property
    def owner_labels(self) -> list[str]:
        return [str(Role(owner).label) for owner in self.owners]


@dataclass(frozen=True)
class Finding:
    """One rule's finding about one offer (or the whole case: ``offer_id`` None)."""

    rule: Rule
    offer_id: int | None
    message: str
    # Stable values the finding was raised on; an acceptance holds only while they hold.
    facts: str
    key: str = ""  # which of several findings of one rule on one subject (a field, an item)
    subject: str = ""  # the record it is about, in words
    fix_url: str | None = None

    @property
    def identity(self) -> tuple[str, int | None, str]:
        return (self.rule.code, self.offer_id, self.key)


@dataclass(frozen=True)
class AcceptanceFacts:
    """One owner's acceptance of one finding, as recorded."""

    pk: int
    code: str
    offer_id: int | None
    key: str
    role: str
    facts: str
    accepted_by_id: int
    accepted_by: str  # the person's name
    accepted_on: date
    reason: str
    expires_on: date
    withdrawn: bool = False
    document: str = ""  # the attached document's name, "" when none
    document_sha256: str = ""

    @property
    def identity(self) -> tuple[str, int | None, str]:
        return (self.code, self.offer_id, self.key)

    @property
    def role_label(self) -> str:
        return str(Role(self.role).label) if self.role in Role.values else self.role

    def line(self) -> str:
        text = _("%(who)s (%(role)s) on %(on)s, until %(until)s: %(reason)s") % {
            "who": self.accepted_by,
            "role": self.role_label,
            "on": self.accepted_on.isoformat(),
            "until": self.expires_on.isoformat(),
            "reason": self.reason,
        }
        if self.document:
            text += " " + _("Attached: %(name)s (SHA-256 %(sha)s).") % {
                "name": self.document,
                "sha": self.document_sha256,
            }
        return text


@dataclass(frozen=True)
class Entry:
    """A finding in the register: where it stands and the acceptances it rests on."""

    finding: Finding
    status: Status
    acceptances: tuple[AcceptanceFacts, ...] = ()  # in force, one per owner
    awaiting: tuple[str, ...] = ()  # owner roles still to accept
    expired: tuple[AcceptanceFacts, ...] = ()  # acceptances of these facts that ran out

    @property
    def blocking(self) -> bool:
        return self.status in (Status.OPEN, Status.EXPIRED)

    @property
    def rule(self) -> Rule:
        return self.finding.rule

    @property
    def status_label(self) -> str:
        return str(STATUS_LABELS[self.status])

    @property
    def awaiting_labels(self) -> list[str]:
        return [str(Role(role).label) for role in self.awaiting]

    def line(self) -> str:
        """The finding as the gate, the summary and the inbox name it."""
        text = self.finding.message
        if self.status is Status.EXPIRED:
            ended = max(a.expires_on for a in self.expired)
            text += " " + _("Its acceptance expired on %(date)s.") % {"date": ended.isoformat()}
        elif self.status is Status.OPEN and self.rule.severity is Severity.NEEDS_ACCEPTANCE:
            text += " " + _("Awaits acceptance by: %(roles)s.") % {
                "roles": ", ".join(self.awaiting_labels)
            }
        return text


def acceptance_in_force(acceptance: AcceptanceFacts, *, today: date) -> bool:
    return not acceptance.withdrawn and today <= acceptance.expires_on


def judge(
    findings: Iterable[Finding], acceptances: Iterable[AcceptanceFacts], *, today: date
) -> list[Entry]:
    """Every finding with where it stands today, the blocking first."""
    by_identity: dict[tuple, list[AcceptanceFacts]] = {}
    for acceptance in acceptances:
        by_identity.setdefault(acceptance.identity, []).append(acceptance)
    entries = [
        _entry(finding, by_identity.get(finding.identity, []), today=today) for finding in findings
    ]
    order = {Status.OPEN: 0, Status.EXPIRED: 0, Status.ACCEPTED: 1, Status.INFORMS: 2}
    return sorted(entries, key=lambda e: order[e.status])


def _entry(finding: Finding, recorded: list[AcceptanceFacts], *, today: date) -> Entry:
    rule = finding.rule
    if rule.severity is Severity.INFORMS:
        return Entry(finding, Status.INFORMS)
    if rule.severity is Severity.BLOCKS:
        return Entry(finding, Status.OPEN, awaiting=())
    # Only acceptances given on these very facts count; the newest per owner.
    same = [a for a in recorded if a.facts == finding.facts and not a.withdrawn]
    in_force: dict[str, AcceptanceFacts] = {}
    expired: list[AcceptanceFacts] = []
    for acceptance in sorted(same, key=lambda a: (a.accepted_on, a.pk)):
        if acceptance.role not in rule.owners:
            continue
        if acceptance_in_force(acceptance, today=today):
            in_force[acceptance.role] = acceptance
        else:
            expired.append(acceptance)
    awaiting = tuple(role for role in rule.owners if role not in in_force)
    held = tuple(in_force[role] for role in rule.owners if role in in_force)
    if not awaiting:
        return Entry(finding, Status.ACCEPTED, acceptances=held)
    lapsed = tuple(a for a in expired if a.role in awaiting)
    status = Status.EXPIRED if lapsed else Status.OPEN
    return Entry(finding, status, acceptances=held, awaiting=awaiting, expired=lapsed)


# --- the approval gates, read from the register ------------------------------

# Who fixes what a gate finds missing: the owner of each gate's own finding.
GATE_OWNERS = {
    "declared_spec": Role.TECH_LEAD,
    "offer_minimum": Role.PROCUREMENT,
    "red_flags": Role.LEGAL,
    "assessment": Role.LEGAL,
    "access_matrix": Role.TECH_LEAD,
    "verification": Role.TECH_LEAD,
    "endpoint_security": Role.TECH_LEAD,
    "exit_readiness": Role.LEGAL,
    "hardware_compliance": Role.LEGAL,
    "demand_fit": Role.TECH_LEAD,
}


def gate_rule(gate: Gate) -> Rule:
    """The rule of a gate's own finding: what the gate reads is missing or fails."""
    return Rule(
        code=f"gate.{gate.key}",
        title=gate.title,
        severity=Severity.BLOCKS,
        owners=(GATE_OWNERS.get(gate.key, Role.TECH_LEAD),),
        gate=gate.key,
        source=GATE_BASIS.get(gate.key, gettext_lazy("The case's own stated need.")),
    )


def gate_findings(gates: Sequence[Gate], *, offer_id: int) -> list[Finding]:
    """One blocking finding for each gate whose own reading does not hold."""
    return [
        Finding(
            rule=gate_rule(gate),
            offer_id=offer_id,
            message=gate.reason,
            facts=gate.reason,
            fix_url=gate.fix_url,
        )
        for gate in gates
        if not gate.held
    ]


def bind_gates(gates: Sequence[Gate], entries: Sequence[Entry]) -> list[Gate]:
    """The gates as the register has them: a gate holds only while no finding of its
    area is open, and names the findings accepted in it."""
    bound = []
    for gate in gates:
        mine = [e for e in entries if e.rule.gate == gate.key and not _own(e, gate)]
        open_lines = [e.line() for e in mine if e.blocking]
        accepted = tuple(
            _("%(finding)s — accepted by %(who)s")
            % {
                "finding": e.finding.message,
                "who": "; ".join(a.line() for a in e.acceptances),
            }
            for e in mine
            if e.status is Status.ACCEPTED
        )
        if open_lines:
            reason = " ".join(([gate.reason] if not gate.held else []) + open_lines)
            bound.append(replace(gate, held=False, reason=reason, waivers=gate.waivers + accepted))
        else:
            bound.append(replace(gate, waivers=gate.waivers + accepted))
    return bound


def _own(entry: Entry, gate: Gate) -> bool:
    return entry.rule.code == f"gate.{gate.key}"


def blocking(entries: Iterable[Entry]) -> list[Entry]:
    return [entry for entry in entries if entry.blocking]


# --- accepting ------------------------------------------------------------------


def accept_errors(
    entry: Entry | None,
    *,
    actor_id: int,
    actor_roles: Iterable[str],
    role: str,
    reason: str,
    expires_on: date | None,
    today: date,
    has_document: bool = False,
) -> dict[str, str]:
    """Why this person cannot accept this finding now, by field; empty when they can.
    A rule that names a document takes no acceptance without one
    (docs/rules/findings.md#accepting-a-finding)."""
    if entry is None:
        return {"code": str(_("No such finding is open on this case."))}
    rule = entry.rule
    if rule.severity is Severity.BLOCKS:
        return {"code": str(_("This finding blocks: nobody can accept it. Fix what it names."))}
    if rule.severity is Severity.INFORMS:
        return {"code": str(_("This finding only informs: there is nothing to accept."))}
    if entry.status is Status.ACCEPTED:
        return {"code": str(_("This finding is already accepted by every owner."))}
    errors: dict[str, str] = {}
    roles = set(actor_roles)
    if role not in rule.owners:
        errors["role"] = str(
            _("Only %(roles)s may accept this finding.") % {"roles": ", ".join(rule.owner_labels)}
        )
    elif role not in roles:
        errors["role"] = str(_("You do not hold the role %(role)s.") % {"role": Role(role).label})
    elif role not in entry.awaiting:
        errors["role"] = str(
            _("The %(role)s has already accepted it.") % {"role": Role(role).label}
        )
    elif any(a.accepted_by_id == actor_id for a in entry.acceptances):
        errors["role"] = str(
            _(
                "You already accepted this finding for another role: a joint decision needs "
                "a different person for each owner."
            )
        )
    if not (reason or "").strip():
        errors["reason"] = str(_("An acceptance needs a reason."))
    if rule.document and not has_document:
        errors["evidence"] = str(
            _("Attach %(document)s: this finding is accepted only with it.")
            % {"document": rule.document}
        )
    if expires_on is None:
        errors["expires_on"] = str(_("An acceptance needs an expiry date."))
    elif expires_on < today:
        errors["expires_on"] = str(
            _("The expiry date %(date)s is in the past.") % {"date": expires_on.isoformat()}
        )
    elif (expires_on - today).days > ACCEPTANCE_MAX_DAYS:
        errors["expires_on"] = str(
            _("An acceptance runs at most %(n)s days; choose %(date)s or earlier.")
            % {
                "n": ACCEPTANCE_MAX_DAYS,
                "date": (today + timedelta(days=ACCEPTANCE_MAX_DAYS)).isoformat(),
            }
        )
    return errors

"""Pure rules of the access matrix and the network plan, on plain data.

Segregation of duties and the quarterly review follow docs/rules/access.md#access-matrix;
the latency budget and the training-traffic rule follow
docs/rules/access.md#network-plan, the data paths against the data-export assessment
docs/rules/access.md#data-paths. The approval gates, the packet and the pages all call these.
"""

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, NamedTuple

from django.utils.translation import gettext as _

# docs/rules/access.md#segregation-of-duties: keys are rotated quarterly, and the permission review
# with them.
REVIEW_INTERVAL = timedelta(days=90)
# docs/rules/access.md#latency-budget: user request → access gateway ≤ 10 ms.
USER_TO_GATEWAY_LIMIT_MS = Decimal("10")

AUDIT_ROLE_WRITE = "audit_role_write"
CLUSTER_ADMIN_WITH_DATA_WRITE = "cluster_admin_with_data_write"
ROLE_HOLDS_EVERY_PERMISSION = "role_holds_every_permission"
GRANT_WITHOUT_JUSTIFICATION = "grant_without_justification"


@dataclass(frozen=True)
class RoleData:
    key: str
    name: str
    is_audit_role: bool = False


@dataclass(frozen=True)
class PermissionData:
    key: str
    name: str
    is_write: bool
    kind: str = "other"


@dataclass(frozen=True)
class GrantData:
    role: str
    permission: str
    justification: str = ""


@dataclass(frozen=True)
class MatrixData:
    roles: tuple[RoleData, ...]
    permissions: tuple[PermissionData, ...]
    grants: tuple[GrantData, ...]
    reviewed_at: datetime | None = None
    review_by: date | None = None


@dataclass(frozen=True)
class Violation:
    """One SoD rule broken; ``cells`` are the (role, permission) cells at fault."""

    rule: str
    role: str
    permission: str | None
    message: str
    cells: tuple[tuple[str, str], ...] = field(default=())


class MatrixState(NamedTuple):
    reviewed: bool
    expired: bool
    violations: list[Violation]

    @property
    def holds(self) -> bool:
        """What the approval gate asks: reviewed, not expired, no violation."""
        return self.reviewed and not self.expired and not self.violations


def sod_violations(matrix: MatrixData) -> list[Violation]:
    """Every segregation-of-duties violation, row by row, in matrix order."""
    permissions = {p.key: p for p in matrix.permissions}
    held: dict[str, list[GrantData]] = {r.key: [] for r in matrix.roles}
    for grant in matrix.grants:
        if grant.role in held and grant.permission in permissions:
            held[grant.role].append(grant)
    violations: list[Violation] = []
    for role in matrix.roles:
        grants = held[role.key]
        violations += _audit_writes(role, grants, permissions)
        violations += _admin_with_data_write(role, grants, permissions)
        violations += _every_permission(role, grants, matrix.permissions)
        violations += _unjustified(role, grants, permissions)
    return violations


def _audit_writes(role, grants, permissions) -> list[Violation]:
    if not role.is_audit_role:
        return []
    return [
        Violation(
            AUDIT_ROLE_WRITE,
            role.key,
            g.permission,
            _("%(role)s is an audit role but holds the write permission %(permission)s.")
            % {"role": role.name, "permission": permissions[g.permission].name},
            ((role.key, g.permission),),
        )
        for g in grants
        if permissions[g.permission].is_write
    ]


def _admin_with_data_write(role, grants, permissions) -> list[Violation]:
    kinds = {g.permission: permissions[g.permission].kind for g in grants}
    admin = [key for key, kind in kinds.items() if kind == "cluster_admin"]
    if not admin:
        return []
    return [
        Violation(
            CLUSTER_ADMIN_WITH_DATA_WRITE,
            role.key,
            key,
            _("%(role)s holds cluster administration together with %(permission)s.")
            % {"role": role.name, "permission": permissions[key].name},
            tuple((role.key, a) for a in admin) + ((role.key, key),),
        )
        for key, kind in kinds.items()
        if kind == "data_write"
    ]


def _every_permission(role, grants, all_permissions) -> list[Violation]:
    # With a single permission "every permission" says nothing about privilege.
    if len(all_permissions) < 2 or len(grants) < len(all_permissions):
        return []
    return [
        Violation(
            ROLE_HOLDS_EVERY_PERMISSION,
            role.key,
            None,
            _("%(role)s holds every permission of the matrix.") % {"role": role.name},
            tuple((role.key, p.key) for p in all_permissions),
        )
    ]


def _unjustified(role, grants, permissions) -> list[Violation]:
    return [
        Violation(
            GRANT_WITHOUT_JUSTIFICATION,
            role.key,
            g.permission,
            _("%(role)s holds %(permission)s without a justification.")
            % {"role": role.name, "permission": permissions[g.permission].name},
            ((role.key, g.permission),),
        )
        for g in grants
        if not g.justification.strip()
    ]


def review_by_after(reviewed_on: date) -> date:
    return reviewed_on + REVIEW_INTERVAL


def review_expired(review_by: date | None, today: date) -> bool:
    """The review holds through its review-by day and lapses the day after."""
    return review_by is not None and today > review_by


def matrix_state(matrix: Any, today: date) -> MatrixState:
    """(reviewed, expired, violations) of a matrix: ``MatrixData`` or an ``AccessMatrix``."""
    data = matrix if isinstance(matrix, MatrixData) else matrix.as_data()
    return MatrixState(
        reviewed=data.reviewed_at is not None,
        expired=review_expired(data.review_by, today),
        violations=sod_violations(data),
    )


@dataclass(frozen=True)
class Budget:
    """The online-inference latency budget (docs/rules/access.md#latency-budget), in ms."""

    target: Decimal
    total: Decimal | None
    over_target: bool
    rtt_share: Decimal | None
    rtt_over_half: bool
    gateway_over_limit: bool
    advice: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def rtt_percent(self) -> Decimal | None:
        return None if self.rtt_share is None else (self.rtt_share * 100).quantize(Decimal("0.1"))


def latency_budget(plan: Any) -> Budget:
    """User → gateway + one RTT gateway → remote service + queueing and first token,
    against the target.

    ``plan`` is anything with ``target_latency_ms``, ``user_to_gateway_ms``,
    ``rtt_ms`` and ``queueing_and_first_token_ms`` (None = not known). Whether
    the RTT was measured or estimated is the caller's to say (``offer_budget``).
    The RTT share is taken of the target: that is the budget being spent.
    """
    target = Decimal(plan.target_latency_ms)
    parts = {
        "user_to_gateway_ms": plan.user_to_gateway_ms,
        "rtt_ms": plan.rtt_ms,
        "queueing_and_first_token_ms": plan.queueing_and_first_token_ms,
    }
    missing = tuple(name for name, value in parts.items() if value is None)
    gateway = plan.user_to_gateway_ms
    rtt = plan.rtt_ms
    gateway_over = gateway is not None and Decimal(gateway) > USER_TO_GATEWAY_LIMIT_MS
    share = (Decimal(rtt) / target) if rtt is not None and target > 0 else None
    # "Over half": an RTT of exactly half the budget still passes.
    over_half = rtt is not None and Decimal(rtt) * 2 > target
    total = None if missing else sum((Decimal(v) for v in parts.values()), Decimal(0))
    over = total is not None and total > target
    advice = []
    if over_half:
        # over_half needs an RTT, and a plan's target is at least 1 ms (model validator).
        assert share is not None
        advice.append(
            _(
                "The RTT gateway → remote service alone takes %(share)s %% of the %(target)s ms "
                "budget: serve from a region closer to the users instead of squeezing the model."
            )
            % {"share": (share * 100).quantize(Decimal("0.1")), "target": _ms(target)}
        )
    if over and not over_half:
        assert total is not None  # over is only true with a total
        advice.append(
            _(
                "The budget is %(excess)s ms over target: shorten queueing and first-token time "
                "(replicas, warm-up, batching limits) or revisit the target."
            )
            % {"excess": _ms(total - target)}
        )
    if gateway_over:
        advice.append(
            _(
                "User → gateway takes %(ms)s ms; the budget allows at most %(limit)s ms: add an "
                "access point nearer the users."
            )
            % {"ms": _ms(Decimal(gateway)), "limit": _ms(USER_TO_GATEWAY_LIMIT_MS)}
        )
    return Budget(
        target=target,
        total=total,
        over_target=over,
        rtt_share=share,
        rtt_over_half=over_half,
        gateway_over_limit=gateway_over,
        advice=tuple(advice),
        missing=missing,
    )


def _ms(value: Decimal) -> str:
    return f"{value.normalize():f}"


# --- The latency budget of each offer ----------------------------------------
# The RTT gateway → remote service and the first-token time are measured per
# offer by the harness (network probe, load test); the plan's typed values are
# estimates, used only for an offer without a measurement.

MEASURED = "measured"
ESTIMATE = "estimate"
UNKNOWN = "unknown"
# Where a measured round trip was taken from: only the customer's gateway measures the
# gateway → remote service hop; the rented machine's own probe is shown beside, never in it.
FROM_GATEWAY = "gateway"
FROM_MACHINE = "rented_machine"


@dataclass(frozen=True)
class Leg:
    """One leg of an offer's budget: its value and where it comes from.

    A measured leg names the evidence bundle (``bundle``, ``bundle_label``) and
    when it was measured; ``p95_ms`` is the RTT's 95th percentile where probed.
    """

    ms: Decimal | None
    kind: str = UNKNOWN
    p95_ms: Decimal | None = None
    bundle: int | None = None
    bundle_label: str = ""
    measured_at: datetime | None = None
    target: str = ""  # the host probed
    samples: int | None = None  # connects behind a measured RTT
    demo: bool = False  # a demo bundle's value, not measured on the vendor's machines
    origin: str = ""  # a round trip's: FROM_GATEWAY or FROM_MACHINE

    @property
    def measured(self) -> bool:
        return self.kind == MEASURED

    @property
    def estimate(self) -> bool:
        return self.kind == ESTIMATE


def leg_of(measured: Leg | None, estimate: Decimal | int | None) -> Leg:
    """The measurement where there is one; else the plan's estimate, labelled so."""
    if measured is not None and measured.ms is not None:
        return measured
    if estimate is not None:
        return Leg(ms=Decimal(estimate), kind=ESTIMATE)
    return Leg(ms=None)


WITHIN_TARGET = "within_target"
OVER_TARGET = "over_target"
RTT_OVER_HALF = "rtt_over_half"
INCOMPLETE = "incomplete"


@dataclass(frozen=True)
class OfferBudget:
    offer_id: int
    offer: str
    user_to_gateway_ms: Decimal | None
    rtt: Leg
    queueing: Leg
    budget: Budget
    # The rented machine's own round trip to its endpoint: shown, never the hop's value.
    machine_rtt: Leg | None = None

    @property
    def verdict(self) -> str:
        """The RTT over half the budget first (the remedy is another region), then the
        total against the target."""
        if self.budget.rtt_over_half:
            return RTT_OVER_HALF
        if self.budget.missing:
            return INCOMPLETE
        return OVER_TARGET if self.budget.over_target else WITHIN_TARGET

    @property
    def verdict_label(self) -> str:
        return {
            RTT_OVER_HALF: _("RTT over half the budget"),
            INCOMPLETE: _("Budget incomplete"),
            OVER_TARGET: _("over target"),
            WITHIN_TARGET: _("within target"),
        }[self.verdict]

    @property
    def measured(self) -> bool:
        return self.rtt.measured


@dataclass(frozen=True)
class _Legs:
    target_latency_ms: Decimal
    user_to_gateway_ms: Decimal | None
    rtt_ms: Decimal | None
    queueing_and_first_token_ms: Decimal | None


def offer_budget(
    *,
    offer_id: int,
    offer: str,
    target_latency_ms: Decimal | int,
    user_to_gateway_ms: Decimal | int | None,
    rtt: Leg,
    queueing: Leg,
    machine_rtt: Leg | None = None,
) -> OfferBudget:
    """One offer's budget: the plan's user → gateway leg, the offer's RTT and first-token
    time (measured or estimated, as each leg says), against the plan's target."""
    gateway = None if user_to_gateway_ms is None else Decimal(user_to_gateway_ms)
    budget = latency_budget(
        _Legs(
            target_latency_ms=Decimal(target_latency_ms),
            user_to_gateway_ms=gateway,
            rtt_ms=rtt.ms,
            queueing_and_first_token_ms=queueing.ms,
        )
    )
    return OfferBudget(
        offer_id=offer_id,
        offer=offer,
        user_to_gateway_ms=gateway,
        rtt=rtt,
        queueing=queueing,
        budget=budget,
        machine_rtt=machine_rtt,
    )


TRAINING = "multi_node_training"
IN_CLUSTER = "in_cluster_rdma"

# The codes of the case's findings register these rules raise (docs/rules/findings.md):
# training traffic planned outside one cluster (docs/rules/access.md#training-traffic),
# the single entry point's MFA resting on a tech lead's acceptance alone
# (docs/rules/access.md#access-controls), and a data path of the plan sending what the
# data-export assessment keeps at home (docs/rules/access.md#data-paths).
TRAINING_TRAFFIC_FINDING = "access.training_traffic_outside_cluster"
ENTRY_MFA_FINDING = "access.entry_mfa_risk_accepted"
DATA_LEAVES_FINDING = "access.data_leaves_against_assessment"
REGISTER_FINDINGS = (TRAINING_TRAFFIC_FINDING, ENTRY_MFA_FINDING, DATA_LEAVES_FINDING)

# Which of the training-traffic problems a finding is about.
LEAVES_CLUSTER = "leaves_cluster"
TRAINING_LINK = "training_link"
NOT_CONFIRMED = "not_confirmed"


@dataclass(frozen=True)
class TrainingProblem:
    """One way the plan lets training traffic out of one cluster, and the sentence for it."""

    key: str
    message: str
    facts: str  # the plan's values it was raised on


def training_traffic_findings(
    *, in_one_cluster: bool | None, links: list[Any]
) -> list[TrainingProblem]:
    """docs/rules/access.md#training-traffic: gradient traffic stays inside one cluster;
    only control and data planes cross the public network. ``links`` carry ``workload``
    and ``link``."""
    training = [link for link in links if link.workload == TRAINING]
    problems = []
    if in_one_cluster is False:
        problems.append(
            TrainingProblem(
                LEAVES_CLUSTER,
                _(
                    "Multi-node training traffic is planned to leave one cluster: gradient "
                    "synchronisation must never cross the public network."
                ),
                "multi_node_training_in_one_cluster=False",
            )
        )
    for link in training:
        if link.link != IN_CLUSTER:
            problems.append(
                TrainingProblem(
                    TRAINING_LINK,
                    _(
                        "Multi-node training is linked over “%(link)s”: its traffic must stay "
                        "on the in-cluster network; only control and data planes cross the "
                        "internet."
                    )
                    % {
                        "link": link.get_link_display()
                        if hasattr(link, "get_link_display")
                        else link.link
                    },
                    f"{TRAINING}={link.link}",
                )
            )
    if training and in_one_cluster is None:
        problems.append(
            TrainingProblem(
                NOT_CONFIRMED,
                _("Multi-node training is in use: confirm its traffic stays inside one cluster."),
                "multi_node_training_in_one_cluster=None",
            )
        )
    return problems


def training_traffic_problems(*, in_one_cluster: bool | None, links: list[Any]) -> list[str]:
    """The sentences of ``training_traffic_findings``, as the plan's pages show them."""
    return [
        problem.message
        for problem in training_traffic_findings(in_one_cluster=in_one_cluster, links=links)
    ]


# --- The data paths against the data-export assessment (docs/rules/access.md#data-paths) ---
# What a workload link sends to the vendor (``WorkloadLink.data_sent``; None = not stated).
DATA_NONE = "none"  # control and results only, no data
DATA_DEIDENTIFIED = "deidentified"  # de-identified, synthetic or feature data only
DATA_RAW = "raw"  # raw data, which may hold personal information or important data
DATA_SENT_VALUES = (DATA_NONE, DATA_DEIDENTIFIED, DATA_RAW)
# The workloads that move data to the vendor: each must say what it sends. Online
# inference sends requests and gets answers back; it is held only when it says "raw".
DATA_MOVING_WORKLOADS = ("batch_inference", TRAINING, "data_sync")
# The derived constraint of the data-export assessment the paths are held against.
DATA_STAYS = "data_stays"

# Which of the data-path problems a finding is about (its key is ``<workload>:<problem>``).
RAW_SENT = "raw"
DATA_NOT_STATED = "not_stated"


@dataclass(frozen=True)
class DataPathProblem:
    """One link of the plan that sends, or may send, what the assessment keeps at home."""

    key: str  # "<workload>:raw" or "<workload>:not_stated"
    workload: str
    problem: str  # RAW_SENT or DATA_NOT_STATED
    message: str
    facts: str  # the values it was raised on


def _display(link: Any, name: str) -> str:
    getter = getattr(link, f"get_{name}_display", None)
    return str(getter()) if getter is not None else str(getattr(link, name))


def data_path_findings(*, data_stays: bool, links: list[Any]) -> list[DataPathProblem]:
    """docs/rules/access.md#data-paths: where the governing data-export assessment concludes
    that data may not leave (its derived constraints include "data_stays"), no link of the
    plan sends raw data, and every link of a workload that moves data says what it sends.
    None where data need not stay. ``links`` carry ``workload``, ``link`` and ``data_sent``
    (None or "" = not stated), in the plan's order."""
    if not data_stays:
        return []
    problems = []
    for link in links:
        sent = link.data_sent or None
        if sent == DATA_RAW:
            problem = RAW_SENT
            message = _(
                "%(workload)s over “%(link)s” sends raw data to the vendor, but the "
                "data-export assessment concludes that data may not leave: send only "
                "de-identified, synthetic or feature data over it, or nothing but control "
                "and results."
            )
        elif sent is None and link.workload in DATA_MOVING_WORKLOADS:
            problem = DATA_NOT_STATED
            message = _(
                "%(workload)s over “%(link)s” moves data to the vendor, and the plan does not "
                "say what it sends, while the data-export assessment concludes that data may "
                "not leave: state that it sends only de-identified, synthetic or feature data, "
                "or nothing but control and results."
            )
        else:
            continue
        problems.append(
            DataPathProblem(
                key=f"{link.workload}:{problem}",
                workload=link.workload,
                problem=problem,
                message=message
                % {"workload": _display(link, "workload"), "link": _display(link, "link")},
                facts=(
                    f"{DATA_STAYS}=True; {link.workload}: link={link.link}, "
                    f"data_sent={sent or DATA_NOT_STATED}"
                ),
            )
        )
    return problems


# --- Access controls (docs/rules/access.md#access-controls) ----------------------
# Approval needs every control in place with its evidence note, or its risk
# accepted by a tech lead with a reason and an expiry (docs/rules/access.md#access-controls,
# docs/rules/approvals.md).

# Each period a control runs on: (lowest, highest) accepted value.
PERIOD_BOUNDS = {
    "key_rotation_days": (1, 365),
    # A credential living longer than a week is not short-lived by any reading.
    "credential_lifetime_hours": (1, 168),
    "log_retention_days": (1, 3650),
}
# The control each period belongs to; in place, the control must state it.
CONTROL_PERIOD = {
    "key_rotation": "key_rotation_days",
    "short_lived_credentials": "credential_lifetime_hours",
    "audit_and_recording": "log_retention_days",
}
# "Keys rotated quarterly": a longer interval is not the control the guidance asks for.
KEY_ROTATION_MAX_DAYS = 90
# A risk is accepted for a bounded time, then judged again.
RISK_ACCEPTANCE_MAX_DAYS = 365

IN_PLACE = "in_place"
CONTROL_ABSENT = "absent"
CONTROL_NOT_IN_PLACE = "not_in_place"
CONTROL_NO_EVIDENCE = "no_evidence"
CONTROL_NO_PERIOD = "no_period"
CONTROL_ROTATION_TOO_LONG = "rotation_too_long"


def required_controls() -> tuple[tuple[str, str], ...]:
    """(key, title) of every control approval asks for, in the default order."""
    from apps.access.defaults import DEFAULT_CONTROLS

    return tuple((key, str(title)) for key, title in DEFAULT_CONTROLS)


def period_label(name: str) -> str:
    return {
        "key_rotation_days": _("key rotation interval (days)"),
        "credential_lifetime_hours": _("credential lifetime (hours)"),
        "log_retention_days": _("log retention (days)"),
    }[name]


@dataclass(frozen=True)
class ControlPeriods:
    key_rotation_days: int | None = None
    credential_lifetime_hours: int | None = None
    log_retention_days: int | None = None


@dataclass(frozen=True)
class ControlData:
    key: str
    title: str
    status: str
    status_label: str = ""
    evidence: str = ""
    risk_reason: str = ""
    risk_expires_on: date | None = None
    risk_accepted_by: str = ""

    @property
    def has_acceptance(self) -> bool:
        return bool(self.risk_reason.strip()) and self.risk_expires_on is not None


@dataclass(frozen=True)
class ControlGap:
    """One control that does not hold, and the sentence every reader of it sees."""

    key: str
    title: str
    problem: str
    message: str
    acceptance_expired_on: date | None = None


@dataclass(frozen=True)
class RiskAcceptance:
    key: str
    title: str
    accepted_by: str
    reason: str
    expires_on: date
    expired: bool
    message: str
    # The control is not in place as asked: approval rests on this acceptance.
    relied_on: bool = False


class ControlsState(NamedTuple):
    gaps: list[ControlGap]
    acceptances: list[RiskAcceptance]

    @property
    def holds(self) -> bool:
        return not self.gaps


def risk_acceptance_current(expires_on: date | None, today: date) -> bool:
    """An acceptance holds through its expiry day and lapses the day after."""
    return expires_on is not None and today <= expires_on


def control_problem(control: ControlData, periods: ControlPeriods) -> tuple[str, str] | None:
    """(problem, sentence) when the control is not in place as approval asks; else None."""
    if control.status != IN_PLACE:
        return CONTROL_NOT_IN_PLACE, _("not in place (%(status)s)") % {
            "status": control.status_label or control.status
        }
    if not control.evidence.strip():
        return CONTROL_NO_EVIDENCE, _("in place but without an evidence note")
    period = CONTROL_PERIOD.get(control.key)
    if period is None:
        return None
    value = getattr(periods, period)
    if value is None:
        return CONTROL_NO_PERIOD, _("in place but its %(period)s is not recorded") % {
            "period": period_label(period)
        }
    if period == "key_rotation_days" and value > KEY_ROTATION_MAX_DAYS:
        return CONTROL_ROTATION_TOO_LONG, _(
            "keys are rotated every %(days)s days; quarterly rotation means at most %(limit)s days"
        ) % {"days": value, "limit": KEY_ROTATION_MAX_DAYS}
    return None


def control_gap(control: ControlData, periods: ControlPeriods, today: date) -> ControlGap | None:
    """None when the control holds: in place as asked, or its risk accepted until today or later."""
    if control.has_acceptance and risk_acceptance_current(control.risk_expires_on, today):
        return None
    found = control_problem(control, periods)
    if found is None:
        return None
    problem, sentence = found
    message = _("%(title)s — %(problem)s") % {"title": control.title, "problem": sentence}
    expired_on = control.risk_expires_on if control.has_acceptance else None
    if expired_on is not None:
        message = _("%(gap)s; its risk acceptance expired on %(date)s") % {
            "gap": message,
            "date": expired_on.isoformat(),
        }
    return ControlGap(control.key, control.title, problem, message, expired_on)


def risk_acceptance(
    control: ControlData, periods: ControlPeriods, today: date
) -> RiskAcceptance | None:
    if not control.has_acceptance:
        return None
    assert control.risk_expires_on is not None  # has_acceptance says so
    expired = not risk_acceptance_current(control.risk_expires_on, today)
    parts = {
        "title": control.title,
        "who": control.risk_accepted_by or "?",
        "date": control.risk_expires_on.isoformat(),
        "reason": control.risk_reason.strip(),
    }
    if expired:
        message = _("%(title)s — risk acceptance by %(who)s expired on %(date)s: %(reason)s")
    else:
        message = _("%(title)s — risk accepted by %(who)s until %(date)s: %(reason)s")
    return RiskAcceptance(
        key=control.key,
        title=control.title,
        accepted_by=control.risk_accepted_by,
        reason=control.risk_reason.strip(),
        expires_on=control.risk_expires_on,
        expired=expired,
        message=message % parts,
        relied_on=control_problem(control, periods) is not None,
    )


def controls_state(
    controls: list[ControlData],
    periods: ControlPeriods,
    today: date,
    required: tuple[tuple[str, str], ...] | None = None,
) -> ControlsState:
    """Every control that does not hold (a required one absent included), and every
    recorded risk acceptance, in the matrix's order."""
    required = required_controls() if required is None else required
    present = {c.key for c in controls}
    gaps = [gap for c in controls if (gap := control_gap(c, periods, today)) is not None]
    gaps += [
        ControlGap(
            key,
            title,
            CONTROL_ABSENT,
            _("%(title)s — not recorded in the matrix") % {"title": title},
        )
        for key, title in required
        if key not in present
    ]
    acceptances = [a for c in controls if (a := risk_acceptance(c, periods, today)) is not None]
    return ControlsState(gaps, acceptances)


# The single audited entry point with MFA (docs/rules/access.md#access-controls).
ENTRY_MFA = "mfa_entry"


@dataclass(frozen=True)
class EntryMfaAcceptance:
    """The entry point's MFA not in place, carried by a tech lead's risk acceptance alone."""

    acceptance: RiskAcceptance
    status: str
    problem: str
    message: str
    facts: str  # the control and the acceptance it was raised on


def entry_mfa_acceptance(
    controls: list[ControlData], periods: ControlPeriods, today: date
) -> EntryMfaAcceptance | None:
    """docs/rules/access.md#access-controls: when the single entry point's MFA is not in
    place as asked and approval rests on a tech lead's acceptance of that risk, the
    acceptance alone does not carry it; None otherwise (in place, or its acceptance
    expired: then the control is a gap of the access gate anyway)."""
    control = next((c for c in controls if c.key == ENTRY_MFA), None)
    if control is None:
        return None
    acceptance = risk_acceptance(control, periods, today)
    found = control_problem(control, periods)
    if acceptance is None or acceptance.expired or found is None:
        return None
    problem, sentence = found
    message = _(
        "%(title)s is %(problem)s and rests only on the risk accepted by %(who)s until "
        "%(date)s: the single entry point guards the data as much as the machines, so legal "
        "must accept this risk too."
    ) % {
        "title": control.title,
        "problem": sentence,
        "who": acceptance.accepted_by or "?",
        "date": acceptance.expires_on.isoformat(),
    }
    facts = "; ".join(
        (
            f"{control.key}: status={control.status}",
            f"problem={problem}",
            f"accepted_by={acceptance.accepted_by}",
            f"until={acceptance.expires_on.isoformat()}",
            f"reason={acceptance.reason}",
        )
    )
    return EntryMfaAcceptance(acceptance, control.status, problem, message, facts)


def period_errors(periods: dict[str, Any]) -> dict[str, str]:
    """Each period given must be a whole number within its bounds; None clears it."""
    errors = {}
    for name, value in periods.items():
        if name not in PERIOD_BOUNDS:
            errors[name] = _("This field cannot be set here.")
            continue
        if value is None:
            continue
        low, high = PERIOD_BOUNDS[name]
        if isinstance(value, bool) or not isinstance(value, int):
            errors[name] = _("Enter a whole number.")
        elif not low <= value <= high:
            errors[name] = _("Enter a whole number from %(low)s to %(high)s.") % {
                "low": low,
                "high": high,
            }
    return errors


def risk_acceptance_errors(
    *, control: ControlData, periods: ControlPeriods, reason: str, expires_on: Any, today: date
) -> dict[str, str]:
    """Why a tech lead's acceptance of this control's risk cannot be recorded as given."""
    errors = {}
    if control_problem(control, periods) is None:
        errors["control"] = _(
            "This control is in place with its evidence: there is no risk to accept."
        )
    if not (reason or "").strip():
        errors["reason"] = _("Say why the risk is accepted.")
    if not isinstance(expires_on, date) or isinstance(expires_on, datetime):
        errors["expires_on"] = _("Give the date the acceptance ends.")
    elif expires_on <= today:
        errors["expires_on"] = _("The acceptance must end after today.")
    elif expires_on > today + timedelta(days=RISK_ACCEPTANCE_MAX_DAYS):
        errors["expires_on"] = _(
            "A risk is accepted for at most %(n)s days; accept it again when it ends."
        ) % {"n": RISK_ACCEPTANCE_MAX_DAYS}
    return errors

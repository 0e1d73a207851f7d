"""Pure rules of the access matrix and the network plan, on plain data.

Segregation of duties and the quarterly review follow DESIGN §2.6 (seed 000
§5); the latency budget and the training-traffic rule follow DESIGN §2.6b
(seed 000 §4). The approval gates, the packet and the pages all call these.
"""

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, NamedTuple

from django.utils.translation import gettext as _

# Seed 000 §5: keys are rotated quarterly, and the permission review with them.
REVIEW_INTERVAL = timedelta(days=90)
# Seed 000 §4: user request → access gateway ≤ 10 ms.
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
    """The online-inference latency budget of seed 000 §4, in milliseconds."""

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
    """User → gateway + one measured RTT + queueing and first token, against the target.

    ``plan`` is anything with ``target_latency_ms``, ``user_to_gateway_ms``,
    ``measured_rtt_ms`` and ``queueing_and_first_token_ms`` (None = not stated).
    The RTT share is taken of the target: that is the budget being spent.
    """
    target = Decimal(plan.target_latency_ms)
    parts = {
        "user_to_gateway_ms": plan.user_to_gateway_ms,
        "measured_rtt_ms": plan.measured_rtt_ms,
        "queueing_and_first_token_ms": plan.queueing_and_first_token_ms,
    }
    missing = tuple(name for name, value in parts.items() if value is None)
    gateway = plan.user_to_gateway_ms
    rtt = plan.measured_rtt_ms
    gateway_over = gateway is not None and Decimal(gateway) > USER_TO_GATEWAY_LIMIT_MS
    share = (Decimal(rtt) / target) if rtt is not None and target > 0 else None
    # Seed 000 §4: "over half" — an RTT of exactly half the budget still passes.
    over_half = rtt is not None and Decimal(rtt) * 2 > target
    total = None if missing else sum((Decimal(v) for v in parts.values()), Decimal(0))
    over = total is not None and total > target
    advice = []
    if over_half:
        # over_half needs an RTT, and a plan's target is at least 1 ms (model validator).
        assert share is not None
        advice.append(
            _(
                "The measured RTT alone takes %(share)s %% of the %(target)s ms budget: serve "
                "from a region closer to the users instead of squeezing the model."
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


TRAINING = "multi_node_training"
IN_CLUSTER = "in_cluster_rdma"


def training_traffic_problems(*, in_one_cluster: bool | None, links: list[Any]) -> list[str]:
    """Seed 000 §4: gradient traffic stays inside one cluster; only control and data planes
    cross the public network. ``links`` carry ``workload`` and ``link``."""
    training = [link for link in links if link.workload == TRAINING]
    problems = []
    if in_one_cluster is False:
        problems.append(
            _(
                "Multi-node training traffic is planned to leave one cluster: gradient "
                "synchronisation must never cross the public network."
            )
        )
    for link in training:
        if link.link != IN_CLUSTER:
            problems.append(
                _(
                    "Multi-node training is linked over “%(link)s”: its traffic must stay on "
                    "the in-cluster network; only control and data planes cross the internet."
                )
                % {
                    "link": link.get_link_display()
                    if hasattr(link, "get_link_display")
                    else link.link
                }
            )
    if training and in_one_cluster is None:
        problems.append(
            _("Multi-node training is in use: confirm its traffic stays inside one cluster.")
        )
    return problems

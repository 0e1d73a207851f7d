"""Reads of access matrices and network plans, in a fixed number of queries."""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from django.utils import timezone

from apps.access.models import (
    AccessControl,
    AccessGrant,
    AccessMatrix,
    AccessPermission,
    AccessRole,
    NetworkPlan,
    WorkloadLink,
)
from apps.access.rules import (
    CONTROL_PERIOD,
    Budget,
    ControlGap,
    ControlsState,
    MatrixState,
    controls_state,
    latency_budget,
    matrix_state,
    period_label,
    training_traffic_problems,
)
from apps.cases.reads import shared_read


@shared_read
def access_matrix_of(case) -> AccessMatrix | None:
    """The case's matrix with every row, column, cell and control loaded (5 queries)."""
    controls = AccessControl.objects.select_related("risk_accepted_by")
    return (
        AccessMatrix.objects.filter(case=case)
        .select_related("reviewed_by")
        .prefetch_related("roles__grants", "permissions", Prefetch("controls", controls))
        .first()
    )


def access_matrix_state(case, today: date | None = None) -> MatrixState | None:
    """What the approval gate asks of the case's matrix; None when there is none yet."""
    matrix = access_matrix_of(case)
    if matrix is None:
        return None
    return matrix_state(matrix, today or timezone.localdate())


def access_control_of(case, key: str) -> AccessControl:
    """One control of the case's matrix by its key; 404 when there is none."""
    return get_object_or_404(
        AccessControl.objects.select_related("matrix", "risk_accepted_by"),
        matrix__case=case,
        key=key,
    )


def access_controls_state(matrix: AccessMatrix, today: date) -> ControlsState:
    """Which controls do not hold, and every risk accepted, as the approval gate reads them."""
    return controls_state(matrix.controls_data(), matrix.periods(), today)


@dataclass(frozen=True)
class ControlRow:
    """A control as a page shows it: its record, the period it runs on, why it does not hold."""

    control: AccessControl
    period_label: str
    period: int | None
    gap: ControlGap | None
    acceptance_current: bool


@dataclass
class MatrixView:
    """A matrix laid out for a page: rows of cells with their faults."""

    matrix: AccessMatrix
    state: MatrixState
    roles: list[AccessRole]
    permissions: list[AccessPermission]
    rows: list[tuple[AccessRole, list[dict]]]
    controls: list[AccessControl]
    controls_state: ControlsState
    control_rows: list[ControlRow]

    @property
    def control_gaps(self) -> list[ControlGap]:
        return self.controls_state.gaps


def matrix_view(matrix: AccessMatrix, today: date | None = None) -> MatrixView:
    today = today or timezone.localdate()
    state = matrix_state(matrix, today)
    faults: dict[tuple[str, str], list[str]] = {}
    for violation in state.violations:
        for cell in violation.cells:
            faults.setdefault(cell, []).append(violation.message)
    roles = sorted(matrix.roles.all(), key=lambda r: (r.position, r.pk))
    permissions = sorted(matrix.permissions.all(), key=lambda p: (p.position, p.pk))
    rows = []
    for role in roles:
        grants: dict[int, AccessGrant] = {g.permission_id: g for g in role.grants.all()}
        rows.append(
            (
                role,
                [
                    {
                        "permission": permission,
                        "grant": grants.get(permission.pk),
                        "faults": faults.get((role.key, permission.key), []),
                    }
                    for permission in permissions
                ],
            )
        )
    controls = sorted(matrix.controls.all(), key=lambda c: (c.position, c.pk))
    checked = access_controls_state(matrix, today)
    gaps = {gap.key: gap for gap in checked.gaps}
    current = {a.key for a in checked.acceptances if not a.expired}
    control_rows = []
    for control in controls:
        period = CONTROL_PERIOD.get(control.key)
        control_rows.append(
            ControlRow(
                control=control,
                period_label=period_label(period) if period else "",
                period=getattr(matrix, period) if period else None,
                gap=gaps.get(control.key),
                acceptance_current=control.key in current,
            )
        )
    return MatrixView(
        matrix=matrix,
        state=state,
        roles=roles,
        permissions=permissions,
        rows=rows,
        controls=controls,
        controls_state=checked,
        control_rows=control_rows,
    )


def network_plan_of(case) -> NetworkPlan | None:
    """The case's network plan with its workload links (2 queries)."""
    plan = NetworkPlan.objects.filter(case=case).prefetch_related("links").first()
    if plan is not None:
        plan.case = case  # already loaded: spares a query on every page that shows the plan
    return plan


@dataclass(frozen=True)
class MeasuredRtt:
    rtt_ms: Decimal
    source: str


def network_plan_rtt(case, plan: NetworkPlan | None = None) -> MeasuredRtt | None:
    """The RTT gateway → remote service that the latency budget uses.

    Today it is the value entered by hand on the plan with its stated source.
    Once harness evidence exists, the evidence app records its network-probe
    RTT through ``services.network_plan_rtt_record`` (or this function reads
    it first); every budget computed on a page, in the API or in a packet
    goes through here.
    """
    plan = plan if plan is not None else NetworkPlan.objects.filter(case=case).first()
    if plan is None or plan.measured_rtt_ms is None:
        return None
    return MeasuredRtt(rtt_ms=plan.measured_rtt_ms, source=plan.rtt_source)


@dataclass(frozen=True)
class _BudgetInputs:
    target_latency_ms: Decimal
    user_to_gateway_ms: Decimal | None
    measured_rtt_ms: Decimal | None
    queueing_and_first_token_ms: Decimal | None


def network_plan_budget(plan: NetworkPlan) -> Budget:
    rtt = network_plan_rtt(plan.case, plan)
    return latency_budget(
        _BudgetInputs(
            target_latency_ms=plan.target_latency_ms,
            user_to_gateway_ms=plan.user_to_gateway_ms,
            measured_rtt_ms=rtt.rtt_ms if rtt else None,
            queueing_and_first_token_ms=plan.queueing_and_first_token_ms,
        )
    )


@dataclass
class PlanView:
    plan: NetworkPlan
    budget: Budget
    links: list[WorkloadLink]
    training_problems: list[str]
    rtt: MeasuredRtt | None


def plan_view(plan: NetworkPlan) -> PlanView:
    links = list(plan.links.all())
    return PlanView(
        plan=plan,
        budget=network_plan_budget(plan),
        links=links,
        training_problems=training_traffic_problems(
            in_one_cluster=plan.multi_node_training_in_one_cluster, links=links
        ),
        rtt=network_plan_rtt(plan.case, plan),
    )


def access_history_querysets(case) -> list:
    """History of the case's access matrix and network plan, removed rows included.

    Filters on ids rather than joins, so rows whose parent was deleted since
    (a removed role's grants) still show.
    """
    matrices = AccessMatrix.history.filter(case_id=case.pk).values("id")
    roles = AccessRole.history.filter(matrix_id__in=matrices).values("id")
    plans = NetworkPlan.history.filter(case_id=case.pk).values("id")
    return [
        AccessMatrix.history.filter(case_id=case.pk),
        AccessRole.history.filter(matrix_id__in=matrices),
        AccessPermission.history.filter(matrix_id__in=matrices),
        AccessGrant.history.filter(role_id__in=roles),
        AccessControl.history.filter(matrix_id__in=matrices),
        NetworkPlan.history.filter(case_id=case.pk),
        WorkloadLink.history.filter(plan_id__in=plans),
    ]


# The name every app uses for the case timeline (apps.cases.selectors).
case_history_querysets = access_history_querysets

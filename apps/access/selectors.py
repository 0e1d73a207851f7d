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
    FROM_GATEWAY,
    FROM_MACHINE,
    MEASURED,
    Budget,
    ControlGap,
    ControlsState,
    Leg,
    MatrixState,
    OfferBudget,
    controls_state,
    latency_budget,
    leg_of,
    matrix_state,
    offer_budget,
    period_label,
    training_traffic_problems,
)
from apps.core.reads import shared_read
from apps.evidence.composition import measured_at
from apps.evidence.models import EvidenceBundle, SpecVerification
from apps.evidence.rules.composition import GATEWAY, LOADTEST, NETPROBE


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


def network_plans_of_cases(case_ids) -> dict[int, NetworkPlan]:
    """The network plan of each of many cases that has one, with its links (2 queries)."""
    plans = NetworkPlan.objects.filter(case_id__in=list(case_ids)).prefetch_related("links")
    return {plan.case_id: plan for plan in plans}


def access_matrices_of_cases(case_ids) -> dict[int, AccessMatrix]:
    """The access matrix of each of many cases that has one, with its controls (2 queries):
    what the areas' findings read of it."""
    controls = AccessControl.objects.select_related("risk_accepted_by")
    matrices = AccessMatrix.objects.filter(case_id__in=list(case_ids)).prefetch_related(
        Prefetch("controls", controls)
    )
    return {matrix.case_id: matrix for matrix in matrices}


def network_plan_of(case) -> NetworkPlan | None:
    """The case's network plan with its workload links (2 queries)."""
    plan = NetworkPlan.objects.filter(case=case).prefetch_related("links").first()
    if plan is not None:
        plan.case = case  # already loaded: spares a query on every page that shows the plan
    return plan


@dataclass(frozen=True)
class _EstimateInputs:
    target_latency_ms: Decimal
    user_to_gateway_ms: Decimal | None
    rtt_ms: Decimal | None
    queueing_and_first_token_ms: Decimal | None


def estimate_budget(plan: NetworkPlan) -> Budget:
    """The budget on the plan's typed values alone: every leg an estimate."""
    return latency_budget(
        _EstimateInputs(
            target_latency_ms=plan.target_latency_ms,
            user_to_gateway_ms=plan.user_to_gateway_ms,
            rtt_ms=plan.estimated_rtt_ms,
            queueing_and_first_token_ms=plan.queueing_and_first_token_ms,
        )
    )


def _decimal(value) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return Decimal(str(value)).quantize(Decimal("0.1"))


def rtt_of_summary(
    summary: dict, section: str = GATEWAY
) -> tuple[str, Decimal, Decimal | None, int] | None:
    """The probed host with the slowest median RTT in a bundle's network section (the
    gateway probe's, or the rented machine's ``netprobe``), with its median, 95th
    percentile and number of connects; None when the bundle probed nothing."""
    probes = [
        p
        for p in (summary or {}).get(section) or []
        if isinstance(p, dict)
        and isinstance(p.get("rtt_ms"), dict)
        and p["rtt_ms"].get("n")
        and _decimal(p["rtt_ms"].get("p50")) is not None
    ]
    if not probes:
        return None
    worst = max(probes, key=lambda p: p["rtt_ms"]["p50"])
    rtt = worst["rtt_ms"]
    median = _decimal(rtt["p50"])
    assert median is not None
    # Too few connects for a defensible 95th percentile: it is not shown.
    p95 = None if "p95" in (rtt.get("insufficient") or ()) else _decimal(rtt.get("p95"))
    return str(worst.get("host") or ""), median, p95, int(rtt["n"])


@dataclass(frozen=True)
class OfferMeasurements:
    rtt: Leg | None = None  # from the gateway: the hop gateway → remote service
    queueing: Leg | None = None
    machine_rtt: Leg | None = None  # from the rented machine: shown, never the hop


def offer_measurements(case) -> dict[int, OfferMeasurements]:
    """Per offer of the case, the RTT and first-token time its evidence measured (3 queries).

    Each comes from the offer's newest composed verification: the round trip from the
    newest gateway bundle (docs/rules/access.md#latency-budget), the first-token time from
    the newest load test. The rented machine's own probe is read too, labelled so: it never
    fills the gateway → remote service hop.
    """
    latest: dict[int, SpecVerification] = {}
    rows = (
        SpecVerification.objects.filter(offer__case=case)
        .only("offer_id", "bundle_id", "sources", "headline", "created_at")
        .order_by("-created_at", "-pk")
    )
    for verification in rows:
        if verification.offer_id is not None:
            latest.setdefault(verification.offer_id, verification)

    def source(verification: SpecVerification, part: str) -> int | None:
        if verification.sources is None:  # recorded before composition: its bundle alone
            return verification.bundle_id
        found = verification.sources.get(part)
        return found.get("bundle") if isinstance(found, dict) else None

    parts = (GATEWAY, NETPROBE, LOADTEST)
    wanted = {source(v, part) for v in latest.values() for part in parts}
    bundles = {
        b.pk: b
        for b in EvidenceBundle.objects.filter(pk__in=[pk for pk in wanted if pk]).only(
            "pk", "sha256", "summary", "run_finished_at", "received_at", "demo_note"
        )
    }

    def measured_leg(bundle, ms, **extra) -> Leg:
        return Leg(
            ms=ms,
            kind=MEASURED,
            bundle=bundle.pk,
            bundle_label=bundle.sha256[:12],
            measured_at=measured_at(bundle),
            demo=bool(bundle.demo_note),
            **extra,
        )

    def probed_leg(verification, part: str, origin: str) -> Leg | None:
        network = bundles.get(source(verification, part) or 0)
        probed = rtt_of_summary(network.summary, part) if network is not None else None
        if network is None or probed is None:
            return None
        host, median, p95, samples = probed
        return measured_leg(
            network, median, p95_ms=p95, target=host, samples=samples, origin=origin
        )

    found: dict[int, OfferMeasurements] = {}
    for offer_id, verification in latest.items():
        queueing = None
        # Only a gateway bundle carries a "gateway" section: a verification recorded before
        # composition names its own bundle for every part, and its netprobe is not read here.
        rtt = probed_leg(verification, GATEWAY, FROM_GATEWAY)
        machine_rtt = probed_leg(verification, NETPROBE, FROM_MACHINE)
        load = bundles.get(source(verification, LOADTEST) or 0)
        ttft = _decimal((verification.headline or {}).get("ttft_p50_ms_lowest_level"))
        if load is not None and ttft is not None:
            queueing = measured_leg(load, ttft)
        found[offer_id] = OfferMeasurements(rtt=rtt, queueing=queueing, machine_rtt=machine_rtt)
    return found


def offer_budgets(plan: NetworkPlan) -> list[OfferBudget]:
    """Every offer's latency budget: measured legs where the evidence has them, the plan's
    estimates elsewhere (4 queries)."""
    # Only each offer's name is shown: the case's own relation, no spec status worked out.
    offers = plan.case.offers.select_related("vendor")
    measurements = offer_measurements(plan.case)
    budgets = []
    for offer in offers:
        measured = measurements.get(offer.pk, OfferMeasurements())
        budgets.append(
            offer_budget(
                offer_id=offer.pk,
                offer=str(offer),
                target_latency_ms=plan.target_latency_ms,
                user_to_gateway_ms=plan.user_to_gateway_ms,
                rtt=leg_of(measured.rtt, plan.estimated_rtt_ms),
                queueing=leg_of(measured.queueing, plan.queueing_and_first_token_ms),
                machine_rtt=measured.machine_rtt,
            )
        )
    return budgets


@dataclass
class PlanView:
    plan: NetworkPlan
    budget: Budget  # on the plan's estimates alone
    offers: list[OfferBudget]
    links: list[WorkloadLink]
    training_problems: list[str]


def plan_view(plan: NetworkPlan) -> PlanView:
    links = list(plan.links.all())
    return PlanView(
        plan=plan,
        budget=estimate_budget(plan),
        offers=offer_budgets(plan),
        links=links,
        training_problems=training_traffic_problems(
            in_one_cluster=plan.multi_node_training_in_one_cluster, links=links
        ),
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

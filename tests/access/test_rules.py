"""SoD, review-by and latency-budget rules (docs/rules/access.md)."""

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from apps.access.defaults import default_matrix_payload
from apps.access.rules import (
    AUDIT_ROLE_WRITE,
    CLUSTER_ADMIN_WITH_DATA_WRITE,
    ESTIMATE,
    GRANT_WITHOUT_JUSTIFICATION,
    INCOMPLETE,
    MEASURED,
    OVER_TARGET,
    ROLE_HOLDS_EVERY_PERMISSION,
    RTT_OVER_HALF,
    UNKNOWN,
    WITHIN_TARGET,
    GrantData,
    Leg,
    MatrixData,
    PermissionData,
    RoleData,
    latency_budget,
    leg_of,
    matrix_state,
    offer_budget,
    review_by_after,
    review_expired,
    sod_violations,
    training_traffic_problems,
)


def default_matrix() -> MatrixData:
    payload = default_matrix_payload()
    return MatrixData(
        roles=tuple(RoleData(r["key"], r["name"], r["is_audit_role"]) for r in payload["roles"]),
        permissions=tuple(
            PermissionData(p["key"], p["name"], p["is_write"], p["kind"])
            for p in payload["permissions"]
        ),
        grants=tuple(GrantData(**g) for g in payload["grants"]),
    )


def with_grants(matrix: MatrixData, *grants: GrantData) -> MatrixData:
    return replace(matrix, grants=matrix.grants + grants)


def found(matrix: MatrixData) -> list[tuple]:
    return [(v.rule, v.role, v.permission) for v in sod_violations(matrix)]


def test_the_seed_default_matrix_breaks_no_rule():
    assert sod_violations(default_matrix()) == []


def test_an_emptied_justification_becomes_a_violation_of_that_cell():
    matrix = default_matrix()
    grants = tuple(
        replace(g, justification="   ")
        if (g.role, g.permission) == ("data_engineer", "data_write")
        else g
        for g in matrix.grants
    )
    violations = sod_violations(replace(matrix, grants=grants))
    assert [(v.rule, v.role, v.permission) for v in violations] == [
        (GRANT_WITHOUT_JUSTIFICATION, "data_engineer", "data_write")
    ]
    assert violations[0].cells == (("data_engineer", "data_write"),)
    assert "without a justification" in violations[0].message


def test_a_newly_added_role_holding_every_permission_is_flagged_with_its_whole_row():
    matrix = default_matrix()
    matrix = replace(matrix, roles=matrix.roles + (RoleData("sre_oncall", "SRE on call"),))
    matrix = with_grants(
        matrix, *(GrantData("sre_oncall", p.key, "Pager duty") for p in matrix.permissions)
    )
    violations = sod_violations(matrix)
    rules = [(v.rule, v.role, v.permission) for v in violations]
    assert (ROLE_HOLDS_EVERY_PERMISSION, "sre_oncall", None) in rules
    every = next(v for v in violations if v.rule == ROLE_HOLDS_EVERY_PERMISSION)
    assert every.cells == tuple(("sre_oncall", p.key) for p in matrix.permissions)
    # Holding cluster admin and data write together is its own violation too.
    assert (CLUSTER_ADMIN_WITH_DATA_WRITE, "sre_oncall", "data_write") in rules


@pytest.mark.parametrize(
    "permission,is_violation",
    [
        ("cluster_admin", True),
        ("job_submit", True),
        ("data_write", True),
        ("data_read", False),
        ("log_view", False),
    ],
)
def test_an_audit_role_may_hold_no_write(permission, is_violation):
    matrix = with_grants(default_matrix(), GrantData("audit_compliance", permission, "Asked"))
    expected = [(AUDIT_ROLE_WRITE, "audit_compliance", permission)] if is_violation else []
    assert [f for f in found(matrix) if f[0] == AUDIT_ROLE_WRITE] == expected


def test_audit_writes_follow_the_flag_not_the_name():
    matrix = default_matrix()
    matrix = replace(
        matrix,
        roles=matrix.roles + (RoleData("internal_audit", "Internal audit", is_audit_role=True),),
        permissions=matrix.permissions
        + (PermissionData("ticket_write", "Ticket write", True, "other"),),
    )
    matrix = with_grants(matrix, GrantData("internal_audit", "ticket_write", "Files findings"))
    assert found(matrix) == [(AUDIT_ROLE_WRITE, "internal_audit", "ticket_write")]


def test_cluster_admin_with_data_write_names_both_cells():
    matrix = with_grants(
        default_matrix(), GrantData("platform_admin", "data_write", "Restores backups")
    )
    violations = sod_violations(matrix)
    assert [(v.rule, v.role, v.permission) for v in violations] == [
        (CLUSTER_ADMIN_WITH_DATA_WRITE, "platform_admin", "data_write")
    ]
    assert violations[0].cells == (
        ("platform_admin", "cluster_admin"),
        ("platform_admin", "data_write"),
    )


def test_cluster_admin_with_a_second_data_write_permission_is_flagged_per_permission():
    matrix = default_matrix()
    matrix = replace(
        matrix,
        permissions=matrix.permissions
        + (PermissionData("bucket_write", "Bucket write", True, "data_write"),),
    )
    matrix = with_grants(matrix, GrantData("platform_admin", "bucket_write", "Uploads images"))
    assert found(matrix) == [(CLUSTER_ADMIN_WITH_DATA_WRITE, "platform_admin", "bucket_write")]


def test_a_single_permission_matrix_has_no_every_permission_violation():
    matrix = MatrixData(
        roles=(RoleData("ops", "Ops"),),
        permissions=(PermissionData("log_view", "Log view", False, "log_view"),),
        grants=(GrantData("ops", "log_view", "On call"),),
    )
    assert sod_violations(matrix) == []


def test_grants_to_unknown_rows_or_columns_are_ignored_by_the_rules():
    matrix = with_grants(default_matrix(), GrantData("ghost", "cluster_admin", ""))
    assert sod_violations(matrix) == []


@pytest.mark.parametrize(
    "today,expired",
    [
        (date(2026, 1, 1), False),
        (date(2026, 4, 1), False),  # the review-by day itself: still valid
        (date(2026, 4, 2), True),  # the day after: expired
    ],
)
def test_review_by_is_ninety_days_after_the_review(today, expired):
    # 1 January + 90 days (31 + 28 + 31) = 1 April 2026.
    review_by = review_by_after(date(2026, 1, 1))
    assert review_by == date(2026, 4, 1)
    assert review_expired(review_by, today) is expired


def test_a_never_reviewed_matrix_is_not_expired_but_not_reviewed_either():
    assert review_expired(None, date(2030, 1, 1)) is False


def test_matrix_state_reports_reviewed_expired_and_violations():
    reviewed = replace(
        default_matrix(),
        reviewed_at=datetime(2026, 1, 1, 9, tzinfo=UTC),
        review_by=date(2026, 4, 1),
    )
    assert matrix_state(reviewed, date(2026, 2, 1)) == (True, False, [])
    assert matrix_state(reviewed, date(2026, 2, 1)).holds
    reviewed_late, expired, violations = matrix_state(reviewed, date(2026, 4, 2))
    assert (reviewed_late, expired, violations) == (True, True, [])
    never = default_matrix()
    assert matrix_state(never, date(2026, 2, 1)) == (False, False, [])
    assert not matrix_state(never, date(2026, 2, 1)).holds


@dataclass
class Plan:
    target_latency_ms: Decimal | int
    user_to_gateway_ms: Decimal | int | None
    rtt_ms: Decimal | int | None
    queueing_and_first_token_ms: Decimal | int | None


@pytest.mark.parametrize(
    "plan,total,over_target,over_half,share",
    [
        # RTT exactly half the 400 ms budget: not "over half" (docs/rules/access.md#latency-budget).
        (Plan(400, 10, 200, 190), 400, False, False, Decimal("0.5")),
        # One millisecond more RTT: over half, and over target.
        (Plan(400, 10, 201, 190), 401, True, True, Decimal("0.5025")),
        # Over target with a small RTT: the model side is what to shorten.
        (Plan(400, 8, 60, 380), 448, True, False, Decimal("0.15")),
        # Within target but the RTT eats most of it.
        (Plan(1000, 5, 600, 100), 705, False, True, Decimal("0.6")),
    ],
)
def test_latency_budget(plan, total, over_target, over_half, share):
    budget = latency_budget(plan)
    assert budget.total == total
    assert budget.over_target is over_target
    assert budget.rtt_over_half is over_half
    assert budget.rtt_share == share
    assert budget.complete


def test_rtt_over_half_advises_serving_closer_to_users():
    budget = latency_budget(Plan(400, 8, 210, 260))
    assert budget.over_target and budget.rtt_over_half
    assert len(budget.advice) == 1
    assert "closer to the users" in budget.advice[0]
    assert "52.5 %" in budget.advice[0]


def test_over_target_without_a_long_rtt_advises_the_model_side():
    budget = latency_budget(Plan(400, 8, 60, 380))
    assert budget.advice == (
        "The budget is 48 ms over target: shorten queueing and first-token time "
        "(replicas, warm-up, batching limits) or revisit the target.",
    )


def test_gateway_leg_over_ten_ms_is_flagged():
    assert latency_budget(Plan(400, 10, 100, 100)).gateway_over_limit is False
    budget = latency_budget(Plan(400, Decimal("10.5"), 100, 100))
    assert budget.gateway_over_limit
    assert "at most 10 ms" in budget.advice[0]


def test_a_budget_without_an_rtt_is_incomplete():
    budget = latency_budget(Plan(400, 8, None, 200))
    assert budget.total is None
    assert budget.missing == ("rtt_ms",)
    assert not budget.over_target and not budget.rtt_over_half


# --- Per offer: measured legs, else the plan's estimates -------------------

WHEN = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def probed(ms, p95=None) -> Leg:
    return Leg(
        ms=Decimal(ms),
        kind=MEASURED,
        p95_ms=None if p95 is None else Decimal(p95),
        bundle=7,
        bundle_label="3f2a9c1e2b4d",
        measured_at=WHEN,
        target="api.vendor.example:443",
        samples=130,
    )


@pytest.mark.parametrize(
    "measured,estimate,kind,ms",
    [
        (probed(118), Decimal("210"), MEASURED, Decimal("118")),  # measured wins
        (None, Decimal("210"), ESTIMATE, Decimal("210")),  # no measurement: the estimate
        (Leg(ms=None, kind=MEASURED), 210, ESTIMATE, Decimal("210")),  # an empty one too
        (None, None, UNKNOWN, None),  # neither
        (probed(0), None, MEASURED, Decimal("0")),  # a measured 0 ms is a value
    ],
)
def test_leg_of(measured, estimate, kind, ms):
    leg = leg_of(measured, estimate)
    assert (leg.kind, leg.ms) == (kind, ms)
    assert leg.measured is (kind == MEASURED) and leg.estimate is (kind == ESTIMATE)


@pytest.mark.parametrize(
    "gateway,rtt,queueing,verdict,total,over_target",
    [
        # Measured RTT exactly half the 400 ms budget: not over half.
        (0, probed(200), probed(200), WITHIN_TARGET, 400, False),
        # A tenth of a millisecond more: over half, which is the verdict.
        (0, probed("200.1"), probed(100), RTT_OVER_HALF, Decimal("300.1"), False),
        # The same boundary on an estimate.
        (8, leg_of(None, 200), leg_of(None, 192), WITHIN_TARGET, 400, False),
        (8, leg_of(None, 201), leg_of(None, 100), RTT_OVER_HALF, 309, False),
        # Over target with a short RTT.
        (8, probed(118), leg_of(None, 300), OVER_TARGET, 426, True),
        # No RTT measured and no estimate: incomplete, never within target.
        (8, leg_of(None, None), probed(100), INCOMPLETE, None, False),
        # No first-token time at all: incomplete, though the RTT alone is known.
        (8, probed(150), leg_of(None, None), INCOMPLETE, None, False),
        # Over half wins over incomplete: the remedy does not depend on the rest.
        (8, probed(250), leg_of(None, None), RTT_OVER_HALF, None, False),
    ],
)
def test_offer_budget(gateway, rtt, queueing, verdict, total, over_target):
    row = offer_budget(
        offer_id=3,
        offer="Aurora",
        target_latency_ms=400,
        user_to_gateway_ms=gateway,
        rtt=rtt,
        queueing=queueing,
    )
    assert row.verdict == verdict
    assert row.budget.total == total and row.budget.over_target is over_target
    assert row.rtt is rtt and row.queueing is queueing
    assert row.measured is rtt.measured


def test_offer_budget_verdict_labels_and_advice():
    over_half = offer_budget(
        offer_id=1,
        offer="Cumulus",
        target_latency_ms=400,
        user_to_gateway_ms=8,
        rtt=probed(231),
        queueing=leg_of(None, 260),
    )
    assert over_half.verdict_label == "RTT over half the budget"
    assert over_half.budget.over_target
    assert "57.8 %" in over_half.budget.advice[0]
    assert "closer to the users" in over_half.budget.advice[0]


@dataclass
class Link:
    workload: str
    link: str


@pytest.mark.parametrize(
    "in_one_cluster,links,problems",
    [
        (True, [Link("multi_node_training", "in_cluster_rdma")], 0),
        (None, [Link("online_inference", "encrypted_tunnel")], 0),
        (None, [Link("multi_node_training", "in_cluster_rdma")], 1),  # not confirmed
        (True, [Link("multi_node_training", "public_internet")], 1),
        (False, [Link("multi_node_training", "dedicated_line")], 2),
        (False, [], 1),
    ],
)
def test_training_traffic_stays_inside_one_cluster(in_one_cluster, links, problems):
    assert len(training_traffic_problems(in_one_cluster=in_one_cluster, links=links)) == problems

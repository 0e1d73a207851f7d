"""Saving matrices and plans: atomic, attributed, versioned, and refusing bad input whole."""

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from apps.access.defaults import default_matrix_payload
from apps.access.models import (
    AccessControl,
    AccessGrant,
    AccessMatrix,
    AccessPermission,
    AccessRole,
    NetworkPlan,
    WorkloadLink,
)
from apps.access.rules import CLUSTER_ADMIN_WITH_DATA_WRITE, GRANT_WITHOUT_JUSTIFICATION
from apps.access.selectors import access_matrix_state, estimate_budget
from apps.access.services import (
    access_matrix_review,
    access_matrix_save,
    network_plan_save,
)
from apps.core.services import ConcurrentEditError
from tests.access.factories import PLAN_FIELDS, PLAN_LINKS, make_matrix, make_plan
from tests.factories import make_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(priya):
    return make_case(priya)


def counts() -> tuple:
    return tuple(
        m.objects.count()
        for m in (AccessMatrix, AccessRole, AccessPermission, AccessGrant, AccessControl)
    )


def test_first_save_creates_the_default_matrix_with_history(tariq, case):
    matrix = make_matrix(tariq, case)
    assert counts() == (1, 4, 6, 13, 7)
    state = access_matrix_state(case)
    assert state.violations == [] and not state.reviewed
    row = AccessMatrix.history.get(id=matrix.pk)
    assert (row.history_user, row.history_change_reason) == (tariq, "Access matrix started")
    grant_rows = AccessGrant.history.all()
    assert {r.history_user for r in grant_rows} == {tariq}


def test_an_edit_is_one_version_with_the_reason_on_every_changed_row(tariq, case):
    make_matrix(tariq, case)
    payload = default_matrix_payload()
    payload["grants"] = [
        {**g, "justification": ""}
        if (g["role"], g["permission"]) == ("data_engineer", "data_write")
        else g
        for g in payload["grants"]
    ]
    payload["controls"] = [{"key": "mfa_entry", "status": "in_place", "evidence": "SEC-1"}]
    matrix = access_matrix_save(
        actor=tariq, case=case, reason="Audit finding 7", expected_version=1, **payload
    )
    assert matrix.version == 2
    emptied = AccessGrant.history.filter(justification="").get()
    assert (emptied.history_user, emptied.history_change_reason) == (tariq, "Audit finding 7")
    control = AccessControl.history.filter(status="in_place").get()
    assert control.history_change_reason == "Audit finding 7"
    # The emptied justification is now a violation of exactly that cell.
    [violation] = access_matrix_state(case).violations
    assert (violation.rule, violation.role, violation.permission) == (
        GRANT_WITHOUT_JUSTIFICATION,
        "data_engineer",
        "data_write",
    )


def test_removing_a_role_removes_its_grants_with_history(tariq, case):
    make_matrix(tariq, case)
    payload = default_matrix_payload()
    payload["roles"] = [r for r in payload["roles"] if r["key"] != "data_engineer"]
    payload["grants"] = [g for g in payload["grants"] if g["role"] != "data_engineer"]
    access_matrix_save(actor=tariq, case=case, reason="No data engineering", **payload)
    assert counts() == (1, 3, 6, 9, 7)
    deleted = AccessGrant.history.filter(history_type="-")
    assert deleted.count() == 4
    assert {r.history_change_reason for r in deleted} == {"No data engineering"}


def test_an_edit_needs_a_reason_and_the_current_version(tariq, case):
    make_matrix(tariq, case)
    with pytest.raises(ValidationError) as error:
        access_matrix_save(actor=tariq, case=case, reason=" ", **default_matrix_payload())
    assert "change_reason" in error.value.message_dict
    access_matrix_save(
        actor=tariq, case=case, reason="First", expected_version=1, **default_matrix_payload()
    )
    with pytest.raises(ConcurrentEditError):
        access_matrix_save(
            actor=tariq, case=case, reason="Stale", expected_version=1, **default_matrix_payload()
        )


@pytest.mark.parametrize(
    "change,field",
    [
        (
            lambda p: p["grants"].append(
                {"role": "ghost", "permission": "log_view", "justification": "x"}
            ),
            "grants[13].role",
        ),
        (
            lambda p: p["grants"].append(
                {"role": "platform_admin", "permission": "root", "justification": "x"}
            ),
            "grants[13].permission",
        ),
        (
            lambda p: p["controls"].__setitem__(0, {"key": "mfa_entry", "status": "done"}),
            "controls[0].status",
        ),
        (lambda p: p["controls"].append({"key": "vpn", "status": "missing"}), "controls[7].key"),
        (
            lambda p: p["permissions"].append({"name": "Root", "kind": "superpower"}),
            "permissions[6].kind",
        ),
        (lambda p: p["roles"].append({"name": "Platform admin"}), "roles[4].key"),
        (lambda p: p["roles"].append({"name": "  "}), "roles[4].name"),
    ],
)
def test_invalid_input_names_the_field_and_saves_nothing(tariq, case, change, field):
    make_matrix(tariq, case)
    before = counts()
    history_before = AccessGrant.history.count(), AccessMatrix.history.count()
    payload = default_matrix_payload()
    payload["grants"][0]["justification"] = "Changed in the same edit"
    change(payload)
    with pytest.raises(ValidationError) as error:
        access_matrix_save(actor=tariq, case=case, reason="Bad edit", **payload)
    assert field in error.value.message_dict, error.value.message_dict
    assert counts() == before
    assert (AccessGrant.history.count(), AccessMatrix.history.count()) == history_before
    assert AccessMatrix.objects.get().version == 1


def test_a_new_role_holding_every_permission_and_cluster_admin_with_data_write(tariq, case):
    payload = default_matrix_payload()
    payload["roles"].append({"name": "SRE on call"})
    payload["grants"] += [
        {"role": "sre_on_call", "permission": p["key"], "justification": "Pager"}
        for p in payload["permissions"]
    ]
    access_matrix_save(actor=tariq, case=case, **payload)
    rules = {(v.rule, v.role) for v in access_matrix_state(case).violations}
    assert rules == {
        ("role_holds_every_permission", "sre_on_call"),
        (CLUSTER_ADMIN_WITH_DATA_WRITE, "sre_on_call"),
    }


def test_review_records_reviewer_and_date_and_is_cleared_by_a_later_change(tariq, case):
    matrix = make_matrix(tariq, case)
    matrix = access_matrix_review(actor=tariq, matrix=matrix, note="Q1 review")
    assert matrix.reviewed_by == tariq and matrix.reviewed_at is not None
    assert (matrix.review_by - matrix.reviewed_at.date()).days == 90
    assert access_matrix_state(case).holds
    assert (
        AccessMatrix.history.first().history_change_reason == "Quarterly access review: Q1 review"
    )
    # Only the controls change: the review still covers the matrix.
    payload = default_matrix_payload()
    payload["controls"] = [{"key": "key_rotation", "status": "in_place", "evidence": "Job"}]
    matrix = access_matrix_save(actor=tariq, case=case, reason="Evidence", **payload)
    assert matrix.reviewed_at is not None
    # A new grant does not: the review is cleared, and history says why.
    payload["grants"].append(
        {"role": "algorithm_engineer", "permission": "billing_view", "justification": "Cost"}
    )
    matrix = access_matrix_save(actor=tariq, case=case, reason="Cost visibility", **payload)
    assert matrix.reviewed_at is None and matrix.review_by is None
    assert "no longer covers" in AccessMatrix.history.first().history_change_reason


def test_a_matrix_with_violations_cannot_be_marked_reviewed(tariq, case):
    payload = default_matrix_payload()
    payload["grants"].append({"role": "audit_compliance", "permission": "data_write"})
    matrix = access_matrix_save(actor=tariq, case=case, **payload)
    with pytest.raises(ValidationError) as error:
        access_matrix_review(actor=tariq, matrix=matrix)
    assert "review" in error.value.message_dict
    assert AccessMatrix.objects.get().reviewed_at is None


def test_only_tech_leads_edit_and_review(priya, aude, tariq, case):
    with pytest.raises(PermissionDenied):
        make_matrix(priya, case)
    matrix = make_matrix(tariq, case)
    with pytest.raises(PermissionDenied):
        access_matrix_review(actor=aude, matrix=matrix)


def test_network_plan_save_and_budget(tariq, case):
    plan = make_plan(tariq, case)
    assert WorkloadLink.objects.filter(plan=plan).count() == 2
    sync = WorkloadLink.objects.get(workload="data_sync")
    assert sync.key_metric == "Effective bandwidth"  # seed default when left blank
    budget = estimate_budget(plan)
    assert budget.total == Decimal("328") and not budget.over_target
    rows = NetworkPlan.history.all()
    assert rows.get().history_user == tariq


@pytest.mark.parametrize(
    "fields,links,field",
    [
        ({"user_to_gateway_ms": Decimal("-1")}, PLAN_LINKS, "user_to_gateway_ms"),
        ({"estimated_rtt_ms": Decimal("-0.5")}, PLAN_LINKS, "estimated_rtt_ms"),
        ({"target_latency_ms": Decimal("0")}, PLAN_LINKS, "target_latency_ms"),
        ({"rtt_source": ""}, PLAN_LINKS, "rtt_source"),
        ({}, [{"workload": "gaming", "link": "public_internet"}], "links[0].workload"),
        ({}, [{"workload": "data_sync", "link": "carrier_pigeon"}], "links[0].link"),
    ],
)
def test_invalid_plan_input_names_the_field_and_saves_nothing(tariq, case, fields, links, field):
    make_plan(tariq, case)
    before = NetworkPlan.history.count(), WorkloadLink.history.count()
    with pytest.raises(ValidationError) as error:
        network_plan_save(
            actor=tariq,
            case=case,
            fields={**PLAN_FIELDS, **fields},
            links=links,
            reason="Bad edit",
            expected_version=1,
        )
    assert field in error.value.message_dict, error.value.message_dict
    assert (NetworkPlan.history.count(), WorkloadLink.history.count()) == before
    assert NetworkPlan.objects.get().version == 1

"""The access-matrix and network-plan endpoints: payloads, errors by field, versions."""

import pytest

from apps.access.defaults import default_matrix_payload
from apps.access.models import AccessGrant, AccessMatrix, NetworkPlan
from tests.access.factories import make_matrix, make_plan
from tests.factories import make_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(priya):
    return make_case(priya)


def matrix_url(case):
    return f"/api/v1/cases/{case.pk}/access-matrix/"


def plan_url(case):
    return f"/api/v1/cases/{case.pk}/network-plan/"


def test_put_creates_then_get_reports_state_and_violations(api_as, case):
    api = api_as("tariq")
    assert api.get(matrix_url(case)).status_code == 404
    body = default_matrix_payload()
    body["grants"].append({"role": "platform_admin", "permission": "data_write"})
    response = api.put(matrix_url(case), body, format="json")
    assert response.status_code == 201, response.content
    state = api_as("aude").get(matrix_url(case)).json()["state"]
    assert state["reviewed"] is False and state["holds"] is False
    rules = sorted((v["rule"], v["role"], v["permission"]) for v in state["violations"])
    assert rules == [
        ("cluster_admin_with_data_write", "platform_admin", "data_write"),
        ("grant_without_justification", "platform_admin", "data_write"),
    ]
    admin_violation = next(
        v for v in state["violations"] if v["rule"] == "cluster_admin_with_data_write"
    )
    assert admin_violation["cells"] == [
        ["platform_admin", "cluster_admin"],
        ["platform_admin", "data_write"],
    ]


@pytest.mark.parametrize(
    "change,error_path",
    [
        (
            lambda b: b["grants"].append({"role": "ghost", "permission": "log_view"}),
            ("grants[13].role",),
        ),
        (
            lambda b: b["grants"].append({"role": "platform_admin", "permission": "sudo"}),
            ("grants[13].permission",),
        ),
        (
            lambda b: b["controls"][0].update(status="done"),
            ("controls", "0", "status"),
        ),
        (
            lambda b: b["permissions"].append({"name": "Root", "kind": "superpower"}),
            ("permissions", "6", "kind"),
        ),
    ],
)
def test_invalid_matrix_input_names_the_field_and_saves_nothing(
    api_as, tariq, case, change, error_path
):
    make_matrix(tariq, case)
    before = AccessGrant.history.count()
    body = default_matrix_payload() | {"change_reason": "Bad", "version": 1}
    body["grants"][0]["justification"] = "Changed alongside"
    change(body)
    response = api_as("tariq").put(matrix_url(case), body, format="json")
    assert response.status_code == 400
    error = response.json()
    for step in error_path:
        error = error[step]
    assert error, response.json()
    assert AccessGrant.history.count() == before
    assert AccessMatrix.objects.get().version == 1


def test_a_stale_version_is_refused_with_409(api_as, tariq, case):
    make_matrix(tariq, case)
    make_matrix(tariq, case, reason="Someone else")
    body = default_matrix_payload() | {"change_reason": "Mine", "version": 1}
    response = api_as("tariq").put(matrix_url(case), body, format="json")
    assert response.status_code == 409
    assert response.json()["current_version"] == 2


def test_an_edit_without_a_reason_is_refused(api_as, tariq, case):
    make_matrix(tariq, case)
    response = api_as("tariq").put(
        matrix_url(case), {**default_matrix_payload(), "version": 1}, format="json"
    )
    assert response.status_code == 400
    assert "change_reason" in response.json()


def test_an_edit_without_a_version_is_refused_and_saves_nothing(api_as, tariq, case):
    make_matrix(tariq, case)
    body = {**default_matrix_payload(), "change_reason": "Re-sent"}
    response = api_as("tariq").put(matrix_url(case), body, format="json")
    assert response.status_code == 428 and "version" in response.json()
    assert AccessMatrix.objects.get().version == 1


def test_review_endpoint_sets_the_review_by_date(api_as, tariq, case):
    make_matrix(tariq, case)
    response = api_as("tariq").post(
        f"{matrix_url(case)}review/", {"note": "Q1", "version": 1}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["reviewed_by"] == "tariq" and body["review_by"]
    assert body["state"]["holds"] is True


def test_plan_put_and_get_with_budget(api_as, case):
    api = api_as("tariq")
    body = {
        "target_latency_ms": "400",
        "user_to_gateway_ms": "8",
        "estimated_rtt_ms": "210",
        "rtt_source": "mtr by hand",
        "queueing_and_first_token_ms": "260",
        "links": [{"workload": "online_inference", "link": "encrypted_tunnel"}],
    }
    assert api.put(plan_url(case), body, format="json").status_code == 201
    plan = api_as("lena").get(plan_url(case)).json()
    assert plan["budget"]["total"] == "478.0"
    assert plan["budget"]["over_target"] is True and plan["budget"]["rtt_over_half"] is True
    assert "closer to the users" in plan["budget"]["advice"][0]
    assert plan["links"][0]["key_metric"] == "Time to first token, tail latency"


@pytest.mark.parametrize(
    "change,field",
    [
        ({"user_to_gateway_ms": "-1"}, "user_to_gateway_ms"),
        ({"queueing_and_first_token_ms": "-10"}, "queueing_and_first_token_ms"),
        ({"links": [{"workload": "mining", "link": "public_internet"}]}, "links"),
        ({"rtt_source": ""}, "rtt_source"),
    ],
)
def test_invalid_plan_input_names_the_field_and_saves_nothing(api_as, tariq, case, change, field):
    make_plan(tariq, case)
    body = {
        "target_latency_ms": "400",
        "user_to_gateway_ms": "8",
        "estimated_rtt_ms": "120",
        "rtt_source": "mtr",
        "queueing_and_first_token_ms": "200",
        "links": [],
        "change_reason": "Bad",
        "version": 1,
    } | change
    response = api_as("tariq").put(plan_url(case), body, format="json")
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert NetworkPlan.objects.get().version == 1


def test_schema_lists_the_endpoints(api_as):
    schema = api_as("aude").get("/api/schema/?format=json").json()
    for path in (
        "/api/v1/cases/{case_pk}/access-matrix/",
        "/api/v1/cases/{case_pk}/access-matrix/review/",
        "/api/v1/cases/{case_pk}/network-plan/",
    ):
        assert path in schema["paths"]

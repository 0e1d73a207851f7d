"""The grid editor, the matrix and plan pages, the case panel (tariq edits, aude reads)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.access.models import AccessGrant, AccessMatrix, AccessRole, NetworkPlan
from apps.access.panels import case_panel
from apps.core.services import tracked_update
from tests.access.factories import PLAN_FIELDS, make_matrix, make_plan
from tests.factories import make_case
from tests.pages import whole_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(priya):
    return make_case(priya)


def form_data(form) -> dict:
    """What a browser would post for the form as drawn."""
    data = {}
    for name, field in form.fields.items():
        value = form[name].value()
        if field.widget.input_type == "checkbox" if hasattr(field.widget, "input_type") else False:
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value
    return data


def edit_url(case):
    return reverse("access:matrix_edit", kwargs={"pk": case.pk})


def drawn(client, case) -> dict:
    return form_data(client.get(edit_url(case)).context["form"])


def test_a_new_matrix_starts_from_the_default_grid_and_saves(browser_as, case):
    tariq = browser_as("tariq")
    response = tariq.get(edit_url(case))
    assert response.status_code == 200
    assert b'value="Platform admin"' in response.content
    assert b"Reads the source data sets; read-only by design.</textarea>" in response.content
    response = tariq.post(edit_url(case), drawn(tariq, case))
    assert response.status_code == 302
    matrix = AccessMatrix.objects.get(case=case)
    assert matrix.roles.count() == 4 and AccessGrant.objects.count() == 13
    page = tariq.get(reverse("access:matrix", kwargs={"pk": case.pk}))
    assert b"No SoD violation" in page.content and b"Not reviewed" in page.content


def test_adding_a_role_holding_everything_shows_the_violations_in_place(browser_as, tariq, case):
    make_matrix(tariq, case)
    client = browser_as("tariq")
    data = drawn(client, case)
    data["nr-0.name"] = "SRE on call"
    for key in ("cluster_admin", "job_submit", "data_read", "data_write", "log_view"):
        data[f"cell.nr-0.p-{key}"] = "on"
        data[f"just.nr-0.p-{key}"] = "Pager duty"
    data["cell.nr-0.p-billing_view"] = "on"  # ticked without a justification
    data["change_reason"] = "On-call rota"
    assert client.post(edit_url(case), data).status_code == 302
    assert AccessRole.objects.filter(key="sre_on_call").exists()
    page = client.get(reverse("access:matrix", kwargs={"pk": case.pk})).content.decode()
    assert "SRE on call holds every permission of the matrix." in page
    assert "SRE on call holds cluster administration together with Data write." in page
    assert "SRE on call holds Billing view without a justification." in page
    assert "sre_on_call × billing_view" in page
    editor = client.get(edit_url(case)).content.decode()
    assert "⚠ SRE on call holds Billing view without a justification." in editor


def test_add_a_row_redraws_the_grid_keeping_what_was_typed_and_saves_nothing(
    browser_as, tariq, case
):
    make_matrix(tariq, case)
    client = browser_as("tariq")
    data = drawn(client, case)
    data["nr-0.name"] = "Contractor"
    data["add_role"] = "1"
    response = client.post(edit_url(case), data)
    assert response.status_code == 200
    form = response.context["form"]
    assert form["nr-0.name"].value() == "Contractor"
    assert "nr-1.name" in form.fields
    assert not form.errors  # no premature "reason required"
    assert AccessRole.objects.count() == 4


def test_an_edit_without_a_reason_is_refused_in_place(browser_as, tariq, case):
    make_matrix(tariq, case)
    client = browser_as("tariq")
    data = drawn(client, case)
    data["just.r-platform_admin.p-cluster_admin"] = ""
    response = client.post(edit_url(case), data)
    assert response.status_code == 200
    assert "change_reason" in response.context["form"].errors
    assert AccessGrant.objects.filter(justification="").count() == 0


def test_a_tampered_control_status_is_refused_next_to_the_control(browser_as, tariq, case):
    make_matrix(tariq, case)
    client = browser_as("tariq")
    data = drawn(client, case) | {"change_reason": "x", "control.mfa_entry.status": "done"}
    response = client.post(edit_url(case), data)
    assert response.status_code == 200
    assert "control.mfa_entry.status" in response.context["form"].errors
    assert AccessMatrix.objects.get().version == 1


def test_a_ticked_cell_in_an_unnamed_new_row_names_the_row(browser_as, tariq, case):
    make_matrix(tariq, case)
    client = browser_as("tariq")
    data = drawn(client, case) | {"change_reason": "x", "cell.nr-0.p-log_view": "on"}
    response = client.post(edit_url(case), data)
    assert "nr-0.name" in response.context["form"].errors
    assert AccessRole.objects.count() == 4


def test_a_duplicate_new_role_is_refused_on_its_name(browser_as, tariq, case):
    make_matrix(tariq, case)
    client = browser_as("tariq")
    data = drawn(client, case) | {"change_reason": "x", "nr-0.name": "Platform admin"}
    response = client.post(edit_url(case), data)
    errors = response.context["form"].errors
    assert "used twice" in errors["nr-0.name"][0]
    assert AccessRole.objects.count() == 4


def test_a_stale_edit_is_refused_with_a_message(browser_as, tariq, case):
    make_matrix(tariq, case)
    client = browser_as("tariq")
    data = drawn(client, case) | {"change_reason": "Mine"}
    make_matrix(tariq, case, reason="Theirs")  # someone saves first: version 2
    response = client.post(edit_url(case), data)
    assert "Someone else saved" in str(response.context["form"].non_field_errors())


def test_mark_reviewed_and_expiry_show_on_the_page_and_the_panel(browser_as, tariq, aude, case):
    matrix = make_matrix(tariq, case)
    response = browser_as("tariq").post(
        reverse("access:matrix_review", kwargs={"pk": case.pk}), {"version": 1}
    )
    assert response.status_code == 302
    matrix = AccessMatrix.objects.get()
    assert matrix.reviewed_by == tariq
    tracked_update(
        matrix,
        actor=tariq,
        reason="Test: the review was long ago",
        fields={"review_by": timezone.localdate() - timedelta(days=1)},
    )
    page = browser_as("aude").get(reverse("access:matrix", kwargs={"pk": case.pk}))
    assert b"Review expired on" in page.content
    panel = case_panel(case, actor=aude)
    assert any("review expired" in line for line in panel.missing)


def test_review_with_violations_is_refused_with_the_reason(browser_as, tariq, case):
    payload_grant = {"role": "audit_compliance", "permission": "job_submit", "justification": "?"}
    from apps.access.defaults import default_matrix_payload

    grants = default_matrix_payload()["grants"] + [payload_grant]
    make_matrix(tariq, case, grants=grants)
    response = browser_as("tariq").post(
        reverse("access:matrix_review", kwargs={"pk": case.pk}), {"version": 1}
    )
    assert response.status_code == 400
    assert b"Resolve the 1 segregation-of-duties violation" in response.content
    assert AccessMatrix.objects.get().reviewed_at is None


def test_plan_editor_creates_a_plan_and_refuses_a_negative_latency(browser_as, case):
    client = browser_as("tariq")
    url = reverse("access:plan_edit", kwargs={"pk": case.pk})
    links = client.get(url).context["links"]
    data = {
        **{k: ("" if v is None else str(v)) for k, v in PLAN_FIELDS.items()},
        "multi_node_training_in_one_cluster": "true",
        "links-TOTAL_FORMS": "4",
        "links-INITIAL_FORMS": "4",
    }
    for i, row in enumerate(links.initial):
        data |= {f"links-{i}-{k}": v for k, v in row.items() if k != "in_use"}
    data["links-0-in_use"] = "on"
    bad = data | {"user_to_gateway_ms": "-3"}
    response = client.post(url, bad)
    assert response.status_code == 200
    assert "user_to_gateway_ms" in response.context["form"].errors
    assert not NetworkPlan.objects.exists()
    assert client.post(url, data).status_code == 302
    plan = NetworkPlan.objects.get()
    assert [link.workload for link in plan.links.all()] == ["online_inference"]
    page = client.get(reverse("access:plan", kwargs={"pk": case.pk})).content.decode()
    assert "328" in page and "within target" in page


def test_plan_page_shows_the_seed_rule_when_the_rtt_takes_over_half(browser_as, tariq, case):
    make_plan(tariq, case, estimated_rtt_ms=Decimal("210"), queueing_and_first_token_ms=260)
    page = browser_as("lena").get(reverse("access:plan", kwargs={"pk": case.pk})).content
    assert b"over target" in page and b"RTT over half the budget" in page
    assert b"closer to the users" in page


def test_history_page_lists_who_and_why(browser_as, tariq, case):
    make_matrix(tariq, case)
    make_matrix(tariq, case, reason="Tightened data access")
    page = browser_as("aude").get(reverse("access:history", kwargs={"pk": case.pk}))
    assert b"Access matrix started" in page.content
    assert b"Tightened data access" in page.content


def test_case_panel_lists_what_is_missing(tariq, aude, case):
    panel = case_panel(case, actor=aude)
    assert panel.missing[0].startswith("No access matrix yet")
    assert panel.missing[1].startswith("No network plan yet")
    make_matrix(tariq, case)
    make_plan(tariq, case, estimated_rtt_ms=None, rtt_source="")
    missing = case_panel(case, actor=aude).missing
    assert any(line.startswith("Access matrix not reviewed") for line in missing)
    assert any(line.startswith("Access controls not in place") for line in missing)
    # No offer yet: the budget on the plan's estimates, which lack the RTT.
    assert "Network plan: the latency budget is incomplete." in missing


def test_case_page_shows_the_panel(browser_as, tariq, case):
    make_matrix(tariq, case)
    page = whole_case(browser_as("priya"), case.pk)
    assert b"Network and access-control plan" in page.content
    assert b"Access matrix not reviewed" in page.content


def _wide_matrix(tariq, case, roles: int):
    from apps.access.defaults import default_matrix_payload

    payload = default_matrix_payload()
    payload["roles"] += [{"name": f"Team {n}"} for n in range(roles)]
    payload["grants"] += [
        {"role": f"team_{n}", "permission": "log_view", "justification": "Ops"}
        for n in range(roles)
    ]
    return make_matrix(tariq, case, **{k: payload[k] for k in ("roles", "grants")})


@pytest.mark.parametrize("extra_roles", [1, 50])
def test_query_counts_do_not_grow_with_the_matrix(
    tariq, aude, case, browser_as, django_assert_max_num_queries, extra_roles
):
    _wide_matrix(tariq, case, extra_roles)
    make_plan(tariq, case)
    aude.has_perm("access.view_accessmatrix")  # the permission cache is per request
    # 5 for the matrix, 2 for the plan, 3 for the offers' budgets (offers, their
    # verifications, the bundles that measured them).
    with django_assert_max_num_queries(10):
        case_panel(case, actor=aude)
    client = browser_as("aude")
    with django_assert_max_num_queries(14):
        assert client.get(reverse("access:matrix", kwargs={"pk": case.pk})).status_code == 200
    tariq_client = browser_as("tariq")
    with django_assert_max_num_queries(14):
        assert tariq_client.get(edit_url(case)).status_code == 200

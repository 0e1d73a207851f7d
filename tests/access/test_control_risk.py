"""Accepting a control's risk (tech leads only) and recording the controls' periods.

Every role is tried on the page and the endpoint; bad input is refused with the
field named, and nothing is written.
"""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.access.models import AccessControl, AccessMatrix
from tests.access.factories import PERIODS_IN_PLACE, make_matrix
from tests.factories import make_case

pytestmark = pytest.mark.django_db

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
TECH = {"tariq", "ada"}  # the administrator holds every permission


@pytest.fixture
def case(priya, tariq):
    case = make_case(priya)
    make_matrix(tariq, case)
    return case


def page_url(case, key="egress_allow_list"):
    return reverse("access:control_accept_risk", kwargs={"pk": case.pk, "control_key": key})


def api_url(case, key="egress_allow_list"):
    return f"/api/v1/cases/{case.pk}/access-matrix/controls/{key}/risk-acceptance/"


def in_a_month():
    return timezone.localdate() + timedelta(days=30)


def egress():
    return AccessControl.objects.get(key="egress_allow_list")


@pytest.mark.parametrize("role", ROLES)
def test_only_a_tech_lead_opens_the_acceptance_page(browser_as, case, role):
    response = browser_as(role).get(page_url(case))
    assert response.status_code == (200 if role in TECH else 403)


@pytest.mark.parametrize("role", ROLES)
def test_only_a_tech_lead_accepts_a_risk_on_the_page(browser_as, case, role):
    body = {"reason": "Vendor firewall rules meanwhile", "expires_on": in_a_month(), "version": 1}
    response = browser_as(role).post(page_url(case), body)
    if role in TECH:
        assert response.status_code == 302
        assert response["Location"].endswith("/access-matrix/#controls")
        control = egress()
        assert control.risk_accepted_by.username == role
        assert control.risk_expires_on == in_a_month()
    else:
        assert response.status_code == 403
        assert egress().risk_expires_on is None


@pytest.mark.parametrize("role", ROLES)
def test_only_a_tech_lead_accepts_a_risk_through_the_api(api_as, case, role):
    body = {"reason": "Vendor firewall rules", "expires_on": str(in_a_month()), "version": 1}
    response = api_as(role).post(api_url(case), body, format="json")
    assert response.status_code == (200 if role in TECH else 403), response.content
    if role in TECH:
        control = next(c for c in response.json()["controls"] if c["key"] == "egress_allow_list")
        assert control["risk_acceptance"]["accepted_by"] == role
        assert control["risk_acceptance"]["expired"] is False
        assert control["gap"] is None
    else:
        assert egress().risk_expires_on is None


def test_anonymous_callers_are_sent_away(client, case):
    assert client.get(page_url(case))["Location"].startswith(reverse("login"))
    assert client.post(api_url(case), {}, content_type="application/json").status_code == 401


@pytest.mark.parametrize(
    "body,field",
    [
        ({"expires_on": "2026-07-01"}, "reason"),
        ({"reason": "   "}, "reason"),
        ({"reason": "Firewall", "expires_on": "next month"}, "expires_on"),
        ({"reason": "Firewall", "expires_on": "2026-02-30"}, "expires_on"),
        ({"reason": "Firewall", "expires_on": "today"}, "expires_on"),
        ({"reason": "Firewall", "expires_on": "past"}, "expires_on"),
        ({"reason": "Firewall", "expires_on": "far"}, "expires_on"),
        ({"reason": "x" * 2001}, "reason"),
    ],
)
def test_bad_acceptances_are_refused_with_the_field_named(api_as, case, body, field):
    today = timezone.localdate()
    dates = {
        "today": today,
        "past": today - timedelta(days=1),
        "far": today + timedelta(days=366),
    }
    body = {"expires_on": str(in_a_month()), "version": 1, **body}
    body["expires_on"] = str(dates.get(body["expires_on"], body["expires_on"]))
    before = AccessControl.history.count()
    response = api_as("tariq").post(api_url(case), body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()
    assert AccessControl.history.count() == before


def test_a_control_in_place_has_no_risk_to_accept(api_as, tariq, case):
    make_matrix(
        tariq,
        case,
        reason="Allow-list live",
        controls=[{"key": "egress_allow_list", "status": "in_place", "evidence": "FW-12"}],
    )
    response = api_as("tariq").post(
        api_url(case),
        {"reason": "Just in case", "expires_on": str(in_a_month()), "version": 2},
        format="json",
    )
    assert response.status_code == 400
    assert "no risk to accept" in str(response.json()["control"])


def test_acceptance_needs_the_current_version_and_an_existing_control(api_as, browser_as, case):
    api = api_as("tariq")
    body = {"reason": "Vendor firewall rules", "expires_on": str(in_a_month())}
    assert api.post(api_url(case), body, format="json").status_code == 428
    assert api.post(api_url(case), {**body, "version": 7}, format="json").status_code == 409
    assert api.post(api_url(case, "teleport"), body, format="json").status_code == 404
    assert browser_as("tariq").get(page_url(case, "teleport")).status_code == 404


def test_a_refused_acceptance_on_the_page_is_shown_in_place(browser_as, case):
    client = browser_as("tariq")
    response = client.post(
        page_url(case),
        {"reason": "", "expires_on": timezone.localdate(), "version": 1},
    )
    assert response.status_code == 400
    form = response.context["form"]
    assert "reason" in form.errors
    response = client.post(
        page_url(case),
        {"reason": "Firewall", "expires_on": timezone.localdate(), "version": 1},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["expires_on"] == ["The acceptance must end after today."]
    assert egress().risk_expires_on is None


def test_the_acceptance_is_kept_in_the_history_and_shown_on_the_matrix(browser_as, case):
    client = browser_as("tariq")
    body = {"reason": "Vendor firewall rules", "expires_on": in_a_month(), "version": 1}
    assert client.post(page_url(case), body).status_code == 302
    row = egress().history.first()
    assert row.history_change_reason == (
        f"Risk accepted until {in_a_month().isoformat()}: Vendor firewall rules"
    )
    page = browser_as("aude").get(reverse("access:matrix", kwargs={"pk": case.pk}))
    html = page.content.decode()
    assert f"Accepted by Tariq until {in_a_month().isoformat()}" in html
    assert "Vendor firewall rules" in html
    assert page_url(case) not in html  # the auditor is not offered the action


# --- the periods the controls run on -----------------------------------------


def matrix_api(case):
    return f"/api/v1/cases/{case.pk}/access-matrix/"


def put_periods(api, case, periods):
    from apps.access.defaults import default_matrix_payload

    body = {
        **default_matrix_payload(),
        "controls": [],
        "periods": periods,
        "change_reason": "Periods recorded",
        "version": AccessMatrix.objects.get(case=case).version,
    }
    return api.put(matrix_api(case), body, format="json")


def test_periods_are_saved_read_back_kept_when_left_out_and_cleared_with_null(api_as, case):
    api = api_as("tariq")
    assert put_periods(api, case, PERIODS_IN_PLACE).status_code == 200
    assert api_as("aude").get(matrix_api(case)).json()["periods"] == PERIODS_IN_PLACE
    assert put_periods(api, case, {"log_retention_days": None}).status_code == 200
    assert api.get(matrix_api(case)).json()["periods"] == {
        **PERIODS_IN_PLACE,
        "log_retention_days": None,
    }


@pytest.mark.parametrize(
    "periods,field",
    [
        ({"key_rotation_days": 0}, "key_rotation_days"),
        ({"key_rotation_days": 366}, "key_rotation_days"),
        ({"credential_lifetime_hours": 169}, "credential_lifetime_hours"),
        ({"log_retention_days": -1}, "log_retention_days"),
        ({"log_retention_days": "a year"}, "log_retention_days"),
        ({"key_rotation_days": 12.5}, "key_rotation_days"),
    ],
)
def test_bad_periods_are_refused_and_nothing_is_saved(api_as, case, periods, field):
    before = AccessMatrix.history.count()
    response = put_periods(api_as("tariq"), case, periods)
    assert response.status_code == 400, response.content
    assert field in response.json()["periods"]
    assert AccessMatrix.history.count() == before


def test_periods_in_the_grid_editor_are_checked_in_place_and_shown_with_the_controls(
    browser_as, case
):
    from tests.access.test_views import drawn, edit_url

    client = browser_as("tariq")
    data = drawn(client, case) | {"change_reason": "Periods", "period.key_rotation_days": "400"}
    response = client.post(edit_url(case), data)
    assert response.status_code == 200
    assert "period.key_rotation_days" in response.context["form"].errors
    assert AccessMatrix.objects.get().key_rotation_days is None
    data |= {"period.key_rotation_days": "90", "period.credential_lifetime_hours": "12"}
    assert client.post(edit_url(case), data).status_code == 302
    matrix = AccessMatrix.objects.get()
    assert (matrix.key_rotation_days, matrix.credential_lifetime_hours) == (90, 12)
    assert matrix.log_retention_days is None
    html = client.get(reverse("access:matrix", kwargs={"pk": case.pk})).content.decode()
    assert "key rotation interval (days): 90" in html
    assert "credential lifetime (hours): 12" in html
    assert 'log retention (days): <span class="muted">not recorded</span>' in html

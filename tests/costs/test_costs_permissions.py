"""Every cost page and endpoint, for every role (docs/roles.md, issue 9 items 5–8).

Procurement (and admin) set the budget and import bills; legal, the tech lead
and auditors read; anonymous visitors go to the login page (401 in the API).
"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.costs.factories import CLEAN, bill_csv, make_budget, make_import
from tests.factories import make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
PROCUREMENT = {"priya", "ada"}


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def world(priya):
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    make_import(priya, case, ("2026-09", CLEAN))
    return {"case": case}


@pytest.mark.parametrize("name", ["costs:case", "cases:detail"])
@pytest.mark.parametrize("role", ROLES)
def test_pages(browser_as, world, name, role):
    response = browser_as(role).get(reverse(name, args=[world["case"].pk]))
    assert response.status_code == 200
    page = response.content.decode()
    assert ("Import usage and bill" in page) is (name == "costs:case" and role in PROCUREMENT)
    assert ("Save budget" in page) is (name == "costs:case" and role in PROCUREMENT)


@pytest.mark.parametrize("role", ROLES)
def test_budget_action(browser_as, world, role):
    url = reverse("costs:budget", args=[world["case"].pk])
    data = {
        "currency": "USD",
        "total_amount": "100",
        "monthly_amount": "10",
        "thresholds_pct": "70, 90, 100",
        "gpus_per_instance": "1",
        "version": 1,
        "change_reason": "Tighter",
    }
    response = browser_as(role).post(url, data)
    assert response.status_code == (302 if role in PROCUREMENT else 403)


@pytest.mark.parametrize("role", ROLES)
def test_import_action(browser_as, world, role):
    url = reverse("costs:import", args=[world["case"].pk])
    raw = bill_csv(("2026-10", CLEAN))
    response = browser_as(role).post(url, {"file": SimpleUploadedFile("b.csv", raw)})
    assert response.status_code == (302 if role in PROCUREMENT else 403)


@pytest.mark.parametrize("name", ["costs:case", "costs:budget", "costs:import"])
def test_pages_send_anonymous_to_login(client, world, name):
    url = reverse(name, args=[world["case"].pk])
    for response in (client.get(url), client.post(url)):
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name", ["costs:budget", "costs:import"])
def test_actions_take_only_post(browser_as, world, name):
    response = browser_as("priya").get(reverse(name, args=[world["case"].pk]))
    assert response.status_code == 405


def _budget_body(w):
    return {"total_amount": "100", "monthly_amount": "10", "version": 1, "change_reason": "Up"}


def _import_body(w):
    columns = bill_csv().decode().strip().split(",")
    return {"rows": [dict(zip(columns, ["2026-10", *CLEAN.split(",")], strict=True))]}


API_CALLS = [
    ("get", "budget/", None, EVERYONE, 200),
    ("put", "budget/", _budget_body, PROCUREMENT, 200),
    ("get", "imports/", None, EVERYONE, 200),
    ("post", "imports/", _import_body, PROCUREMENT, 201),
    ("get", "periods/", None, EVERYONE, 200),
    ("get", "reconciliation/", None, EVERYONE, 200),
]
API_IDS = [f"{c[0]} {c[1]}" for c in API_CALLS]


@pytest.mark.parametrize("method,suffix,body,allowed,success", API_CALLS, ids=API_IDS)
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, world, method, suffix, body, allowed, success, role):
    path = f"/api/v1/cases/{world['case'].pk}/costs/{suffix}"
    response = getattr(api_as(role), method)(path, body(world) if body else None, format="json")
    assert response.status_code == (success if role in allowed else 403), response.content


@pytest.mark.parametrize("method,suffix,body,allowed,success", API_CALLS, ids=API_IDS)
def test_api_refuses_anonymous_with_401(client, world, method, suffix, body, allowed, success):
    path = f"/api/v1/cases/{world['case'].pk}/costs/{suffix}"
    response = getattr(client, method)(path, content_type="application/json")
    assert response.status_code == 401


def test_a_case_without_a_budget_answers_404(api_as, priya):
    case = make_case(priya)
    for suffix in ("budget/", "reconciliation/"):
        response = api_as("aude").get(f"/api/v1/cases/{case.pk}/costs/{suffix}")
        assert response.status_code == 404

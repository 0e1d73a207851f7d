"""Every access-matrix and network-plan page and endpoint, for every role (docs/roles.md).

Tech leads (and admin) edit matrices and plans and mark matrices reviewed;
procurement, legal and auditors read them.
"""

import pytest
from django.urls import reverse

from apps.access.defaults import default_matrix_payload
from apps.access.models import AccessMatrix, NetworkPlan
from tests.access.factories import PLAN_FIELDS, PLAN_LINKS, make_matrix, make_plan
from tests.factories import make_case

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
TECH = {"tariq", "ada"}


@pytest.fixture
def world(priya, tariq):
    case = make_case(priya)
    make_matrix(tariq, case)
    make_plan(tariq, case)
    return {"case": case}


PAGES = [
    ("access:matrix", EVERYONE),
    ("access:matrix_edit", TECH),
    ("access:plan", EVERYONE),
    ("access:plan_edit", TECH),
    ("access:history", EVERYONE),
    ("cases:detail", EVERYONE),
]


@pytest.mark.parametrize("name,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_page_access(browser_as, world, name, allowed, role):
    response = browser_as(role).get(reverse(name, kwargs={"pk": world["case"].pk}))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("role", ROLES)
def test_review_action_access(browser_as, world, role):
    url = reverse("access:matrix_review", kwargs={"pk": world["case"].pk})
    response = browser_as(role).post(url, {"note": "Q1", "version": 1})
    assert response.status_code == (302 if role in TECH else 403)


@pytest.mark.parametrize("name", [p[0] for p in PAGES] + ["access:matrix_review"], ids=lambda n: n)
def test_pages_send_anonymous_to_login(client, world, name):
    response = client.get(reverse(name, kwargs={"pk": world["case"].pk}))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def _matrix_body(w):
    return {**default_matrix_payload(), "change_reason": "Re-sent", "version": 1}


def _plan_body(w):
    return {
        **{k: (str(v) if v is not None else None) for k, v in PLAN_FIELDS.items()},
        "links": PLAN_LINKS,
        "change_reason": "Re-measured",
        "version": NetworkPlan.objects.get(case=w["case"]).version,
    }


API_CALLS = [
    ("get", "access-matrix/", None, EVERYONE, 200),
    ("put", "access-matrix/", _matrix_body, TECH, 200),
    (
        "post",
        "access-matrix/review/",
        lambda w: {"note": "Q1", "version": AccessMatrix.objects.get(case=w["case"]).version},
        TECH,
        200,
    ),
    ("get", "network-plan/", None, EVERYONE, 200),
    ("put", "network-plan/", _plan_body, TECH, 200),
]
API_IDS = [f"{c[0]} {c[1]}" for c in API_CALLS]


@pytest.mark.parametrize("method,suffix,body,allowed,success", API_CALLS, ids=API_IDS)
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, world, method, suffix, body, allowed, success, role):
    path = f"/api/v1/cases/{world['case'].pk}/{suffix}"
    response = getattr(api_as(role), method)(path, body(world) if body else None, format="json")
    assert response.status_code == (success if role in allowed else 403), response.content


@pytest.mark.parametrize("method,suffix,body,allowed,success", API_CALLS, ids=API_IDS)
def test_api_refuses_anonymous_with_401(client, world, method, suffix, body, allowed, success):
    path = f"/api/v1/cases/{world['case'].pk}/{suffix}"
    response = getattr(client, method)(path, content_type="application/json")
    assert response.status_code == 401

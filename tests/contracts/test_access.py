"""Every contracts page and endpoint, for every role: allowed, 403, anonymous (docs/roles.md).

Legal reviewers edit checklists, waive red flags and publish templates; tech
leads, procurement and auditors read; the admin does everything.
"""

import copy

import pytest
from django.urls import reverse

from tests.contracts.factories import item, make_checklist, set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
LEGAL = {"lena", "ada"}


@pytest.fixture(scope="module")
def _world(module_people):
    priya, lena = module_people["priya"], module_people["lena"]
    case = make_case(priya)
    checklist = make_checklist(lena, offer=make_offer(priya, case, spec=FULL_SPEC))
    set_statuses(lena, checklist, {"sla": "missing"})
    bare = make_offer(priya, case)
    return {"case": case, "checklist": checklist, "red": item(checklist, "sla"), "bare": bare}


@pytest.fixture
def world(_world, people):
    """The case, its checklist with a red flag and a bare offer, built once for the
    module; each test its copy (its own writes are undone at its end)."""
    return copy.deepcopy(_world)


BROWSER_PAGES = [
    ("contracts:checklist", lambda w: {"offer_pk": w["checklist"].offer_id}, LEGAL),
    ("contracts:waive", lambda w: {"pk": w["red"].pk}, LEGAL),
    ("contracts:comparison", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("contracts:templates", lambda w: {}, EVERYONE),
    ("contracts:template-publish", lambda w: {}, LEGAL),
    ("offers:detail", lambda w: {"pk": w["checklist"].offer_id}, EVERYONE),
    ("offers:detail", lambda w: {"pk": w["bare"].pk}, EVERYONE),
    ("cases:detail", lambda w: {"pk": w["case"].pk}, EVERYONE),
]
PAGE_IDS = [f"{p[0]}-{i}" for i, p in enumerate(BROWSER_PAGES)]


@pytest.mark.parametrize("name,kwargs,allowed", BROWSER_PAGES, ids=PAGE_IDS)
@pytest.mark.parametrize("role", ROLES)
def test_browser_page_access(browser_as, world, name, kwargs, allowed, role):
    response = browser_as(role).get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,kwargs,allowed", BROWSER_PAGES, ids=PAGE_IDS)
def test_browser_page_sends_anonymous_to_login(client, world, name, kwargs, allowed):
    response = client.get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ROLES)
def test_starting_a_checklist_in_the_browser(browser_as, world, role):
    url = reverse("contracts:checklist-create", kwargs={"offer_pk": world["bare"].pk})
    response = browser_as(role).post(url)
    if role in LEGAL:
        assert response.status_code == 302
        assert response["Location"] == reverse(
            "contracts:checklist", kwargs={"offer_pk": world["bare"].pk}
        )
        assert world["bare"].clause_checklist.items.count() == 11
    else:
        assert response.status_code == 403


def test_starting_a_checklist_sends_anonymous_to_login(client, world):
    url = reverse("contracts:checklist-create", kwargs={"offer_pk": world["bare"].pk})
    assert client.post(url)["Location"].startswith(reverse("login"))


API_CALLS = [
    ("get", lambda w: "/api/v1/clause-checklists/", None, EVERYONE, 200),
    ("get", lambda w: f"/api/v1/clause-checklists/{w['checklist'].pk}/", None, EVERYONE, 200),
    (
        "post",
        lambda w: "/api/v1/clause-checklists/",
        lambda w: {"offer": w["bare"].pk},
        LEGAL,
        201,
    ),
    (
        "patch",
        lambda w: f"/api/v1/clause-checklists/{w['checklist'].pk}/",
        lambda w: {
            "items": [{"id": w["red"].pk, "note": "Asked the vendor"}],
            "change_reason": "Follow-up",
            "version": type(w["checklist"]).objects.get(pk=w["checklist"].pk).version,
        },
        LEGAL,
        200,
    ),
    ("get", lambda w: "/api/v1/red-flag-waivers/", None, EVERYONE, 200),
    (
        "post",
        lambda w: "/api/v1/red-flag-waivers/",
        lambda w: {"item": w["red"].pk, "reason": "Credits are enough for us"},
        LEGAL,
        201,
    ),
    ("get", lambda w: "/api/v1/checklist-templates/", None, EVERYONE, 200),
    (
        "get",
        lambda w: f"/api/v1/checklist-templates/{w['checklist'].template_id}/",
        None,
        EVERYONE,
        200,
    ),
    (
        "post",
        lambda w: "/api/v1/checklist-templates/",
        lambda w: {"note": "Short list", "items": [{"key": "sla", "title": "SLA"}]},
        LEGAL,
        201,
    ),
    ("get", lambda w: f"/api/v1/cases/{w['case'].pk}/clause-red-flags/", None, EVERYONE, 200),
]
API_IDS = [f"{c[0]} {i}" for i, c in enumerate(API_CALLS)]


@pytest.mark.parametrize("method,path,body,allowed,success", API_CALLS, ids=API_IDS)
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, world, method, path, body, allowed, success, role):
    response = getattr(api_as(role), method)(
        path(world), body(world) if body else None, format="json"
    )
    assert response.status_code == (success if role in allowed else 403), response.content


@pytest.mark.parametrize("method,path,body,allowed,success", API_CALLS, ids=API_IDS)
def test_api_refuses_anonymous_with_401(client, world, method, path, body, allowed, success):
    response = getattr(client, method)(path(world), content_type="application/json")
    assert response.status_code == 401


@pytest.mark.parametrize("role", ROLES)
def test_put_is_not_offered(api_as, world, role):
    response = api_as(role).put(
        f"/api/v1/clause-checklists/{world['checklist'].pk}/", {}, format="json"
    )
    assert response.status_code in (403, 405)

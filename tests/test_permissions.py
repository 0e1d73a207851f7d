"""Every view and endpoint, for every role: allowed, 403, and anonymous.

The tables below are the product's access policy (docs/roles.md) written out;
a change to who may do what has to change them too.
"""

import copy

import pytest
from django.urls import reverse

from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
PROCUREMENT = {"priya", "ada"}
TECH = {"tariq", "ada"}
SCORERS = {"priya", "tariq", "ada"}
CASE_EDITORS = {"priya", "tariq", "ada"}


def _v(record) -> int:
    """The record's current version, as a client that just read it would send."""
    return type(record)._default_manager.get(pk=record.pk).version


@pytest.fixture(scope="module")
def _world(module_people):
    case = make_case(module_people["priya"])
    offer = make_offer(module_people["priya"], case, spec=FULL_SPEC)
    return {"case": case, "offer": offer, "vendor": offer.vendor}


@pytest.fixture
def world(_world, people):
    """A case with one offer, built once for the module; each test its copy."""
    return copy.deepcopy(_world)


# (url name, kwargs builder, roles allowed to GET)
BROWSER_PAGES = [
    ("cases:list", lambda w: {}, EVERYONE),
    ("cases:create", lambda w: {}, PROCUREMENT),
    ("cases:detail", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("cases:area", lambda w: {"pk": w["case"].pk, "area": "approval"}, EVERYONE),
    ("cases:area", lambda w: {"pk": w["case"].pk, "area": "costs"}, EVERYONE),
    ("approvals:dashboard", lambda w: {}, EVERYONE),
    ("approvals:waiting", lambda w: {}, EVERYONE),
    ("approvals:findings", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("cases:edit", lambda w: {"pk": w["case"].pk}, CASE_EDITORS),
    ("cases:waive", lambda w: {"pk": w["case"].pk}, PROCUREMENT),
    ("cases:history", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("vendors:list", lambda w: {}, EVERYONE),
    ("vendors:create", lambda w: {}, PROCUREMENT),
    ("vendors:detail", lambda w: {"pk": w["vendor"].pk}, EVERYONE),
    ("cases:search", lambda w: {}, EVERYONE),
    # Across cases, for those who answer for the money and the process (and finance).
    ("cases:portfolio", lambda w: {}, {"priya", "aude", "ada"}),
    # The vendors' reassessments, of the cases each may read.
    ("cases:reassessments", lambda w: {}, EVERYONE),
    ("vendors:edit", lambda w: {"pk": w["vendor"].pk}, PROCUREMENT),
    # The vendor's master data: its owner and cycle (procurement) and a tier set by hand
    # (procurement or legal); contacts by procurement; sub-processors and certifications
    # by procurement and legal.
    ("vendors:stewardship", lambda w: {"pk": w["vendor"].pk}, {"priya", "lena", "ada"}),
    ("vendors:contact-create", lambda w: {"pk": w["vendor"].pk}, PROCUREMENT),
    ("vendors:sub-processor-create", lambda w: {"pk": w["vendor"].pk}, {"priya", "lena", "ada"}),
    ("vendors:certification-create", lambda w: {"pk": w["vendor"].pk}, {"priya", "lena", "ada"}),
    ("offers:create", lambda w: {"case_pk": w["case"].pk}, PROCUREMENT),
    ("offers:detail", lambda w: {"pk": w["offer"].pk}, EVERYONE),
    ("offers:edit", lambda w: {"pk": w["offer"].pk}, PROCUREMENT),
    ("offers:spec", lambda w: {"pk": w["offer"].pk}, TECH),
    ("sizing:calculator", lambda w: {}, EVERYONE),
    ("scorecards:comparison", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("scorecards:matrix", lambda w: {"pk": w["case"].pk}, EVERYONE),
    ("scorecards:scorecard", lambda w: {"offer_pk": w["offer"].pk}, SCORERS),
    ("scorecards:criteria", lambda w: {"pk": w["case"].pk}, PROCUREMENT),
    # Spreadsheets: a scorecard's workbook to everyone who reads scorecards; its import
    # (GET: back to the scorecard page) to scorers. The other workbooks need records this
    # world lacks: tests/test_spreadsheets.py walks them per role.
    ("scorecards:scorecard-workbook", lambda w: {"offer_pk": w["offer"].pk}, EVERYONE),
    ("scorecards:scorecard-import", lambda w: {"offer_pk": w["offer"].pk}, SCORERS),
    ("contracts:checklist-import", lambda w: {"offer_pk": w["offer"].pk}, {"lena", "ada"}),
    # Signed contract documents: read by all who read the checklist, uploaded by legal and
    # procurement (tests/contracts/test_documents.py walks the rest per role).
    ("contracts:documents", lambda w: {"offer_pk": w["offer"].pk}, EVERYONE),
    ("contracts:document-upload", lambda w: {"offer_pk": w["offer"].pk}, {"priya", "lena", "ada"}),
    ("comments:thread", lambda w: {"kind": "offer", "pk": w["offer"].pk}, EVERYONE),
    ("accounts:two_factor", lambda w: {}, EVERYONE),
    ("accounts:two_factor_verify", lambda w: {}, EVERYONE),  # without an authenticator: onward
    ("accounts:notifications", lambda w: {}, EVERYONE),  # each person's own choice only
    # Administration: administrators only.
    ("accounts:people", lambda w: {}, {"ada"}),
    ("accounts:invite", lambda w: {}, {"ada"}),
    ("accounts:invitations", lambda w: {}, {"ada"}),
    ("accounts:provisioning", lambda w: {}, {"ada"}),
    ("accounts:person", lambda w: {"pk": w["case"].owner_id}, {"ada"}),
    ("scorecards:presets", lambda w: {}, {"ada"}),
    ("scorecards:preset-publish", lambda w: {"workload": "training"}, {"ada"}),
]


@pytest.mark.parametrize("name,kwargs,allowed", BROWSER_PAGES, ids=[p[0] for p in BROWSER_PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_browser_page_access(browser_as, world, name, kwargs, allowed, role):
    response = browser_as(role).get(reverse(name, kwargs=kwargs(world)), follow=True)
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize(
    "name,kwargs,allowed",
    BROWSER_PAGES,
    ids=[f"{p[0]}{p[1].__code__.co_consts}" for p in BROWSER_PAGES],
)
def test_browser_page_sends_anonymous_to_login(client, world, name, kwargs, allowed):
    url = reverse(name, kwargs=kwargs(world))
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


# (method, path builder, body builder, roles allowed, success status)
API_CALLS = [
    ("get", lambda w: "/api/v1/cases/", None, EVERYONE, 200),
    ("post", lambda w: "/api/v1/cases/", lambda w: {"name": "New"}, PROCUREMENT, 201),
    ("get", lambda w: f"/api/v1/cases/{w['case'].pk}/", None, EVERYONE, 200),
    (
        "patch",
        lambda w: f"/api/v1/cases/{w['case'].pk}/",
        lambda w: {"requirements": "More", "change_reason": "Clarified", "version": _v(w["case"])},
        CASE_EDITORS,
        200,
    ),
    (
        "post",
        lambda w: f"/api/v1/cases/{w['case'].pk}/waive-offer-minimum/",
        lambda w: {"reason": "Only two vendors hold export licences"},
        PROCUREMENT,
        200,
    ),
    ("get", lambda w: "/api/v1/vendors/", None, EVERYONE, 200),
    (
        "post",
        lambda w: "/api/v1/vendors/",
        lambda w: {"name": "Nimbus", "jurisdiction": "Japan"},
        PROCUREMENT,
        201,
    ),
    (
        "patch",
        lambda w: f"/api/v1/vendors/{w['vendor'].pk}/",
        lambda w: {"regions": "tokyo-1", "change_reason": "New region", "version": _v(w["vendor"])},
        PROCUREMENT,
        200,
    ),
    ("get", lambda w: "/api/v1/vendor-contacts/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/vendor-sub-processors/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/vendor-certifications/", None, EVERYONE, 200),
    (
        "post",
        lambda w: "/api/v1/vendor-sub-processors/",
        lambda w: {"vendor": w["vendor"].pk, "name": "Colo", "country": "JP", "service": "Racks"},
        {"priya", "lena", "ada"},
        201,
    ),
    (
        "patch",
        lambda w: f"/api/v1/vendors/{w['vendor'].pk}/stewardship/",
        lambda w: {
            "tier_override": "high",
            "tier_override_reason": "Board",
            "change_reason": "Board",
            "version": _v(w["vendor"]),
        },
        {"priya", "lena", "ada"},
        200,
    ),
    ("get", lambda w: "/api/v1/reassessments/", None, EVERYONE, 200),
    # Procurement starts one early; this vendor has no chosen offer in use (400).
    (
        "post",
        lambda w: "/api/v1/reassessments/start/",
        lambda w: {"vendor": w["vendor"].pk},
        PROCUREMENT,
        400,
    ),
    ("get", lambda w: "/api/v1/offers/", None, EVERYONE, 200),
    ("get", lambda w: f"/api/v1/offers/{w['offer'].pk}/", None, EVERYONE, 200),
    (
        "patch",
        lambda w: f"/api/v1/offers/{w['offer'].pk}/",
        lambda w: {"notes": "Call back", "change_reason": "Note", "version": _v(w["offer"])},
        PROCUREMENT,
        200,
    ),
    ("get", lambda w: f"/api/v1/declared-specs/{w['offer'].pk}/", None, EVERYONE, 200),
    (
        "patch",
        lambda w: f"/api/v1/declared-specs/{w['offer'].pk}/",
        lambda w: {
            "cuda_version": "12.6",
            "change_reason": "Revised quote",
            "version": _v(w["offer"].declared_spec),
        },
        TECH,
        200,
    ),
    ("get", lambda w: "/api/v1/sizing/presets/", None, EVERYONE, 200),
    (
        "post",
        lambda w: "/api/v1/sizing/",
        lambda w: {
            "model_preset": "llama-3.1-8b",
            "weight_dtype": "bf16",
            "kv_dtype": "bf16",
            "card_memory_gib": "79.6",
            "context_tokens": 8192,
            "target_concurrency": 16,
            "tensor_parallel": 1,
        },
        EVERYONE,
        200,
    ),
    (
        "put",
        lambda w: f"/api/v1/cases/{w['case'].pk}/compute-demand/",
        lambda w: {
            "model_preset": "llama-3.1-8b",
            "weight_dtype": "bf16",
            "kv_dtype": "bf16",
            "card_memory_gib": "79.6",
            "context_tokens": 8192,
            "target_concurrency": 16,
            "tensor_parallel": 1,
        },
        TECH,
        201,
    ),
    ("get", lambda w: "/api/v1/criteria-sets/", None, EVERYONE, 200),
    (
        "post",
        lambda w: "/api/v1/criteria-sets/",
        lambda w: {
            "case": w["case"].pk,
            "criteria": [
                {"key": "price", "label": "Price", "weight": 60},
                {"key": "sla", "label": "SLA", "weight": 40},
            ],
            "note": "Simpler set",
        },
        PROCUREMENT,
        201,
    ),
    ("get", lambda w: "/api/v1/scorecards/", None, EVERYONE, 200),
    (
        "post",
        lambda w: "/api/v1/scorecards/",
        lambda w: {"offer": w["offer"].pk, "scores": {"pricing": {"score": 4}}},
        SCORERS,
        201,
    ),
    ("get", lambda w: f"/api/v1/cases/{w['case'].pk}/comparison/", None, EVERYONE, 200),
    ("get", lambda w: f"/api/v1/cases/{w['case'].pk}/findings/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/finding-acceptances/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/", None, EVERYONE, 200),
]
API_IDS = [f"{c[0]} {i}" for i, c in enumerate(API_CALLS)]


@pytest.mark.parametrize("method,path,body,allowed,success", API_CALLS, ids=API_IDS)
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, world, method, path, body, allowed, success, role):
    api = api_as(role)
    response = getattr(api, method)(path(world), body(world) if body else None, format="json")
    expected = success if role in allowed else 403
    assert response.status_code == expected, response.content


@pytest.mark.parametrize("method,path,body,allowed,success", API_CALLS, ids=API_IDS)
def test_api_refuses_anonymous_with_401(client, world, method, path, body, allowed, success):
    response = getattr(client, method)(path(world), content_type="application/json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_session_authentication_works_for_the_api(browser_as, world):
    response = browser_as("aude").get("/api/v1/cases/")
    assert response.status_code == 200
    assert response.json()["count"] == 1


def test_endpoint_without_declared_permissions_denies_everyone(rf, ada):
    from rest_framework.views import APIView

    class Forgotten(APIView):
        def get(self, request):
            return None

    from rest_framework.test import force_authenticate

    request = rf.get("/x")
    force_authenticate(request, user=ada)
    assert Forgotten.as_view()(request).status_code == 403

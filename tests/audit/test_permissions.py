"""Every audit page and endpoint, for every role: allowed, 403, and anonymous.

Every role that reads cases reads their timeline; exports, the chain page and
verification belong to the auditor and the admin (docs/roles.md).
"""

import pytest
from django.urls import reverse

from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
AUDITORS = {"aude", "ada"}


@pytest.fixture
def world(priya):
    case = make_case(priya)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    return {"case": case, "offer": offer}


# (url name, kwargs builder, roles allowed to GET)
BROWSER_PAGES = [
    ("audit:case-timeline", lambda w: {"pk": w["case"].pk}, EVERYONE),
    (
        "audit:record-timeline",
        lambda w: {"content_type": "offers.offer", "object_id": w["offer"].pk},
        EVERYONE,
    ),
    ("audit:case-timeline-csv", lambda w: {"pk": w["case"].pk}, AUDITORS),
    ("audit:case-timeline-json", lambda w: {"pk": w["case"].pk}, AUDITORS),
    ("audit:case-export", lambda w: {"pk": w["case"].pk}, AUDITORS),
    ("audit:chain", lambda w: {}, AUDITORS),
    ("audit:verify-export", lambda w: {}, AUDITORS),
]


@pytest.mark.parametrize("name,kwargs,allowed", BROWSER_PAGES, ids=[p[0] for p in BROWSER_PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_browser_page_access(browser_as, world, name, kwargs, allowed, role):
    response = browser_as(role).get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,kwargs,allowed", BROWSER_PAGES, ids=[p[0] for p in BROWSER_PAGES])
def test_browser_page_sends_anonymous_to_login(client, world, name, kwargs, allowed):
    response = client.get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ROLES)
def test_verify_now_button(browser_as, world, role):
    from apps.audit.models import ChainVerification

    response = browser_as(role).post(reverse("audit:chain-verify"), {"next": "/cases/"})
    if role in AUDITORS:
        assert response.status_code == 302 and response["Location"] == "/cases/"
        assert ChainVerification.objects.get().requested_by.username == role
    else:
        assert response.status_code == 403
        assert not ChainVerification.objects.exists()


def test_verify_now_sends_anonymous_to_login_and_ignores_foreign_next(client, browser_as, world):
    response = client.post(reverse("audit:chain-verify"))
    assert response["Location"].startswith(reverse("login"))
    response = browser_as("aude").post(
        reverse("audit:chain-verify"), {"next": "https://evil.example/"}
    )
    assert response["Location"] == reverse("audit:chain")


def test_verify_export_upload_is_refused_to_other_roles(browser_as, world):
    for role in ["priya", "lena", "tariq"]:
        response = browser_as(role).post(reverse("audit:verify-export"), {})
        assert response.status_code == 403


def test_a_record_type_the_role_may_not_view_is_refused(browser_as, world, priya):
    # Harness tokens belong to the tech lead and auditors, not procurement.
    from apps.audit.sources import source_by_key

    source = source_by_key("evidence.harnesstoken")
    if source is None:
        pytest.skip("the evidence app is not installed")
    assert not priya.has_perm(source.view_permission)
    url = reverse("audit:record-timeline", kwargs={"content_type": source.key, "object_id": 1})
    assert browser_as("priya").get(url).status_code == 403


def test_unknown_record_types_and_records_without_history_are_404(browser_as, world):
    client = browser_as("aude")
    for content_type, object_id in [("nope.nothing", 1), ("offers.offer", 999999)]:
        url = reverse(
            "audit:record-timeline",
            kwargs={"content_type": content_type, "object_id": object_id},
        )
        assert client.get(url).status_code == 404


# (method, path builder, roles allowed, success status)
API_CALLS = [
    ("get", lambda w: "/api/v1/audit/chain/", AUDITORS, 200),
    ("post", lambda w: "/api/v1/audit/chain/verify/", AUDITORS, 200),
    ("get", lambda w: f"/api/v1/cases/{w['case'].pk}/timeline/", EVERYONE, 200),
]


@pytest.mark.parametrize("method,path,allowed,status", API_CALLS, ids=[c[0] for c in API_CALLS])
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, world, method, path, allowed, status, role):
    response = getattr(api_as(role), method)(path(world), format="json")
    assert response.status_code == (status if role in allowed else 403)


@pytest.mark.parametrize("method,path,allowed,status", API_CALLS, ids=[c[0] for c in API_CALLS])
def test_api_anonymous_is_401(world, method, path, allowed, status):
    from rest_framework.test import APIClient

    assert getattr(APIClient(), method)(path(world), format="json").status_code == 401

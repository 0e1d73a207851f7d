"""Every acceptance page and endpoint, for every role (issue #9 item 9, docs/roles.md).

Tech leads (and admin) plan, record results, attach files and sign off;
procurement, legal and auditors read; anonymous visitors are sent to log in (401
on the API). One world per role keeps this affordable; each call is named in
the assertion message.
"""

import copy

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from apps.acceptance.models import AcceptanceAttachment, AcceptancePlan, AcceptanceResult
from apps.acceptance.services import acceptance_attachment_add
from apps.approvals.services import case_submit_for_approval
from tests.acceptance.factories import approved_offer, make_plan, record_faults
from tests.factories import make_case, make_offer
from tests.stored import store_folder

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
TECH = {"tariq", "ada"}
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _world(module_people, tmp_path_factory):
    """Built once for the module, its attachment stored in a folder of its own."""
    tariq, priya = module_people["tariq"], module_people["priya"]
    media = tmp_path_factory.mktemp("acceptance-media")
    with override_settings(MEDIA_ROOT=media):
        case, offer = approved_offer(module_people)
        plan = make_plan(tariq, offer)
        [result] = record_faults(tariq, plan, kinds=("network",))
        attachment = acceptance_attachment_add(
            actor=tariq, result=result, upload=SimpleUploadedFile("net.log", b"link down\n")
        )
        pending = make_case(priya)
        spare = make_offer(priya, pending)
        pending.refresh_from_db()
        case_submit_for_approval(actor=priya, case=pending)
    return media, {
        "case": case,
        "plan": plan,
        "result": result,
        "attachment": attachment,
        "spare": spare,
    }


@pytest.fixture
def world(_world, people):
    """The module's world, each test its copy, with the attachment in the test's storage."""
    media, built = _world
    store_folder(media)
    return copy.deepcopy(built)


PAGES = [
    ("acceptance:case", "case", EVERYONE),
    ("acceptance:plan_create", "case", TECH),
    ("acceptance:plan", "plan", EVERYONE),
    ("acceptance:plan_edit", "plan", TECH),
    ("acceptance:result_create", "plan", TECH),
    ("acceptance:signoff", "plan", TECH),
    ("acceptance:result_edit", "result", TECH),
    ("acceptance:attachment_add", "result", TECH),
    ("acceptance:attachment_download", "attachment", EVERYONE),
    ("cases:detail", "case", EVERYONE),
]


def _url(world, name, key):
    return reverse(name, kwargs={"pk": world[key].pk})


@pytest.mark.parametrize("role", ROLES)
def test_pages_for_each_role(browser_as, world, role):
    client = browser_as(role)
    for name, key, allowed in PAGES:
        response = client.get(_url(world, name, key))
        assert response.status_code == (200 if role in allowed else 403), (name, role)


@pytest.mark.parametrize("role", ROLES)
def test_page_writes_for_each_role(browser_as, world, role):
    client = browser_as(role)
    before = AcceptanceResult.objects.count()
    response = client.post(
        _url(world, "acceptance:result_create", "plan"),
        {
            "layer": "stability",
            "fault_kind": "node_killed",
            "activity": "Killed node 2",
            "outcome": "passed",
            "resumed_from_checkpoint": "true",
            "duplicated_data": "false",
            "performed_at": "2026-11-28T10:00",
        },
    )
    assert response.status_code == (302 if role in TECH else 403)
    assert AcceptanceResult.objects.count() == before + (role in TECH)
    signoff = client.post(_url(world, "acceptance:signoff", "plan"), {"comment": "ok"})
    # Allowed tech leads reach the service, which refuses: nothing has passed yet.
    assert signoff.status_code == (200 if role in TECH else 403)


def test_pages_send_anonymous_to_login(client, world):
    for name, key, _allowed in PAGES:
        response = client.get(_url(world, name, key))
        assert response.status_code == 302, name
        assert response["Location"].startswith(reverse("login"))


def _api_calls(world, role):
    plan, result = world["plan"], world["result"]
    return [
        ("get", "/api/v1/acceptance-plans/", None, EVERYONE, 200),
        ("get", f"/api/v1/acceptance-plans/{plan.pk}/", None, EVERYONE, 200),
        ("get", f"/api/v1/acceptance-plans/{plan.pk}/state/", None, EVERYONE, 200),
        (
            "patch",
            f"/api/v1/acceptance-plans/{plan.pk}/",
            {"soak_minutes": 45, "change_reason": f"{role}: longer soak", "version": plan.version},
            TECH,
            200,
        ),
        ("get", "/api/v1/acceptance-results/", None, EVERYONE, 200),
        ("get", f"/api/v1/acceptance-results/{result.pk}/", None, EVERYONE, 200),
        (
            "post",
            "/api/v1/acceptance-results/",
            {
                "plan": plan.pk,
                "layer": "stability",
                "fault_kind": "maintenance",
                "activity": f"{role}: maintenance window",
                "outcome": "passed",
                "resumed_from_checkpoint": True,
                "duplicated_data": False,
            },
            TECH,
            201,
        ),
        (
            "patch",
            f"/api/v1/acceptance-results/{result.pk}/",
            {
                "notes": f"{role} re-read the logs",
                "change_reason": "Notes",
                "version": result.version,
            },
            TECH,
            200,
        ),
    ]


@pytest.mark.parametrize("role", ROLES)
def test_api_for_each_role(api_as, world, role):
    api = api_as(role)
    signoff = api.post(
        f"/api/v1/acceptance-plans/{world['plan'].pk}/sign-off/", {"comment": "ok"}, format="json"
    )
    # Before any write of this test: tariq recorded the results and may not sign off;
    # ada reaches the rules, which refuse (nothing measured yet).
    assert signoff.status_code == {"tariq": 403, "ada": 400}.get(role, 403), signoff.content
    for method, path, body, allowed, success in _api_calls(world, role):
        response = getattr(api, method)(path, body, format="json")
        expected = success if role in allowed else 403
        assert response.status_code == expected, (method, path, role, response.content)
    created = api.post("/api/v1/acceptance-plans/", {"offer": world["spare"].pk}, format="json")
    assert created.status_code == (201 if role in TECH else 403), created.content
    upload = api.post(
        f"/api/v1/acceptance-results/{world['result'].pk}/attachments/",
        {"file": SimpleUploadedFile("shot.png", b"\x89PNG fake")},
        format="multipart",
    )
    assert upload.status_code == (201 if role in TECH else 403), upload.content
    if role not in TECH:
        assert AcceptancePlan.objects.count() == 1
        assert AcceptanceAttachment.objects.count() == 1


def test_api_refuses_anonymous_with_401(client, world):
    calls = _api_calls(world, "anonymous") + [
        ("post", "/api/v1/acceptance-plans/", {}, set(), 0),
        ("post", f"/api/v1/acceptance-results/{world['result'].pk}/attachments/", {}, set(), 0),
        ("post", f"/api/v1/acceptance-plans/{world['plan'].pk}/sign-off/", {}, set(), 0),
    ]
    for method, path, _body, _allowed, _success in calls:
        response = getattr(client, method)(path, content_type="application/json")
        assert response.status_code == 401, (method, path)

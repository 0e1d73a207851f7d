"""The acceptance through HTTP: the API end to end, the pages, and their query counts."""

import copy
import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.acceptance.models import AcceptanceAttachment
from apps.cases.models import ProcurementCase
from tests.acceptance.factories import approved_offer, make_plan, record_faults
from tests.pages import whole_case

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _approved(module_people):
    """priya's case with its first offer approved, built once for the module's tests."""
    return approved_offer(module_people)


@pytest.fixture
def approved(_approved, db):
    """The module's approved case and offer, copies for one test (its writes are undone)."""
    return copy.deepcopy(_approved)


def test_api_acceptance_end_to_end(approved, api_as, people, tomas, passing_harness):
    case, offer = approved
    tariq = api_as("tariq")
    created = tariq.post("/api/v1/acceptance-plans/", {"offer": offer.pk}, format="json")
    assert created.status_code == 201, created.content
    plan = created.json()
    assert (plan["soak_minutes"], plan["fault_minimum"], plan["ladder"]) == (30, 3, "1,4,8,16,32")
    edited = tariq.patch(
        f"/api/v1/acceptance-plans/{plan['id']}/",
        {"required_safe_concurrency": 16, "change_reason": "Target load", "version": 1},
        format="json",
    )
    assert edited.status_code == 200 and edited.json()["version"] == 2
    stale = tariq.patch(
        f"/api/v1/acceptance-plans/{plan['id']}/",
        {"soak_minutes": 60, "change_reason": "Longer", "version": 1},
        format="json",
    )
    assert stale.status_code == 409 and stale.json()["current_version"] == 2
    for kind in ("network", "node_killed", "maintenance"):
        response = tariq.post(
            "/api/v1/acceptance-results/",
            {
                "plan": plan["id"],
                "layer": "stability",
                "fault_kind": kind,
                "activity": f"Injected {kind}",
                "outcome": "passed",
                "resumed_from_checkpoint": True,
                "duplicated_data": False,
            },
            format="json",
        )
        assert response.status_code == 201, response.content
    result_id = response.json()["id"]
    upload = tariq.post(
        f"/api/v1/acceptance-results/{result_id}/attachments/",
        {"file": SimpleUploadedFile("maintenance.log", b"drained gpu-04\n")},
        format="multipart",
    )
    assert upload.status_code == 201
    assert upload.json()["sha256"] == hashlib.sha256(b"drained gpu-04\n").hexdigest()
    state = tariq.get(f"/api/v1/acceptance-plans/{plan['id']}/state/").json()
    assert state["overall"] == "passed" and state["safe_operating_level"] == 32
    assert [layer["status"] for layer in state["layers"]] == ["passed"] * 4 + ["not_applicable"]
    assert (
        tariq.post(
            f"/api/v1/acceptance-plans/{plan['id']}/sign-off/", {"comment": "ok"}, format="json"
        ).status_code
        == 403
    )  # tariq recorded the results
    signed = api_as("tomas").post(
        f"/api/v1/acceptance-plans/{plan['id']}/sign-off/",
        {"comment": "Four layers pass"},
        format="json",
    )
    assert signed.status_code == 201, signed.content
    state = tariq.get(f"/api/v1/acceptance-plans/{plan['id']}/state/").json()
    assert state["accepted"] and state["case_status"] == "accepted"
    case.refresh_from_db()
    assert case.status == ProcurementCase.Status.ACCEPTED


def test_api_state_names_the_failed_criterion(approved, api_as, people, tariq, monkeypatch):
    from tests.acceptance.factories import harness_measures
    from tests.acceptance.measures import correctness, soak

    harness_measures(
        monkeypatch, soak_run=soak(minutes=30, restarts=[29]), correctness_run=correctness(99, 100)
    )
    _case, offer = approved
    plan = make_plan(tariq, offer)
    state = api_as("aude").get(f"/api/v1/acceptance-plans/{plan.pk}/state/").json()
    layers = {layer["layer"]: layer for layer in state["layers"]}
    assert state["overall"] == "failed"
    assert layers["connectivity"]["status"] == "failed"
    assert "Restart-free soak: measured 29.0 min" in layers["connectivity"]["reasons"][0]
    assert "99 of 100 (99.00 %)" in layers["correctness"]["reasons"][0]
    assert layers["stability"]["status"] == "in_progress"


def test_api_upload_over_the_limit_stores_nothing(approved, api_as, people, tariq, settings):
    settings.ACCEPTANCE_ATTACHMENT_MAX_BYTES = 8
    _case, offer = approved
    [result] = record_faults(tariq, make_plan(tariq, offer), kinds=("network",))
    response = api_as("tariq").post(
        f"/api/v1/acceptance-results/{result.pk}/attachments/",
        {"file": SimpleUploadedFile("big.log", b"x" * 9)},
        format="multipart",
    )
    assert response.status_code == 400 and "larger than" in str(response.json())
    assert not AcceptanceAttachment.objects.exists()


def test_pages_show_layers_ladder_results_and_sign_off(
    approved, browser_as, people, tariq, tomas, passing_harness
):
    case, offer = approved
    plan = make_plan(tariq, offer)
    client = browser_as("tariq")
    response = client.post(
        reverse("acceptance:result_create", kwargs={"pk": plan.pk}),
        {
            "layer": "stability",
            "fault_kind": "network",
            "activity": "Injected jitter",
            "outcome": "passed",
            "resumed_from_checkpoint": "true",
            "duplicated_data": "false",
            "performed_at": "2026-11-28T10:00",
        },
    )
    assert response.status_code == 302
    [result] = plan.results.all()
    upload = client.post(
        reverse("acceptance:attachment_add", kwargs={"pk": result.pk}),
        {"file": SimpleUploadedFile("jitter.png", b"\x89PNG...")},
    )
    assert upload.status_code == 302
    attachment = AcceptanceAttachment.objects.get()
    page = client.get(reverse("acceptance:plan", kwargs={"pk": plan.pk})).content.decode()
    assert "Stability and recovery" in page and "1 of 3 done" in page
    assert "safe operating level" in page and attachment.sha256 in page
    download = client.get(reverse("acceptance:attachment_download", kwargs={"pk": attachment.pk}))
    assert b"".join(download.streaming_content) == b"\x89PNG..."
    refused = client.post(
        reverse("acceptance:attachment_add", kwargs={"pk": result.pk}),
        {"file": SimpleUploadedFile("tool.exe", b"MZ")},
    )
    assert "Files of this type are not taken here" in refused.content.decode()
    record_faults(tariq, plan, kinds=("node_killed", "maintenance"))
    signoff_url = reverse("acceptance:signoff", kwargs={"pk": plan.pk})
    own = client.post(signoff_url, {"comment": "mine"})
    assert "another tech lead signs it off" in own.content.decode()
    signed = browser_as("tomas").post(signoff_url, {"comment": "Four layers pass"})
    assert signed.status_code == 302
    case_page = whole_case(browser_as("aude"), case.pk)
    html = case_page.content.decode()
    assert "Acceptance" in html and "accepted" in html and "Signed off by Tomas" in html


def test_plan_edit_page_refuses_a_stale_version(approved, browser_as, people, tariq):
    _case, offer = approved
    plan = make_plan(tariq, offer)
    url = reverse("acceptance:plan_edit", kwargs={"pk": plan.pk})
    body = {
        "soak_minutes": 60,
        "expected_versions": "",
        "correctness_pass_pct": "100",
        "ladder": "1,4,8",
        "fault_minimum": 3,
        "baseline_throughput_tolerance_pct": "10",
        "baseline_latency_tolerance_pct": "10",
        "baseline_error_rate_tolerance_points": "0.1",
        "notes": "",
        "change_reason": "Longer",
        "version": 1,
    }
    assert browser_as("tariq").post(url, body).status_code == 302
    again = browser_as("tariq").post(url, {**body, "soak_minutes": 45})
    assert "Someone else saved this record" in again.content.decode()
    plan.refresh_from_db()
    assert (plan.soak_minutes, plan.ladder, plan.version) == (60, "1,4,8", 2)


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def test_query_counts_do_not_grow_with_results(approved, browser_as, api_as, people, tariq):
    _case, offer = approved
    plan = make_plan(tariq, offer)
    from apps.acceptance.services import acceptance_attachment_add

    [first] = record_faults(tariq, plan, kinds=("network",))
    acceptance_attachment_add(actor=tariq, result=first, upload=SimpleUploadedFile("a.log", b"a"))
    client = browser_as("aude")
    pages = [
        reverse("acceptance:plan", kwargs={"pk": plan.pk}),
        reverse("acceptance:case", kwargs={"pk": plan.case_id}),
        reverse("cases:detail", kwargs={"pk": plan.case_id}),
    ]
    api = api_as("aude")
    endpoints = ["/api/v1/acceptance-results/", f"/api/v1/acceptance-plans/{plan.pk}/state/"]
    one = [_queries(client, url) for url in pages] + [_queries(api, url) for url in endpoints]
    for kind in ("node_killed", "maintenance", "network", "other"):
        [extra] = record_faults(tariq, plan, kinds=(kind,))
        acceptance_attachment_add(
            actor=tariq, result=extra, upload=SimpleUploadedFile("x.log", b"x")
        )
    many = [_queries(client, url) for url in pages] + [_queries(api, url) for url in endpoints]
    assert many == one

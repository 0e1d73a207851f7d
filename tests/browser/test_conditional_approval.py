"""Approval subject to acceptance in Chromium, on the demo: tariq approves Aurora's offer
subject to its correctness being measured on the rented machine; nothing passes by the
deadline, so the approval lapses and the case waits for a fresh decision, tariq told;
he approves again on the same condition, the run passes, and the condition closes."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from apps.acceptance.conditions import settle_conditions
from apps.acceptance.tasks import settle_conditions_task
from apps.approvals.models import Approval, ApprovalPolicy
from apps.approvals.services import policy_record_update
from apps.cases.models import ProcurementCase
from apps.casework.demo import DEMO_CASE_NAME, DEMO_PASSWORD
from apps.core.models import Notification
from tests import demo_snapshot
from tests.acceptance.factories import harness_measures
from tests.acceptance.measures import correctness
from tests.factories import restore_default_templates

pytestmark = pytest.mark.whole_case


def _approve_subject_to_correctness(page, approval_url: str, due) -> None:
    page.goto(approval_url)
    decide = page.locator("form#decide")
    choice = decide.get_by_label("Offer")
    choice.select_option(
        label=choice.locator("option", has_text="Aurora").first.inner_text().strip()
    )
    decide.get_by_label("Subject to acceptance").check()
    decide.get_by_label("Correctness").check()
    decide.get_by_label("Acceptance due by").fill(due.isoformat())
    decide.get_by_label("Comment").fill("Order now; the core set runs on delivery.")
    decide.get_by_role("button", name="Record the decision").click()
    expect(page.locator(".messages")).to_contain_text("Decision recorded")


def test_an_approval_subject_to_acceptance_lapses_then_closes_on_a_passing_run(
    transactional_db, page, live_server, sign_in, screenshot, settings, tmp_path, monkeypatch
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    restore_default_templates()
    demo_snapshot.seed_demo_here()
    admin = get_user_model().objects.get(username="admin")
    for policy in ApprovalPolicy.objects.filter(in_force=True):
        # The demo's chain is walked in its own test; here the tech lead decides alone.
        policy_record_update(
            policy,
            actor=admin,
            fields={"in_force": False},
            reason="Tech lead decides alone in this test",
            expected_version=policy.version,
        )
    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    approval_url = f"{live_server.url}/cases/{case.pk}/approval/"
    today = timezone.localdate()

    sign_in("tariq", DEMO_PASSWORD)
    _approve_subject_to_correctness(page, approval_url, today + timedelta(days=7))
    in_force = page.locator("section.card", has_text="Decision in force")
    expect(in_force).to_contain_text("waiting for the acceptance")
    expect(in_force).to_contain_text("Correctness — not passed yet")
    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.APPROVED
    screenshot("subject-to-acceptance")

    # A week and a day later nothing has passed: the quarter-hourly check lets it lapse.
    settle_conditions(today=today + timedelta(days=8))
    page.goto(approval_url)
    expect(page.locator(".errorbox")).to_contain_text("Lapsed approval")
    expect(page.locator(".errorbox")).to_contain_text("Correctness")
    expect(page.locator("h1 .badge")).to_contain_text("Pending approval")
    told = Notification.objects.filter(summary__contains="lapsed")
    assert "tariq" in set(told.values_list("recipient__username", flat=True))

    # A fresh decision on the same condition; then the core set passes on the machine.
    _approve_subject_to_correctness(page, approval_url, today + timedelta(days=7))
    harness_measures(monkeypatch, correctness_run=correctness(50, 50))
    assert settle_conditions_task()["met"]
    page.goto(approval_url)
    expect(in_force).to_contain_text("acceptance passed")
    expect(in_force).to_contain_text("the approval holds without conditions")
    current = Approval.objects.get(case=case, superseded_at__isnull=True)
    assert current.condition_met_at is not None and current.lapsed_at is None
    screenshot("subject-to-acceptance-met")

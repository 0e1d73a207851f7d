"""The demo's approval policy end to end in Chromium, with three approvers, one of them a
delegate: the administrator records that fiona's approvals go to her for the week; tariq
approves Aurora's offer on its gates; lena, asked next on My work (personal data is
handled), approves; the administrator, asked next as fiona's delegate (more than
1,000,000 USD), approves; the case is approved and its chain shows who decided each step."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.approvals.models import ChainDecision
from apps.cases.models import ProcurementCase
from apps.casework.demo import DEMO_CASE_NAME, DEMO_PASSWORD
from tests import demo_snapshot
from tests.factories import restore_default_templates

pytestmark = pytest.mark.whole_case


def test_the_demo_policy_runs_tech_lead_legal_and_a_delegate_for_finance(
    transactional_db, page, live_server, sign_in, screenshot, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    restore_default_templates()
    demo_snapshot.seed_demo_here()
    case = ProcurementCase.objects.get(name=DEMO_CASE_NAME)
    approval_url = f"{live_server.url}/cases/{case.pk}/approval/"
    today = timezone.localdate()

    # The administrator records the delegation in the admin.
    sign_in("admin", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/admin/approvals/delegation/add/")
    page.select_option("#id_delegator", label="fiona")
    page.select_option("#id_delegate", label="admin")
    page.fill("#id_starts_on", today.isoformat())
    page.fill("#id_ends_on", (today + timedelta(days=7)).isoformat())
    page.fill("#id_note", "Fiona is away this week")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("added successfully")

    # The tech lead approves Aurora's offer: the chain starts and waits for legal.
    sign_in("tariq", DEMO_PASSWORD)
    page.goto(approval_url)
    expect(page.locator("#policy")).to_contain_text("Legal review")
    decide = page.locator("form#decide")
    choice = decide.get_by_label("Offer")
    choice.select_option(
        label=choice.locator("option", has_text="Aurora").first.inner_text().strip()
    )
    decide.get_by_label("Approved").check()
    decide.get_by_label("Comment").fill("Every gate holds.")
    decide.get_by_role("button", name="Record the decision").click()
    expect(page.locator(".messages")).to_contain_text("Decision recorded")
    chain = page.locator("#approval-chain")
    expect(chain).to_contain_text("Waiting for: Lena Vogel")
    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.PENDING_APPROVAL
    screenshot("chain-after-tech-lead")

    # Legal finds the step on My work and approves.
    sign_in("lena", DEMO_PASSWORD)
    page.get_by_role("link", name="Pending approval, Legal review").first.click()
    form = page.locator("form#chain-decide")
    form.get_by_label("Approved").check()
    form.get_by_label("Comment").fill("Names in prompts are covered by the assessment.")
    form.get_by_role("button", name="Record the decision").click()
    expect(page.locator(".messages")).to_contain_text("Decision recorded")
    expect(page.locator("#approval-chain")).to_contain_text("Waiting for: Ada Admin, Fiona Okafor")

    # The delegate finds finance's step on her own My work and approves for fiona.
    sign_in("admin", DEMO_PASSWORD)
    page.get_by_role("link", name="Pending approval, Finance").first.click()
    form = page.locator("form#chain-decide")
    form.get_by_label("Approved").check()
    form.get_by_label("Comment").fill("Within the year's budget.")
    form.get_by_role("button", name="Record the decision").click()
    expect(page.locator(".messages")).to_contain_text("Decision recorded")
    chain = page.locator("#approval-chain")
    expect(chain).to_contain_text("on behalf of Fiona Okafor")
    expect(chain).to_contain_text("Names in prompts are covered")
    expect(page.locator("h1 .badge")).to_have_text("Approved")
    screenshot("chain-approved")

    assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.APPROVED
    finance = ChainDecision.objects.get(chain__case=case, step=2)
    assert finance.decided_by.username == "admin" and finance.on_behalf_of.username == "fiona"

"""The budget: set and changed with a reason and a version; committed spend from the offer."""

from decimal import Decimal

import pytest
from django.urls import reverse

from apps.approvals.models import Approval
from apps.core.services import tracked_create
from apps.costs.models import Budget
from apps.costs.selectors import cost_view
from tests.costs.factories import make_budget
from tests.factories import make_case, make_offer

FORM = {
    "currency": "USD",
    "total_amount": "1900000",
    "monthly_amount": "160000",
    "thresholds_pct": "70, 90, 100",
    "gpus_per_instance": "8",
    "storage_per_gib_month": "0.02",
    "cross_region_per_gib": "0.05",
}


@pytest.fixture
def case(priya):
    return make_case(priya)


def test_priya_sets_then_changes_the_budget_on_the_page(browser_as, case):
    client = browser_as("priya")
    offer = make_offer(case.owner, case)
    url = reverse("costs:budget", args=[case.pk])
    assert client.post(url, {**FORM, "offer": offer.pk}).status_code == 302
    budget = Budget.objects.get()
    assert budget.thresholds_pct == [70, 90, 100] and budget.offer == offer

    response = client.post(url, {**FORM, "thresholds_pct": "50, 80", "version": 1})
    assert response.status_code == 400
    assert "Reason for this change" in response.content.decode()

    response = client.post(
        url,
        {**FORM, "thresholds_pct": "80, 50", "version": 1, "change_reason": "Finance asked"},
    )
    assert response.status_code == 302
    budget.refresh_from_db()
    assert budget.thresholds_pct == [50, 80] and budget.version == 2
    assert budget.history.first().history_change_reason == "Finance asked"
    assert budget.history.first().history_user.username == "priya"


def test_a_stale_version_is_refused_on_the_page_with_409(browser_as, priya, case):
    make_budget(priya, case)
    client = browser_as("priya")
    url = reverse("costs:budget", args=[case.pk])
    fresh = {**FORM, "version": 1, "change_reason": "Up"}
    assert client.post(url, {**fresh, "monthly_amount": "150000"}).status_code == 302
    response = client.post(url, {**fresh, "monthly_amount": "170000"})
    assert response.status_code == 409
    assert "Someone else saved this record" in response.content.decode()
    assert Budget.objects.get().monthly_amount == Decimal("150000")


@pytest.mark.parametrize(
    "changes,field,message",
    [
        ({"thresholds_pct": "70, 70"}, "thresholds_pct", "Each threshold may appear once."),
        ({"thresholds_pct": "seventy"}, "thresholds_pct", "whole percentages"),
        ({"thresholds_pct": "0, 90"}, "thresholds_pct", "not a whole percentage"),
        ({"monthly_amount": "2000000"}, "monthly_amount", "cannot exceed the total"),
        ({"total_amount": "-1"}, "total_amount", "greater than or equal to 0"),
        ({"currency": "EUR", "offer": "mine"}, "currency", "priced in USD"),
    ],
)
def test_bad_budgets_are_refused(browser_as, case, changes, field, message):
    offer = make_offer(case.owner, case)
    data = {**FORM, **changes}
    if data.get("offer") == "mine":
        data["offer"] = offer.pk
    response = browser_as("priya").post(reverse("costs:budget", args=[case.pk]), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Budget.objects.exists()


def test_an_offer_of_another_case_cannot_be_chosen(api_as, priya, case):
    other = make_offer(priya, make_case(priya))
    body = {"total_amount": "100", "monthly_amount": "10", "offer": other.pk}
    response = api_as("priya").put(f"/api/v1/cases/{case.pk}/costs/budget/", body, format="json")
    assert response.status_code == 400 and "offer" in response.json()


def test_api_budget_round_trip_with_409(api_as, case):
    api = api_as("priya")
    path = f"/api/v1/cases/{case.pk}/costs/budget/"
    offer = make_offer(case.owner, case)
    body = {"total_amount": "1900000", "monthly_amount": "160000", "offer": offer.pk}
    created = api.put(path, body, format="json")
    assert created.status_code == 201, created.content
    data = created.json()
    assert data["thresholds_pct"] == [70, 90, 100] and data["version"] == 1
    assert data["chosen_offer"] == offer.pk and data["chosen_offer_source"] == "picked"
    # 64 GPUs × 12 months × 730 h × 3.10, 30 % prepaid
    assert data["committed"]["contract_value"] == "1737984.00"
    assert data["committed"]["prepayment"] == "521395.20"
    assert data["committed_over_budget"] is False

    changed = api.put(
        path,
        {**body, "total_amount": "1500000", "version": 1, "change_reason": "Cut"},
        format="json",
    )
    assert changed.status_code == 200 and changed.json()["committed_over_budget"] is True
    stale = api.put(path, {**body, "version": 1, "change_reason": "Late"}, format="json")
    assert stale.status_code == 409
    assert stale.json()["current_version"] == 2
    missing_reason = api.put(path, {**body, "version": 2}, format="json")
    assert missing_reason.status_code == 400 and "change_reason" in missing_reason.json()


def test_the_approved_offer_wins_over_the_picked_one(priya, tariq, case):
    picked, approved = make_offer(priya, case), make_offer(priya, case, unit_price=Decimal("2.5"))
    make_budget(priya, case, offer=picked)
    assert cost_view(case).offer == picked
    tracked_create(
        Approval,
        actor=tariq,
        case=case,
        offer=approved,
        decision=Approval.Decision.APPROVED,
        decided_by=tariq,
        decided_at=case.created_at,
        comment="All gates hold",
    )
    view = cost_view(case)
    assert view.offer == approved and view.offer_source == "approved"
    assert view.committed.contract_value == 64 * 12 * 730 * Decimal("2.5")


def test_training_cases_need_job_limits(priya):
    case = make_case(priya, workload="training")
    make_budget(priya, case)
    assert cost_view(case).guardrail_problems == [
        "No maximum run time for training jobs.",
        "No maximum spend for training jobs.",
    ]
    bounded = make_case(priya, workload="training")
    make_budget(
        priya, bounded, training_max_run_hours=Decimal("72"), training_max_spend=Decimal("25000")
    )
    assert cost_view(bounded).guardrail_problems == []

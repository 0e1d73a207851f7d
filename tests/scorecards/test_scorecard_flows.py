"""Reviewers score offers; the comparison shows the arithmetic (docs/rules/offers.md#scorecard)."""

from decimal import Decimal

from django.urls import reverse

from apps.scorecards.models import CriteriaSet, Scorecard, ScoreEntry
from apps.scorecards.services import scorecard_save
from tests.factories import make_case, make_offer

ALL_FOURS = {
    f"score_{key}": "4"
    for key in (
        "pricing",
        "reliability",
        "security",
        "compliance",
        "availability",
        "exit_terms",
        "networking",
        "storage",
        "orchestration",
        "monitoring",
    )
}


def test_priya_scores_an_offer_in_one_form(browser_as, priya):
    case = make_case(priya)
    offer = make_offer(priya, case)
    client = browser_as("priya")
    response = client.post(
        reverse("scorecards:scorecard", kwargs={"offer_pk": offer.pk}),
        {**ALL_FOURS, "score_exit_terms": ""},
    )
    assert response.status_code == 302
    card = Scorecard.objects.get()
    assert card.entries.count() == 10
    page = client.get(reverse("scorecards:comparison", kwargs={"pk": case.pk})).content.decode()
    # 90 answered points × 4/5 = 72.00; exit terms (10 points) blank counts as 0.
    assert "72.00" in page
    assert "(1 blank)" in page


def test_revising_scores_needs_a_reason_and_keeps_history(browser_as, priya):
    case = make_case(priya)
    offer = make_offer(priya, case)
    client = browser_as("priya")
    url = reverse("scorecards:scorecard", kwargs={"offer_pk": offer.pk})
    client.post(url, ALL_FOURS)
    card = Scorecard.objects.get()
    refused = client.post(url, {**ALL_FOURS, "score_pricing": "2", "version": card.version})
    assert "change_reason" in refused.context["form"].errors
    client.post(
        url,
        {
            **ALL_FOURS,
            "score_pricing": "2",
            "version": card.version,
            "change_reason": "Prepayment premium found in the order form",
        },
    )
    entry = ScoreEntry.objects.get(criterion_key="pricing")
    assert entry.score == 2
    assert entry.history.first().history_change_reason == (
        "Prepayment premium found in the order form"
    )


def test_an_out_of_range_score_is_refused_through_the_api_and_nothing_is_saved(api_as, priya):
    offer = make_offer(priya, make_case(priya))
    response = api_as("priya").post(
        "/api/v1/scorecards/",
        {"offer": offer.pk, "scores": {"pricing": {"score": 7}, "sla": {"score": 3}}},
        format="json",
    )
    assert response.status_code == 400
    assert "scores" in response.json()
    assert not Scorecard.objects.exists() and not ScoreEntry.objects.exists()


def test_an_unknown_criterion_is_refused_and_nothing_is_saved(api_as, priya):
    offer = make_offer(priya, make_case(priya))
    response = api_as("priya").post(
        "/api/v1/scorecards/",
        {"offer": offer.pk, "scores": {"vibes": {"score": 3}}},
        format="json",
    )
    assert response.status_code == 400
    assert "score_vibes" in response.json()
    assert not Scorecard.objects.exists()


def test_weights_must_sum_to_100_in_the_browser(browser_as, priya):
    case = make_case(priya)
    form = {
        "criteria-TOTAL_FORMS": "2",
        "criteria-INITIAL_FORMS": "0",
        "criteria-0-key": "price",
        "criteria-0-label": "Price",
        "criteria-0-weight": "70",
        "criteria-1-key": "sla",
        "criteria-1-label": "SLA",
        "criteria-1-weight": "20",
        "note": "Simpler",
    }
    response = browser_as("priya").post(
        reverse("scorecards:criteria", kwargs={"pk": case.pk}), form
    )
    assert "Weights must sum to 100 points; they sum to 90." in response.content.decode()
    assert not CriteriaSet.objects.exists()
    browser_as("priya").post(
        reverse("scorecards:criteria", kwargs={"pk": case.pk}), {**form, "criteria-1-weight": "30"}
    )
    assert CriteriaSet.objects.get().revision == 1


def test_a_new_revision_leaves_old_scorecards_out_of_the_count(priya, pablo, api_as):
    case = make_case(priya)
    offer = make_offer(priya, case)
    scorecard_save(actor=priya, offer=offer, scores={"pricing": {"score": 5}})
    api_as("priya").post(
        "/api/v1/criteria-sets/",
        {
            "case": case.pk,
            "note": "Price only",
            "criteria": [{"key": "pricing", "label": "Price", "weight": 100}],
        },
        format="json",
    )
    body = api_as("priya").get(f"/api/v1/cases/{case.pk}/comparison/").json()
    assert body["criteria_revision"] == 2
    assert body["offers"][0]["total"] is None  # the old scorecard is not counted


def test_the_comparison_names_the_leader_and_tests_sensitivity(api_as, priya, pablo):
    case = make_case(priya)
    cheap = make_offer(priya, case, unit_price=Decimal("2.00"))
    solid = make_offer(priya, case, unit_price=Decimal("3.00"))
    for reviewer in (priya, pablo):
        scorecard_save(
            actor=reviewer,
            offer=cheap,
            scores={
                "pricing": {"score": 5},
                "reliability": {"score": 3},
                "security": {"score": 3},
                "compliance": {"score": 3},
                "availability": {"score": 3},
                "exit_terms": {"score": 3},
                "networking": {"score": 3},
                "storage": {"score": 3},
                "orchestration": {"score": 3},
                "monitoring": {"score": 3},
            },
        )
        scorecard_save(
            actor=reviewer,
            offer=solid,
            scores={
                "pricing": {"score": 2},
                "reliability": {"score": 4},
                "security": {"score": 3},
                "compliance": {"score": 3},
                "availability": {"score": 3},
                "exit_terms": {"score": 3},
                "networking": {"score": 3},
                "storage": {"score": 3},
                "orchestration": {"score": 3},
                "monitoring": {"score": 3},
            },
        )
    body = api_as("aude").get(f"/api/v1/cases/{case.pk}/comparison/").json()
    totals = {row["offer"]: row["total"] for row in body["offers"]}
    # cheap: 15×5/5 + 85×3/5 = 15 + 51 = 66; solid: 15×2/5 + 15×4/5 + 70×3/5 = 6+12+42 = 60.
    assert totals == {cheap.pk: "66.00", solid.pk: "60.00"}
    assert body["leaders"] == [cheap.pk]
    # Pricing −10 → 5 points, the other 85 scaled to 95: cheap 5 + 95×3/5 = 62.00;
    # solid 2 + 15×95/85×4/5 + 70×95/85×3/5 = 2 + 13.41 + 46.94 = 62.35 — the lead flips.
    assert body["sensitivity"]["stable"] is False
    flips = body["sensitivity"]["changes"]
    assert {"criterion": "pricing", "delta": "-10", "leaders": [solid.pk]} in flips
    prices = {row["offer"]: row["cost_per_gpu_hour"] for row in body["offers"]}
    assert Decimal(prices[cheap.pk]) < Decimal(prices[solid.pk])

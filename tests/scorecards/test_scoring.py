"""Scorecard arithmetic (docs/rules/offers.md#scorecard); numbers worked by hand."""

from decimal import Decimal

import pytest

from apps.scorecards.scoring import (
    DEFAULT_CRITERIA,
    Criterion,
    ScoringInputError,
    leader,
    leaders,
    offer_score,
    rescale_weights,
    score_errors,
    weight_sensitivity,
    weighted_total,
    weights_errors,
)

# A small set keeps the hand arithmetic readable: price 30, SLA 40, exit 30.
SMALL = (
    Criterion("pricing", "Price", 30),
    Criterion("reliability", "SLA", 40),
    Criterion("exit_terms", "Exit", 30),
)


def test_default_criteria_are_valid_and_complete():
    assert weights_errors(DEFAULT_CRITERIA) == []
    assert {c.key for c in DEFAULT_CRITERIA} == {
        "security",
        "reliability",
        "networking",
        "storage",
        "orchestration",
        "monitoring",
        "pricing",
        "availability",
        "exit_terms",
        "compliance",
    }


@pytest.mark.parametrize(
    ("scores", "expected_total"),
    [
        ({"pricing": 5, "reliability": 5, "exit_terms": 5}, Decimal("100.00")),
        ({"pricing": 0, "reliability": 0, "exit_terms": 0}, Decimal("0.00")),
        # 30×4/5 + 40×3/5 + 30×5/5 = 24 + 24 + 30 = 78
        ({"pricing": 4, "reliability": 3, "exit_terms": 5}, Decimal("78.00")),
        # 30×1/5 + 40×2/5 + 30×2/5 = 6 + 16 + 12 = 34
        ({"pricing": 1, "reliability": 2, "exit_terms": 2}, Decimal("34.00")),
    ],
)
def test_weighted_total_arithmetic(scores, expected_total):
    assert weighted_total(SMALL, scores).total == expected_total


def test_weighted_total_with_default_criteria():
    scores = {
        "pricing": 4,  # 15×4/5 = 12
        "reliability": 3,  # 15×3/5 = 9
        "security": 5,  # 12
        "compliance": 2,  # 12×2/5 = 4.8
        "availability": 4,  # 10×4/5 = 8
        "exit_terms": 1,  # 2
        "networking": 3,  # 8×3/5 = 4.8
        "storage": 5,  # 6
        "orchestration": 0,  # 0
        "monitoring": 2,  # 6×2/5 = 2.4
    }
    breakdown = weighted_total(DEFAULT_CRITERIA, scores)
    assert breakdown.total == Decimal("61.00")  # sum of the column above
    assert sum(row.contribution for row in breakdown.rows) == Decimal("61.0")
    assert breakdown.unanswered == ()


def test_unanswered_counts_as_zero_never_for_the_offer():
    # Alice scores price 4 (24 points), leaves SLA blank and omits exit terms.
    breakdown = weighted_total(SMALL, {"pricing": 4, "reliability": None})
    assert breakdown.total == Decimal("24.00")
    assert breakdown.unanswered == ("reliability", "exit_terms")
    blank = {row.key: row for row in breakdown.rows}["reliability"]
    assert blank.score is None
    assert blank.contribution == 0
    # A blank is exactly as bad as an explicit 0, never better.
    explicit = weighted_total(SMALL, {"pricing": 4, "reliability": 0, "exit_terms": 0})
    assert explicit.total == breakdown.total


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        ((), ["The scorecard has no criteria."]),
        (
            (Criterion("a", "A", 50), Criterion("b", "B", 40)),
            ["Weights must sum to 100; they sum to 90."],
        ),
        (
            (Criterion("a", "A", 110), Criterion("b", "B", -10)),
            ["Criterion 'b' has a negative weight (-10)."],
        ),
        (
            (Criterion("a", "A", 50), Criterion("a", "A again", 60)),
            [
                "Criterion key 'a' is used more than once.",
                "Weights must sum to 100; they sum to 110.",
            ],
        ),
    ],
)
def test_weights_errors(criteria, expected):
    assert weights_errors(criteria) == expected


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ({"pricing": 5, "reliability": 0, "exit_terms": None}, {}),
        ({"pricing": 6}, {"pricing": "Score 6 is outside 0–5."}),
        ({"reliability": -1}, {"reliability": "Score -1 is outside 0–5."}),
        ({"support": 3}, {"support": "'support' is not a criterion of this scorecard."}),
        ({"pricing": True}, {"pricing": "Score must be a whole number from 0 to 5."}),
        ({"pricing": 2.5}, {"pricing": "Score must be a whole number from 0 to 5."}),
    ],
)
def test_score_errors(scores, expected):
    assert score_errors(SMALL, scores) == expected


def test_invalid_input_is_refused_not_computed():
    with pytest.raises(ScoringInputError) as excinfo:
        weighted_total(SMALL, {"pricing": 7})
    assert excinfo.value.errors == {"pricing": "Score 7 is outside 0–5."}
    with pytest.raises(ScoringInputError, match="they sum to 30"):
        weighted_total(SMALL[:1], {"pricing": 3})


def test_offer_score_is_the_mean_over_reviewers():
    alice = {"pricing": 4, "reliability": 3, "exit_terms": 5}  # 78 (see above)
    bob = {"pricing": 2, "reliability": 5, "exit_terms": None}  # 12 + 40 + 0 = 52
    charlie = {}  # nothing answered: 0
    result = offer_score(SMALL, [alice, bob, charlie])
    assert result.reviewer_count == 3
    assert result.unscored is False
    assert result.total == Decimal("43.33")  # (78 + 52 + 0) / 3 = 43.333…
    assert [b.total for b in result.reviewers] == [Decimal("78.00"), Decimal("52.00"), 0]
    # Blank counts as 0 in the per-criterion mean too.
    assert result.criterion_means == {
        "pricing": Decimal("2.00"),  # (4 + 2 + 0) / 3
        "reliability": Decimal("2.67"),  # (3 + 5 + 0) / 3 = 2.666…
        "exit_terms": Decimal("1.67"),  # (5 + 0 + 0) / 3 = 1.666…
    }
    assert result.criterion_unanswered == {"pricing": 1, "reliability": 1, "exit_terms": 2}


def test_offer_score_rounds_half_up_to_cents():
    # One reviewer gives 1/5 on a 1-point criterion (0.2 points), seven leave
    # it blank: 0.2 / 8 = 0.025, shown as 0.03 (half up), not 0.02 (half even).
    criteria = (Criterion("a", "A", 1), Criterion("b", "B", 99))
    result = offer_score(criteria, [{"a": 1}] + [{}] * 7)
    assert result.total == Decimal("0.03")


def test_offer_without_reviewers_is_unscored():
    result = offer_score(SMALL, [])
    assert result.total is None
    assert result.unscored is True
    assert result.reviewer_count == 0
    assert result.criterion_means == {"pricing": None, "reliability": None, "exit_terms": None}


@pytest.mark.parametrize(
    ("totals", "expected_leader", "expected_leaders"),
    [
        ({"a": Decimal(70), "b": Decimal(64), "c": None}, "a", ("a",)),
        ({"a": Decimal("70.00"), "b": Decimal("70.00"), "c": Decimal(1)}, None, ("a", "b")),
        ({"a": None, "b": None}, None, ()),
        ({}, None, ()),
    ],
)
def test_leader_and_ties(totals, expected_leader, expected_leaders):
    assert leader(totals) == expected_leader
    assert leaders(totals) == expected_leaders


@pytest.mark.parametrize("criterion", DEFAULT_CRITERIA, ids=lambda c: c.key)
@pytest.mark.parametrize("delta", [10, -10, 3, -25])
def test_rescale_keeps_sum_exactly_100(criterion, delta):
    weights = rescale_weights(DEFAULT_CRITERIA, key=criterion.key, delta=delta)
    assert sum(weights.values()) == Decimal(100)
    assert weights[criterion.key] == max(criterion.weight + delta, 0)


def test_rescale_keeps_proportions_of_the_rest():
    weights = rescale_weights(SMALL, key="pricing", delta=10)
    # pricing 40; the rest shrinks from 70 to 60: 40×60/70 and 30×60/70.
    assert weights == {
        "pricing": Decimal(40),
        "reliability": Decimal("34.2857142857"),
        "exit_terms": Decimal("25.7142857143"),
    }


def test_rescale_edge_cases():
    solo = (Criterion("a", "A", 100), Criterion("b", "B", 0), Criterion("c", "C", 0))
    # -10 on a weight of 0: clamped, nothing moves.
    assert rescale_weights(solo, key="b", delta=-10) == {"a": 100, "b": 0, "c": 0}
    # +10 on a weight of 0: a keeps all of the rest (100 × 90/100).
    assert rescale_weights(solo, key="b", delta=10) == {"a": 90, "b": 10, "c": 0}
    # -10 on 100 with an all-zero rest: 10 shared equally, 3.3333333333 each
    # plus the 1e-10 residual on one of them, so the sum is still exactly 100.
    four = (*solo, Criterion("d", "D", 0))
    weights = rescale_weights(four, key="a", delta=-10)
    assert weights["a"] == 90
    assert sorted(weights[key] for key in "bcd") == [
        Decimal("3.3333333333"),
        Decimal("3.3333333333"),
        Decimal("3.3333333334"),
    ]
    assert sum(weights.values()) == Decimal(100)
    # A lone criterion must carry all 100 points whatever the delta.
    assert rescale_weights((Criterion("a", "A", 100),), key="a", delta=-10) == {"a": 100}


def _one_reviewer(**scores):
    return [scores]


def test_sensitivity_plus_ten_on_pricing_flips_the_leader():
    offers = {
        # 30×5/5 + 40×2/5 + 30×3/5 = 30 + 16 + 18 = 64
        "aurora": _one_reviewer(pricing=5, reliability=2, exit_terms=3),
        # 30×2/5 + 40×5/5 + 30×3/5 = 12 + 40 + 18 = 70 → baseline leader
        "borealis": _one_reviewer(pricing=2, reliability=5, exit_terms=3),
        # all 3s → 60 under any weights
        "cirrus": _one_reviewer(pricing=3, reliability=3, exit_terms=3),
    }
    report = weight_sensitivity(SMALL, offers, step=10)
    assert report.baseline_totals == {
        "aurora": Decimal("64.00"),
        "borealis": Decimal("70.00"),
        "cirrus": Decimal("60.00"),
    }
    assert report.baseline_leader == "borealis"
    assert report.stable is False
    assert len(report.scenarios) == 6  # 3 criteria × (+10, −10)
    by_move = {(s.criterion_key, s.delta): s for s in report.scenarios}
    flipped = by_move[("pricing", 10)]
    # Weights 40 / 34.2857142857 / 25.7142857143:
    # aurora   40 + 34.2857142857×2/5 + 25.7142857143×3/5 = 69.142857… → 69.14
    # borealis 16 + 34.2857142857     + 15.4285714286    = 65.714285… → 65.71
    assert flipped.totals == {
        "aurora": Decimal("69.14"),
        "borealis": Decimal("65.71"),
        "cirrus": Decimal("60.00"),
    }
    assert flipped.leader == "aurora"
    assert flipped.leader_changed is True
    assert flipped.applied_delta == 10
    # −10 on pricing only widens borealis's lead: 8 + 45.714… + 20.571… = 74.29.
    assert by_move[("pricing", -10)].totals["borealis"] == Decimal("74.29")
    assert by_move[("pricing", -10)].leader_changed is False


def test_sensitivity_nothing_flips_for_a_dominant_offer():
    offers = {
        "aurora": _one_reviewer(pricing=5, reliability=4, exit_terms=5),
        "borealis": _one_reviewer(pricing=3, reliability=3, exit_terms=3),
        "cirrus": _one_reviewer(pricing=1, reliability=2, exit_terms=0),
    }
    report = weight_sensitivity(SMALL, offers)
    assert report.baseline_leader == "aurora"  # 30 + 32 + 30 = 92
    assert report.stable is True
    assert all(s.leader == "aurora" and not s.leader_changed for s in report.scenarios)
    assert all(sum(s.weights.values()) == 100 for s in report.scenarios)


def test_sensitivity_with_zero_weight_single_offer_and_no_scores():
    criteria = (Criterion("pricing", "Price", 100), Criterion("support", "Support", 0))
    report = weight_sensitivity(criteria, {"aurora": _one_reviewer(pricing=4, support=1)})
    assert report.baseline_leader == "aurora"
    assert report.stable is True
    by_move = {(s.criterion_key, s.delta): s for s in report.scenarios}
    assert by_move[("support", -10)].applied_delta == 0  # already 0
    assert by_move[("pricing", 10)].applied_delta == 0  # already 100
    # support +10: 90×4/5 + 10×1/5 = 72 + 2 = 74
    assert by_move[("support", 10)].totals == {"aurora": Decimal("74.00")}

    unscored = weight_sensitivity(criteria, {"aurora": [], "borealis": []})
    assert unscored.baseline_leader is None
    assert unscored.baseline_leaders == ()
    assert unscored.stable is True
    assert all(s.totals == {"aurora": None, "borealis": None} for s in unscored.scenarios)


def test_sensitivity_treats_a_new_tie_as_a_change():
    offers = {
        "aurora": _one_reviewer(pricing=5, reliability=0, exit_terms=0),  # 30
        "borealis": _one_reviewer(pricing=0, reliability=0, exit_terms=5),  # 30
    }
    report = weight_sensitivity(SMALL, offers)
    assert report.baseline_leader is None
    assert report.baseline_leaders == ("aurora", "borealis")
    by_move = {(s.criterion_key, s.delta): s for s in report.scenarios}
    # reliability +10 scales both 30s by 50/60 equally: still a tie.
    assert by_move[("reliability", 10)].leader_changed is False
    assert by_move[("pricing", 10)].leader == "aurora"
    assert by_move[("pricing", 10)].leader_changed is True


@pytest.mark.parametrize("step", [0, 101])
def test_sensitivity_refuses_bad_step(step):
    with pytest.raises(ScoringInputError, match="Step must be"):
        weight_sensitivity(SMALL, {}, step=step)

"""The questionnaire rules, table-tested: reading a typed answer, and the score.

Pure functions over unsaved questions: no database.
"""

from datetime import date
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from apps.portal.models import Question
from apps.portal.questionnaires import answer_read, is_scored, questionnaire_score, share_met


def q(key="q", kind="yes_no", *, weight=1, required=True, **fields) -> Question:
    return Question(key=key, text=key, kind=kind, weight=weight, required=required, **fields)


YES_NO = q("encrypted", "yes_no", expected_yes=True)
CHOICE = q(
    "tier",
    "choice",
    options=[
        {"label": "Tier IV", "score": 100},
        {"label": "Tier III", "score": 50},
        {"label": "None", "score": 0},
    ],
)
NUMBER_GE = q("uptime", "number", threshold=Decimal("99.9"), threshold_direction="ge", unit="%")
NUMBER_LE = q("latency", "number", threshold=Decimal("10"), threshold_direction="le")
BOUNDED = q("nodes", "number", min_value=Decimal(1), max_value=Decimal(1000))
DATE_AFTER = q("certified", "date", date_limit=date(2026, 1, 1), date_direction="not_before")
DATE_BEFORE = q("ends", "date", date_limit=date(2027, 1, 1), date_direction="not_after")
FILE = q("soc2", "file")


@pytest.mark.parametrize(
    "question,typed,kept",
    [
        (YES_NO, " Yes ", "yes"),
        (YES_NO, "no", "no"),
        (YES_NO, "", ""),
        (CHOICE, "Tier III", "Tier III"),
        (NUMBER_GE, "99.95", "99.95"),
        (NUMBER_GE, "1,200", "1200"),
        (NUMBER_GE, "0", "0"),
        (NUMBER_GE, "12.500", "12.5"),
        (BOUNDED, "1000", "1000"),
        (DATE_AFTER, "2026-03-01", "2026-03-01"),
    ],
)
def test_a_good_answer_is_kept_canonical(question, typed, kept):
    assert answer_read(question, typed) == kept


@pytest.mark.parametrize(
    "question,typed,says",
    [
        (YES_NO, "maybe", "yes or no"),
        (CHOICE, "Tier II", "Choose one"),
        (NUMBER_GE, "lots", "number"),
        (NUMBER_GE, "NaN", "number"),
        (NUMBER_GE, "1e20", "too large"),
        (NUMBER_GE, "1.00001", "four decimal"),
        (BOUNDED, "0", "smallest"),
        (BOUNDED, "1001", "largest"),
        (DATE_AFTER, "31/12/2026", "year-month-day"),
        (FILE, "soc2.pdf", "file"),
    ],
)
def test_a_bad_answer_is_refused_in_words(question, typed, says):
    with pytest.raises(ValidationError) as refused:
        answer_read(question, typed)
    assert says in " ".join(refused.value.messages)


@pytest.mark.parametrize(
    "question,value,share",
    [
        (YES_NO, "yes", 1),
        (YES_NO, "no", 0),
        (q("k", "yes_no", expected_yes=False), "no", 1),
        (CHOICE, "Tier IV", 1),
        (CHOICE, "Tier III", Decimal("0.5")),
        (CHOICE, "None", 0),
        (NUMBER_GE, "99.9", 1),
        (NUMBER_GE, "99.8", 0),
        (NUMBER_LE, "10", 1),
        (NUMBER_LE, "10.01", 0),
        (DATE_AFTER, "2026-01-01", 1),
        (DATE_AFTER, "2025-12-31", 0),
        (DATE_BEFORE, "2027-01-01", 1),
        (DATE_BEFORE, "2027-01-02", 0),
        (FILE, "soc2.pdf", 1),
    ],
)
def test_share_met(question, value, share):
    assert share_met(question, value) == share


@pytest.mark.parametrize(
    "question,scored",
    [
        (YES_NO, True),
        (q("k", "yes_no"), False),  # no expected answer
        (q("k", "yes_no", expected_yes=True, weight=0), False),
        (q("k", "choice", options=[{"label": "a", "score": 0}, {"label": "b", "score": 0}]), False),
        (BOUNDED, False),  # bounds, no threshold
        (q("k", "date"), False),
        (FILE, True),
    ],
)
def test_what_is_scored(question, scored):
    assert is_scored(question) is scored


ALL = [YES_NO, CHOICE, NUMBER_GE, DATE_AFTER, FILE]


@pytest.mark.parametrize(
    "questions,answers,percent,missed",
    [
        # Everything as expected.
        (
            ALL,
            {
                "encrypted": "yes",
                "tier": "Tier IV",
                "uptime": "99.99",
                "certified": "2026-02-01",
                "soc2": "x.pdf",
            },
            Decimal("100.0"),
            (),
        ),
        # A choice earns half its weight; a number below the threshold misses.
        (
            ALL,
            {
                "encrypted": "yes",
                "tier": "Tier III",
                "uptime": "99",
                "certified": "2026-02-01",
                "soc2": "x.pdf",
            },
            Decimal("70.0"),
            ("tier", "uptime"),
        ),
        # Required and unanswered: missed, and counted.
        (ALL, {"encrypted": "yes"}, Decimal("20.0"), ("tier", "uptime", "certified", "soc2")),
        # Weights: 3 met of 4.
        (
            [q("a", "yes_no", expected_yes=True, weight=3), q("b", "yes_no", expected_yes=True)],
            {"a": "yes", "b": "no"},
            Decimal("75.0"),
            ("b",),
        ),
        # An optional question left blank counts for nothing.
        (
            [
                q("a", "yes_no", expected_yes=True),
                q("b", "yes_no", expected_yes=True, required=False),
            ],
            {"a": "yes"},
            Decimal("100.0"),
            (),
        ),
        # A required unscored question left blank is missed, yet weighs nothing.
        ([YES_NO, BOUNDED], {"encrypted": "yes"}, Decimal("100.0"), ("nodes",)),
        # Nothing weighs: no score.
        ([BOUNDED], {"nodes": "5"}, None, ()),
        # Two thirds, rounded to one place.
        (
            [q(k, "yes_no", expected_yes=True) for k in "abc"],
            {"a": "yes", "b": "yes", "c": "no"},
            Decimal("66.7"),
            ("c",),
        ),
    ],
)
def test_questionnaire_score(questions, answers, percent, missed):
    score = questionnaire_score(questions, answers)
    assert score.percent == percent
    assert score.missed == missed


def test_the_score_is_shown_as_a_percentage(settings):
    score = questionnaire_score([YES_NO, NUMBER_GE], {"encrypted": "yes", "uptime": "1"})
    assert score.shown() == "50 %"
    assert questionnaire_score([BOUNDED], {}).shown() != "0 %"  # no score is not zero

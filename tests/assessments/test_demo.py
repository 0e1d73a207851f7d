"""The demo's signed-off assessment and its derived constraints (issue 3, item 8)."""

from django.utils import timezone

from apps.assessments.demo import seed
from apps.assessments.selectors import assessment_summary, effective_assessment
from tests.factories import make_case, make_offer


def test_demo_seed_signs_off_an_assessment_with_constraints(people, priya):
    case = make_case(priya)
    make_offer(priya, case)
    seed(case=case, users={**people, "admin": people["ada"]})
    assessment = effective_assessment(case)
    summary = assessment_summary(assessment)
    assert summary.state.signed_off and not summary.state.expired
    assert assessment.signed_off_by == people["lena"]
    assert summary.state.review_by > timezone.localdate()
    assert {c.key for c in summary.constraints} == {"data_stays", "one_entry_point"}
    assert summary.aid.mechanism == "exempt" and summary.blockers == []

"""Writes: create, save together, sign off, void on edit; every change in history."""

from datetime import date, timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from apps.assessments import services
from apps.assessments.models import MAX_ATTACHMENT_BYTES, AssessmentAnswer, DataExportAssessment
from apps.assessments.questions import QUESTIONS
from apps.assessments.rules import assessment_state, exit_readiness_answered
from apps.assessments.selectors import effective_assessment
from apps.core.services import ConcurrentEditError
from tests.assessments.factories import complete_answers, make_assessment
from tests.factories import make_case, make_offer, make_vendor


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def case(priya):
    return make_case(priya)


def _history_count():
    return DataExportAssessment.history.count() + AssessmentAnswer.history.count()


def test_create_writes_a_row_per_question_with_history(lena, case):
    assessment = make_assessment(lena, case)
    assert assessment.answers.count() == len(QUESTIONS)
    rows = AssessmentAnswer.history.filter(assessment_id=assessment.pk)
    assert rows.count() == len(QUESTIONS)
    assert {(r.history_user, r.history_change_reason) for r in rows} == {
        (lena, "Data-export assessment started")
    }


def test_only_changed_answers_are_written_and_attributed(lena, case):
    assessment = make_assessment(lena, case)
    before = _history_count()
    updated, voided = services.assessment_save(
        actor=lena,
        assessment=assessment,
        reason="Vendor confirmed licences",
        answers={"export_control_licence": {"value": "no", "note": "Licence pending"}},
    )
    assert not voided and updated.version == assessment.version + 1
    assert _history_count() == before + 2  # the assessment and one answer
    row = AssessmentAnswer.history.filter(question_key="export_control_licence").first()
    assert (row.value, row.note, row.history_user, row.history_change_reason) == (
        "no",
        "Licence pending",
        lena,
        "Vendor confirmed licences",
    )


def test_sign_off_names_who_and_when_and_defaults_review_by_to_90_days(lena, case):
    assessment = services.assessment_sign_off(actor=lena, assessment=make_assessment(lena, case))
    today = timezone.localdate()
    assert assessment.signed_off_by == lena
    assert timezone.localdate(assessment.signed_off_at) == today
    assert assessment.review_by == today + timedelta(days=90)
    last = DataExportAssessment.history.first()
    assert last.history_user == lena and "Signed off by Lena" in last.history_change_reason


def test_sign_off_refuses_an_incomplete_assessment(lena, case):
    assessment = make_assessment(lena, case, complete=False)
    with pytest.raises(ValidationError) as error:
        services.assessment_sign_off(actor=lena, assessment=assessment)
    assert "sign_off" in error.value.message_dict
    assessment.refresh_from_db()
    assert assessment.signed_off_at is None


def test_review_by_in_the_past_is_refused(lena, case):
    assessment = make_assessment(lena, case)
    with pytest.raises(ValidationError) as error:
        services.assessment_sign_off(
            actor=lena, assessment=assessment, review_by=timezone.localdate() - timedelta(days=1)
        )
    assert "review_by" in error.value.message_dict


@pytest.mark.parametrize("persona", ["priya", "tariq", "aude"])
def test_only_legal_reviewers_edit_and_sign_off(people, lena, case, persona):
    assessment = make_assessment(lena, case)
    with pytest.raises(PermissionDenied):
        services.assessment_sign_off(actor=people[persona], assessment=assessment)
    with pytest.raises(PermissionDenied):
        services.assessment_save(
            actor=people[persona], assessment=assessment, reason="x", answers={}
        )
    with pytest.raises(PermissionDenied):
        services.assessment_create(actor=people[persona], case=make_case(people["priya"]))


def test_editing_a_signed_off_assessment_voids_the_sign_off_and_says_so(lena, ada, case):
    assessment = make_assessment(lena, case, signed=True)
    updated, voided = services.assessment_save(
        actor=ada,
        assessment=assessment,
        reason="Sensitive data added to the corpus",
        answers={"personal_information": {"value": "yes"}},
    )
    assert voided
    assert (updated.signed_off_at, updated.signed_off_by, updated.review_by) == (None, None, None)
    assert "Sign-off by Lena" in updated.voided_sign_off
    assert "Sensitive data added" in updated.voided_sign_off
    last = DataExportAssessment.history.first()
    assert last.history_user == ada
    assert "sign-off voided" in last.history_change_reason
    assert assessment_state(updated, timezone.localdate()).signed_off is False


def test_saving_without_a_change_keeps_the_sign_off(lena, case):
    assessment = make_assessment(lena, case, signed=True)
    updated, voided = services.assessment_save(
        actor=lena, assessment=assessment, reason="Re-read", answers=complete_answers()
    )
    assert not voided and updated.signed_off_by == lena


def test_edit_needs_a_reason(lena, case):
    assessment = make_assessment(lena, case)
    with pytest.raises(ValidationError) as error:
        services.assessment_save(
            actor=lena,
            assessment=assessment,
            reason=" ",
            answers={"purpose": {"value": "training"}},
        )
    assert "change_reason" in error.value.message_dict


def test_stale_version_is_refused(lena, case):
    assessment = make_assessment(lena, case)
    services.assessment_save(
        actor=lena,
        assessment=assessment,
        reason="First",
        answers={"purpose": {"value": "training"}},
    )
    with pytest.raises(ConcurrentEditError):
        services.assessment_save(
            actor=lena,
            assessment=assessment,
            reason="Second",
            answers={"purpose": {"value": "fine_tuning"}},
            expected_version=assessment.version,
        )


@pytest.mark.parametrize(
    "answers,field",
    [
        ({"important_data": {"value": "maybe"}}, "important_data"),
        ({"no_such_question": {"value": "yes"}}, "no_such_question"),
        (
            {"prc_individuals_sensitive": {"number": "ten thousand"}},
            "prc_individuals_sensitive__number",
        ),
    ],
)
def test_invalid_input_names_the_field_and_saves_nothing(lena, case, answers, field):
    assessment = make_assessment(lena, case)
    before = _history_count()
    good = {"purpose": {"value": "training"}}  # a valid change in the same save
    with pytest.raises(ValidationError) as error:
        services.assessment_save(
            actor=lena, assessment=assessment, reason="x", answers={**good, **answers}
        )
    assert field in error.value.message_dict
    assert _history_count() == before
    assert assessment.answer_map()["purpose"].value == "inference"
    with pytest.raises(ValidationError):
        services.assessment_create(actor=lena, case=make_case(case.owner), answers=answers)
    assert _history_count() == before


def test_attachment_is_stored_under_a_generated_name(lena, case):
    upload = SimpleUploadedFile("../../etc/passwd.pdf", b"%PDF-1.4 letter", "application/pdf")
    assessment = make_assessment(lena, case)
    services.assessment_save(
        actor=lena,
        assessment=assessment,
        reason="Legal letter",
        attachments={"lawful_source": upload},
    )
    name = assessment.answers.get(question_key="lawful_source").attachment.name
    assert name.startswith("assessments/") and ".." not in name and name.endswith(".pdf")
    assert "etc" not in name.split("/")[:-1]


def test_oversized_attachment_is_refused_naming_the_field(lena, case):
    assessment = make_assessment(lena, case)
    before = _history_count()
    big = SimpleUploadedFile("scan.pdf", b"x" * (MAX_ATTACHMENT_BYTES + 1))
    with pytest.raises(ValidationError) as error:
        services.assessment_save(
            actor=lena, assessment=assessment, reason="Scan", attachments={"lawful_source": big}
        )
    assert "limit is 10 MiB" in error.value.message_dict["lawful_source__attachment"][0]
    assert _history_count() == before


def test_detaching_keeps_history_of_the_file(lena, case):
    assessment = make_assessment(lena, case)
    upload = SimpleUploadedFile("letter.pdf", b"%PDF-1.4")
    services.assessment_save(
        actor=lena, assessment=assessment, reason="Add", attachments={"lawful_source": upload}
    )
    services.assessment_save(
        actor=lena, assessment=assessment, reason="Wrong file", attachments={"lawful_source": False}
    )
    assert not assessment.answers.get(question_key="lawful_source").attachment
    names = [h.attachment for h in AssessmentAnswer.history.filter(question_key="lawful_source")]
    assert any(n.startswith("assessments/") for n in names)


def test_one_case_level_assessment_per_case(lena, case):
    make_assessment(lena, case)
    with pytest.raises(ValidationError) as error:
        make_assessment(lena, case)
    assert "case" in error.value.message_dict


def test_offer_assessment_overrides_the_case_one_where_the_jurisdiction_differs(priya, lena, case):
    singapore = make_offer(priya, case, vendor=make_vendor(priya, jurisdiction="Singapore"))
    japan = make_offer(priya, case, vendor=make_vendor(priya, jurisdiction="Japan"))
    case_level = make_assessment(lena, case, jurisdiction="Singapore", signed=True)
    assert effective_assessment(case) == case_level
    assert effective_assessment(case, singapore) == case_level
    assert effective_assessment(case, japan) is None
    own = make_assessment(lena, case, offer=japan)
    assert own.jurisdiction == "Japan"  # taken from the vendor
    assert effective_assessment(case, japan) == own
    assert effective_assessment(case, singapore) == case_level


def test_offer_of_another_case_is_refused(priya, lena, case):
    other = make_offer(priya, make_case(priya))
    with pytest.raises(ValidationError) as error:
        make_assessment(lena, case, offer=other)
    assert "offer" in error.value.message_dict


def test_gate_functions_on_a_stored_assessment(lena, case):
    assessment = make_assessment(lena, case, signed=True)
    review_by = assessment.review_by
    record = effective_assessment(case)
    assert exit_readiness_answered(record)
    assert tuple(assessment_state(record, review_by)) == (True, False, review_by)
    assert tuple(assessment_state(record, review_by + timedelta(days=1))) == (True, True, review_by)
    incomplete = make_assessment(lena, make_case(case.owner), complete=False)
    assert not exit_readiness_answered(incomplete)
    assert assessment_state(incomplete, date.today()).signed_off is False

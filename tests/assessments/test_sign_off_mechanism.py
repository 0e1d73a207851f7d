"""Sign-off states the status of the mechanism the decision aid names: the form and
the API, each role, and what each status needs."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.assessments.models import DataExportAssessment
from tests.assessments.factories import complete_answers
from tests.factories import make_case

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
LEGAL = {"lena", "ada"}
BASE = "/api/v1/data-export-assessments/"


def _assessment(lena, priya, **answers):
    from apps.assessments.services import assessment_create

    return assessment_create(
        actor=lena,
        case=make_case(priya),
        answers=complete_answers(**answers),
        conclusion="Transfers personal information as a CIIO: security assessment declared.",
    )


@pytest.fixture
def named(lena, priya):
    """Personal information sent abroad by a CIIO: the aid names a security assessment."""
    return _assessment(lena, priya, personal_information="yes")


@pytest.fixture
def exempt(lena, priya):
    return _assessment(lena, priya)


@pytest.mark.parametrize("role", ROLES)
def test_api_sign_off_with_a_status_per_role(api_as, named, role):
    response = api_as(role).post(
        f"{BASE}{named.pk}/sign-off/",
        {
            "version": named.version,
            "mechanism_status": "done",
            "mechanism_reference": "CAC-SA-2026-0042",
        },
        format="json",
    )
    assert response.status_code == (200 if role in LEGAL else 403), response.content
    named.refresh_from_db()
    if role in LEGAL:
        body = response.json()["mechanism_status"]
        assert (body["status"], body["reference"], body["held"]) == (
            "done",
            "CAC-SA-2026-0042",
            True,
        )
        assert (named.mechanism_status, named.mechanism_stated_for) == (
            "done",
            "security_assessment",
        )
    else:
        assert named.signed_off_at is None and named.mechanism_status is None


@pytest.mark.parametrize(
    "body,field,words",
    [
        ({}, "mechanism_status", "State the status of"),
        ({"mechanism_status": "later"}, "mechanism_status", "not a valid choice"),
        ({"mechanism_status": "in_progress"}, "mechanism_expected_on", "give the date"),
        (
            {"mechanism_status": "in_progress", "mechanism_expected_on": "2020-01-01"},
            "mechanism_expected_on",
            "has passed",
        ),
        (
            {"mechanism_status": "in_progress", "mechanism_expected_on": "next week"},
            "mechanism_expected_on",
            "Date has wrong format",
        ),
        ({"mechanism_status": "done"}, "mechanism_reference", "give its reference"),
        (
            {"mechanism_status": "done", "mechanism_reference": "x" * 201},
            "mechanism_reference",
            "no more than 200",
        ),
    ],
)
def test_api_refuses_a_missing_or_incomplete_status_with_a_clear_400(
    api_as, named, body, field, words
):
    before = DataExportAssessment.history.count()
    response = api_as("lena").post(
        f"{BASE}{named.pk}/sign-off/", {"version": named.version, **body}, format="json"
    )
    assert response.status_code == 400
    assert words in " ".join(response.json()[field])
    assert DataExportAssessment.history.count() == before


def test_api_refuses_a_status_where_no_mechanism_is_named(api_as, exempt):
    response = api_as("lena").post(
        f"{BASE}{exempt.pk}/sign-off/",
        {"version": exempt.version, "mechanism_status": "done", "mechanism_reference": "x"},
        format="json",
    )
    assert response.status_code == 400 and "names no mechanism" in str(response.json())
    ok = api_as("lena").post(
        f"{BASE}{exempt.pk}/sign-off/", {"version": exempt.version}, format="json"
    )
    assert ok.status_code == 200
    assert ok.json()["mechanism_status"]["named"] is False
    exempt.refresh_from_db()
    assert exempt.mechanism_status is None and exempt.mechanism_reference is None


@pytest.mark.parametrize("role", ROLES)
def test_sign_off_form_asks_for_the_status_per_role(browser_as, named, role):
    url = reverse("assessments:sign_off", kwargs={"pk": named.pk})
    page = browser_as(role).get(url)
    assert page.status_code == (200 if role in LEGAL else 403)
    expected_on = timezone.localdate() + timedelta(days=30)
    response = browser_as(role).post(
        url,
        {
            "review_by": (timezone.localdate() + timedelta(days=90)).isoformat(),
            "version": named.version,
            "mechanism_status": "in_progress",
            "mechanism_expected_on": expected_on.isoformat(),
        },
    )
    assert response.status_code == (302 if role in LEGAL else 403)
    named.refresh_from_db()
    if role in LEGAL:
        assert (named.mechanism_status, named.mechanism_expected_on) == (
            "in_progress",
            expected_on,
        )
        detail = browser_as(role).get(reverse("assessments:detail", kwargs={"pk": named.pk}))
        assert f"in progress, expected by {expected_on.isoformat()}" in detail.content.decode()
    else:
        assert named.mechanism_status is None


def test_sign_off_form_shows_the_fields_only_where_a_mechanism_is_named(browser_as, named, exempt):
    client = browser_as("lena")
    page = client.get(reverse("assessments:sign_off", kwargs={"pk": named.pk}))
    assert "mechanism_status" in page.context["form"].fields
    assert "Security assessment (declared via the provincial CAC)" in page.content.decode()
    page = client.get(reverse("assessments:sign_off", kwargs={"pk": exempt.pk}))
    assert "mechanism_status" not in page.context["form"].fields


def test_sign_off_form_shows_the_refusal_in_place(browser_as, named):
    url = reverse("assessments:sign_off", kwargs={"pk": named.pk})
    review_by = (timezone.localdate() + timedelta(days=90)).isoformat()
    response = browser_as("lena").post(
        url, {"review_by": review_by, "version": named.version, "mechanism_status": "done"}
    )
    assert response.status_code == 200
    assert "give its reference" in " ".join(response.context["form"].errors["mechanism_reference"])
    named.refresh_from_db()
    assert named.signed_off_at is None


def test_the_form_offers_the_recorded_status_again_while_it_applies(browser_as, lena, named):
    from apps.assessments.services import assessment_save, assessment_sign_off

    signed = assessment_sign_off(
        actor=lena, assessment=named, mechanism_status="done", mechanism_reference="SA-9"
    )
    url = reverse("assessments:sign_off", kwargs={"pk": named.pk})
    form = browser_as("lena").get(url).context["form"]
    assert (form["mechanism_status"].value(), form["mechanism_reference"].value()) == (
        "done",
        "SA-9",
    )
    # Now a standard contract: the security assessment's status is not offered.
    assessment_save(
        actor=lena,
        assessment=signed,
        reason="Not a CIIO after all",
        answers={"prc_ciio": {"value": "no"}, "prc_individuals_non_sensitive": {"number": 150_000}},
    )
    form = browser_as("lena").get(url).context["form"]
    assert form["mechanism_status"].value() in (None, "")


def test_contradiction_refuses_sign_off_from_the_form_naming_both_answers(browser_as, lena, priya):
    assessment = _assessment(
        lena, priya, personal_information="yes", export_assessment_completed="no"
    )
    url = reverse("assessments:sign_off", kwargs={"pk": assessment.pk})
    response = browser_as("lena").post(
        url,
        {
            "review_by": (timezone.localdate() + timedelta(days=90)).isoformat(),
            "version": assessment.version,
            "mechanism_status": "not_needed",
        },
    )
    assert response.status_code == 200
    errors = " ".join(response.context["form"].non_field_errors())
    assert "Contradictory answers" in errors
    assert "“Must raw training or inference data be sent abroad?” answered 'Yes'" in errors
    assert "“Has the required data-export assessment been completed?” answered 'No'" in errors

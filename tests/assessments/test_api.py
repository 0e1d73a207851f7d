"""API: every role against every endpoint, invalid input, voiding, query counts."""

import copy

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.assessments.models import AssessmentAnswer, DataExportAssessment
from tests.assessments.factories import complete_answers, make_assessment
from tests.factories import make_case

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
LEGAL = {"lena", "ada"}
BASE = "/api/v1/data-export-assessments/"


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(scope="module")
def _world(module_people):
    priya, lena = module_people["priya"], module_people["lena"]
    case = make_case(priya)
    return {
        "case": case,
        "assessment": make_assessment(lena, case),
        "fresh_case": make_case(priya),
    }


@pytest.fixture
def world(_world, people):
    """A case with an assessment and a case without one, built once for the module; each
    test its copy."""
    return copy.deepcopy(_world)


CALLS = [
    ("get", lambda w: BASE, None, EVERYONE, 200),
    ("get", lambda w: f"{BASE}{w['assessment'].pk}/", None, EVERYONE, 200),
    ("get", lambda w: f"{BASE}{w['assessment'].pk}/report/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/data-export-questions/", None, EVERYONE, 200),
    ("get", lambda w: "/api/v1/prc-regimes/", None, EVERYONE, 200),
    (
        "post",
        lambda w: BASE,
        lambda w: {"case": w["fresh_case"].pk, "answers": {"purpose": {"value": "training"}}},
        LEGAL,
        201,
    ),
    (
        "patch",
        lambda w: f"{BASE}{w['assessment'].pk}/",
        lambda w: {
            "answers": {"purpose": {"value": "training"}},
            "change_reason": "Scope",
            "version": w["assessment"].version,
        },
        LEGAL,
        200,
    ),
    (
        "post",
        lambda w: f"{BASE}{w['assessment'].pk}/sign-off/",
        lambda w: {"version": w["assessment"].version},
        LEGAL,
        200,
    ),
]
IDS = [f"{c[0]} {i}" for i, c in enumerate(CALLS)]


@pytest.mark.parametrize("method,path,body,allowed,success", CALLS, ids=IDS)
@pytest.mark.parametrize("role", ROLES)
def test_api_access(api_as, world, method, path, body, allowed, success, role):
    response = getattr(api_as(role), method)(
        path(world), body(world) if body else None, format="json"
    )
    assert response.status_code == (success if role in allowed else 403), response.content


@pytest.mark.parametrize("method,path,body,allowed,success", CALLS, ids=IDS)
def test_api_refuses_anonymous_with_401(client, world, method, path, body, allowed, success):
    response = getattr(client, method)(path(world), content_type="application/json")
    assert response.status_code == 401


@pytest.mark.parametrize("role", ROLES)
def test_attachment_upload_access(api_as, world, role):
    response = api_as(role).put(
        f"{BASE}{world['assessment'].pk}/attachments/lawful_source/",
        {
            "file": SimpleUploadedFile("letter.pdf", b"%PDF-1.4"),
            "change_reason": "Letter",
            "version": world["assessment"].version,
        },
        format="multipart",
    )
    assert response.status_code == (200 if role in LEGAL else 403)
    if role in LEGAL:
        assert response.json()["answers"]["lawful_source"]["attachment"].endswith(".pdf")


def _counts():
    return DataExportAssessment.history.count(), AssessmentAnswer.history.count()


@pytest.mark.parametrize(
    "answers,errors",
    [
        ({"important_data": {"value": "maybe"}}, {"important_data"}),
        ({"no_such_question": {"value": "yes"}}, {"no_such_question"}),
        ({"prc_individuals_non_sensitive": {"number": "lots"}}, {"prc_individuals_non_sensitive"}),
    ],
)
def test_invalid_answers_name_the_field_and_save_nothing(api_as, world, answers, errors):
    before = _counts()
    response = api_as("lena").patch(
        f"{BASE}{world['assessment'].pk}/",
        {"answers": {"purpose": {"value": "training"}, **answers}, "change_reason": "x"},
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()["answers"]) == errors
    response = api_as("lena").post(
        BASE, {"case": world["fresh_case"].pk, "answers": answers}, format="json"
    )
    assert response.status_code == 400 and set(response.json()["answers"]) == errors
    assert _counts() == before


def test_non_numeric_count_error_points_at_the_number(api_as, world):
    response = api_as("lena").patch(
        f"{BASE}{world['assessment'].pk}/",
        {"answers": {"prc_individuals_sensitive": {"number": "lots"}}, "change_reason": "x"},
        format="json",
    )
    assert response.json()["answers"]["prc_individuals_sensitive"]["number"] == [
        "A valid integer is required."
    ]


def test_create_sign_off_then_edit_voids_it(api_as, world, lena):
    api = api_as("lena")
    created = api.post(
        BASE,
        {"case": world["fresh_case"].pk, "answers": complete_answers(), "conclusion": "Cleared."},
        format="json",
    ).json()
    assert created["state"]["sign_off_blockers"] == []
    assert (
        created["prc_decision_aid"]["disclaimer"]
        == "An aid to the legal reviewer, not a legal opinion."
    )
    signed = api.post(
        f"{BASE}{created['id']}/sign-off/",
        {"review_by": "2099-12-31", "version": created["version"]},
        format="json",
    )
    body = signed.json()
    assert body["signed_off_by"] == "lena" and body["review_by"] == "2099-12-31"
    assert body["state"]["signed_off"] is True
    edited = api.patch(
        f"{BASE}{created['id']}/",
        {
            "answers": {
                "personal_information": {"value": "yes"},
                "export_assessment_completed": {"value": "no"},
            },
            "change_reason": "New corpus",
            "version": body["version"],
        },
        format="json",
    ).json()
    assert edited["state"]["signed_off"] is False and edited["signed_off_by"] is None
    assert "voided" in edited["voided_sign_off"]
    assert "data_stays" not in [c["key"] for c in body["derived_constraints"]]
    assert "data_stays" in [c["key"] for c in edited["derived_constraints"]]


def test_sign_off_of_incomplete_assessment_is_refused_with_the_reasons(api_as, world, lena):
    assessment = make_assessment(lena, world["fresh_case"], complete=False)
    response = api_as("lena").post(
        f"{BASE}{assessment.pk}/sign-off/", {"version": assessment.version}, format="json"
    )
    assert response.status_code == 400 and response.json()["sign_off"]


def test_stale_version_answers_409(api_as, world):
    response = api_as("lena").patch(
        f"{BASE}{world['assessment'].pk}/",
        {"answers": {"purpose": {"value": "training"}}, "change_reason": "x", "version": 99},
        format="json",
    )
    assert response.status_code == 409


def test_edit_without_reason_is_refused(api_as, world):
    response = api_as("lena").patch(
        f"{BASE}{world['assessment'].pk}/",
        {"answers": {"purpose": {"value": "training"}}},
        format="json",
    )
    assert response.status_code == 400 and "change_reason" in response.json()


def test_regime_table_cites_its_sources(api_as, world):
    body = api_as("aude").get("/api/v1/prc-regimes/").json()
    assert body["regimes"][0]["effective"] == "2024-03-22"
    assert "《促进和规范数据跨境流动规定》 第八条" in body["regimes"][0]["citations"].values()
    assert "not a legal opinion" in body["disclaimer"]


@pytest.mark.parametrize("rows", [1, 20])
def test_list_query_count_is_fixed(api_as, django_assert_max_num_queries, priya, lena, rows):
    already = DataExportAssessment.objects.count()  # the module's world has one
    for _ in range(rows):
        make_assessment(lena, make_case(priya), complete=False)
    api = api_as("aude")
    with django_assert_max_num_queries(8):
        response = api.get(BASE)
    assert response.json()["count"] == already + rows


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("tool.exe", b"MZ\x90\x00", "not taken here"),
        ("letter.pdf", b"MZ\x90\x00", "not a PDF file"),
    ],
)
def test_attachment_of_a_refused_type_stores_nothing(api_as, world, name, content, message):
    before = _counts()
    response = api_as("lena").put(
        f"{BASE}{world['assessment'].pk}/attachments/lawful_source/",
        {
            "file": SimpleUploadedFile(name, content),
            "change_reason": "Letter",
            "version": world["assessment"].version,
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert message in str(response.json())
    assert _counts() == before

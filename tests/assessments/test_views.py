"""Browser pages: every role against every page, the one-page form, the case panel."""

import copy
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from apps.assessments.forms import EVIDENCE_KEYS
from apps.assessments.models import DataExportAssessment
from apps.assessments.panels import case_panel
from apps.assessments.questions import QUESTIONS
from apps.assessments.services import assessment_save
from apps.casework.panels import case_overview
from tests.assessments.factories import make_assessment
from tests.factories import make_case, make_offer, make_vendor
from tests.pages import whole_case
from tests.stored import store_folder

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
LEGAL = {"lena", "ada"}


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(scope="module")
def _world(module_people, tmp_path_factory):
    """Built once for the module, its attachment stored in a folder of its own."""
    priya, lena = module_people["priya"], module_people["lena"]
    media = tmp_path_factory.mktemp("assessment-media")
    with override_settings(MEDIA_ROOT=media):
        case = make_case(priya)
        offer = make_offer(priya, case)
        assessment = make_assessment(lena, case)
        assessment_save(
            actor=lena,
            assessment=assessment,
            reason="Letter",
            attachments={"lawful_source": SimpleUploadedFile("letter.pdf", b"%PDF-1.4")},
        )
        fresh_case = make_case(priya)
    return media, {"case": case, "offer": offer, "assessment": assessment, "fresh_case": fresh_case}


@pytest.fixture
def world(_world, people, _media):
    """The module's world, each test its copy, with the attachment in the test's storage."""
    media, built = _world
    store_folder(media)
    return copy.deepcopy(built)


PAGES = [
    ("assessments:create", lambda w: {"case_pk": w["fresh_case"].pk}, LEGAL),
    ("assessments:detail", lambda w: {"pk": w["assessment"].pk}, EVERYONE),
    ("assessments:edit", lambda w: {"pk": w["assessment"].pk}, LEGAL),
    ("assessments:sign_off", lambda w: {"pk": w["assessment"].pk}, LEGAL),
    ("assessments:report", lambda w: {"pk": w["assessment"].pk}, EVERYONE),
    ("assessments:report_json", lambda w: {"pk": w["assessment"].pk}, EVERYONE),
    ("assessments:report_md", lambda w: {"pk": w["assessment"].pk}, EVERYONE),
    ("assessments:history", lambda w: {"pk": w["assessment"].pk}, EVERYONE),
    (
        "assessments:attachment",
        lambda w: {"pk": w["assessment"].pk, "key": "lawful_source"},
        EVERYONE,
    ),
]


@pytest.mark.parametrize("name,kwargs,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_page_access(browser_as, world, name, kwargs, allowed, role):
    response = browser_as(role).get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,kwargs,allowed", PAGES, ids=[p[0] for p in PAGES])
def test_anonymous_goes_to_login(client, world, name, kwargs, allowed):
    response = client.get(reverse(name, kwargs=kwargs(world)))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def _post_data(**overrides):
    data = {}
    for q in QUESTIONS:
        if q.takes_value:
            data[q.key] = q.choices[0][0]
        if q.takes_number:
            data[f"{q.key}__number"] = "0"
    data.update(exit_bounded_time__number="21", conclusion="Cleared.", jurisdiction="Singapore")
    # A yes the approval relies on comes with its evidence.
    data.update({f"{key}__note": "On file" for key in EVIDENCE_KEYS})
    data.update(overrides)
    return data


def test_whole_questionnaire_saved_together_from_one_page(browser_as, world, lena):
    case = world["fresh_case"]
    upload = SimpleUploadedFile("dpia.pdf", b"%PDF-1.4")
    response = browser_as("lena").post(
        reverse("assessments:create", kwargs={"case_pk": case.pk}),
        _post_data(lawful_source__attachment=upload, lawful_source__note="Own employees"),
    )
    assessment = DataExportAssessment.objects.get(case=case)
    assert response.status_code == 302
    answers = assessment.answer_map()
    assert len(answers) == len(QUESTIONS)
    assert answers["exit_bounded_time"].number == 21
    assert answers["lawful_source"].note == "Own employees"
    assert answers["lawful_source"].attachment.name.startswith("assessments/")


@pytest.mark.parametrize(
    "override,field,message",
    [
        ({"important_data": "maybe"}, "important_data", "Select a valid choice"),
        (
            {"prc_individuals_sensitive__number": "lots"},
            "prc_individuals_sensitive__number",
            "whole number",
        ),
    ],
)
def test_invalid_answers_are_shown_in_place_and_nothing_is_saved(
    browser_as, world, override, field, message
):
    case = world["fresh_case"]
    response = browser_as("lena").post(
        reverse("assessments:create", kwargs={"case_pk": case.pk}), _post_data(**override)
    )
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors[field])
    assert "Nothing was saved" in response.content.decode()
    assert not DataExportAssessment.objects.filter(case=case).exists()


def test_an_exit_yes_without_its_evidence_is_asked_for_on_the_form(browser_as, world):
    case = world["fresh_case"]
    url = reverse("assessments:create", kwargs={"case_pk": case.pk})
    form_page = browser_as("lena").get(url).content.decode()
    assert form_page.count("Needed for the approval") == len(EVIDENCE_KEYS)
    response = browser_as("lena").post(url, _post_data(image_rebuildable__note=""))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == ["image_rebuildable__note"]
    assert "only with its evidence" in errors["image_rebuildable__note"][0]
    assert "Nothing was saved" in response.content.decode()
    assert not DataExportAssessment.objects.filter(case=case).exists()
    # A no needs no evidence: the gate will say the item is not confirmed.
    answered_no = _post_data(image_rebuildable="no", image_rebuildable__note="")
    assert browser_as("lena").post(url, answered_no).status_code == 302


def test_an_attachment_is_evidence_enough_and_a_kept_one_stays_so(browser_as, world, lena):
    case = world["fresh_case"]
    upload = SimpleUploadedFile("image-rebuild.pdf", b"%PDF-1.4")
    data = _post_data(image_rebuildable__note="", image_rebuildable__attachment=upload)
    url = reverse("assessments:create", kwargs={"case_pk": case.pk})
    assert browser_as("lena").post(url, data).status_code == 302
    assessment = DataExportAssessment.objects.get(case=case)
    edit = reverse("assessments:edit", kwargs={"pk": assessment.pk})
    kept = _post_data(image_rebuildable__note="", version=assessment.version, change_reason="Typo")
    assert browser_as("lena").post(edit, kept).status_code == 302
    cleared = {
        **kept,
        "version": assessment.version + 1,
        "image_rebuildable__attachment-clear": "on",
    }
    response = browser_as("lena").post(edit, cleared)
    assert response.status_code == 200
    assert "image_rebuildable__note" in response.context["form"].errors


def test_edit_needs_a_reason_and_shows_it_in_place(browser_as, world):
    assessment = world["assessment"]
    response = browser_as("lena").post(
        reverse("assessments:edit", kwargs={"pk": assessment.pk}),
        _post_data(version=assessment.version + 1),
    )
    assert response.status_code == 200
    assert "change_reason" in response.context["form"].errors


def test_editing_a_signed_off_assessment_warns_and_voids(browser_as, world, lena):
    case = world["fresh_case"]
    assessment = make_assessment(lena, case, signed=True)
    page = browser_as("lena").get(reverse("assessments:edit", kwargs={"pk": assessment.pk}))
    assert "Saving any change voids the sign-off" in page.content.decode()
    response = browser_as("lena").post(
        reverse("assessments:edit", kwargs={"pk": assessment.pk}),
        _post_data(
            version=assessment.version,
            change_reason="Training use added",
            purpose="training",
            personal_information="no",
            important_data="no",
        ),
        follow=True,
    )
    assert "sign-off was voided" in response.content.decode()
    assessment.refresh_from_db()
    assert assessment.signed_off_at is None and "Sign-off by" in assessment.voided_sign_off


def test_sign_off_from_the_browser(browser_as, world, lena):
    assessment = world["assessment"]
    response = browser_as("lena").post(
        reverse("assessments:sign_off", kwargs={"pk": assessment.pk}),
        {"review_by": "2099-01-31", "version": assessment.version + 1},
    )
    assert response.status_code == 302
    assessment.refresh_from_db()
    assert assessment.signed_off_by == lena and str(assessment.review_by) == "2099-01-31"


def test_report_follows_the_official_template(browser_as, world):
    pk = world["assessment"].pk
    page = browser_as("aude").get(reverse("assessments:report", kwargs={"pk": pk})).content.decode()
    for title in (
        "自评估工作概述",
        "出境活动整体情况",
        "拟出境活动的风险评估情况",
        "出境活动风险自评估结论",
    ):
        assert title in page
    assert "not a legal opinion" in page
    report = json.loads(
        browser_as("aude").get(reverse("assessments:report_json", kwargs={"pk": pk})).content
    )
    assert [s["number"] for s in report["sections"]] == ["一", "二", "三", "四"]
    markdown = browser_as("aude").get(reverse("assessments:report_md", kwargs={"pk": pk}))
    assert markdown["Content-Disposition"].endswith('.md"')
    assert "## 四、出境活动风险自评估结论" in markdown.content.decode()


def test_history_page_names_user_reason_and_question(browser_as, world):
    page = browser_as("aude").get(
        reverse("assessments:history", kwargs={"pk": world["assessment"].pk})
    )
    html = page.content.decode()
    assert "Letter" in html and "lena" in html
    assert "Is the data&#x27;s source lawful and documented?" in html


def test_case_page_shows_state_constraints_aid_and_what_is_missing(
    browser_as, world, people, priya, lena
):
    japan = make_offer(priya, world["case"], vendor=make_vendor(priya, jurisdiction="Japan"))
    assessment_save(
        actor=lena,
        assessment=world["assessment"],
        reason="Scope",
        jurisdiction="Singapore",
        answers={"access_logging_required": {"value": "yes"}},
    )
    response = whole_case(browser_as("tariq"), world["case"].pk)
    html = response.content.decode()
    assert "One audited entry point" in html
    assert "An aid to the legal reviewer, not a legal opinion." in html
    missing = case_overview(world["case"], actor=people["tariq"])["missing"]
    assert any("not signed off" in m for m in missing)
    assert any(str(japan.vendor) in m and "assess this offer" in m for m in missing)


def test_case_panel_without_assessment_says_so(people, priya):
    case = make_case(priya)
    panel = case_panel(case, actor=people["tariq"])
    assert panel.missing == ["No data-export self-assessment yet: the legal reviewer starts one."]


@pytest.mark.parametrize("offers", [1, 12])
def test_case_panel_query_count_is_fixed(django_assert_num_queries, people, priya, lena, offers):
    case = make_case(priya)
    for _ in range(offers):
        make_offer(priya, case, vendor=make_vendor(priya, jurisdiction="Japan"))
    make_assessment(lena, case, jurisdiction="Singapore")
    for offer in list(case.offers.all())[:3]:
        make_assessment(lena, case, offer=offer)
    actor = people["aude"]
    actor.has_perm("assessments.view_dataexportassessment")  # warm the permission cache
    # Whatever the number of offers: three, and two for the data inventory and model-weight
    # files the audit facts are judged on (docs/rules/data-export.md#audit-facts).
    with django_assert_num_queries(5):
        case_panel(case, actor=actor)

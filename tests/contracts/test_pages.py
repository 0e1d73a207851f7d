"""Browser pages: the whole checklist saved at once, errors in place, fixed query counts."""

import pytest
from django.urls import reverse

from apps.contracts.models import ChecklistTemplate, RedFlagWaiver
from apps.contracts.panels import case_panel, offer_panel
from tests.contracts.factories import all_acceptable, item, make_checklist, set_statuses
from tests.factories import make_case, make_offer


@pytest.fixture
def checklist(lena, priya):
    return make_checklist(lena, creator=priya)


def form_data(checklist, *, reason="Reviewed the MSA", overrides=None, version=None):
    data = {"change_reason": reason, "version": checklist.version if version is None else version}
    items = list(checklist.items.order_by("number"))
    data["items-TOTAL_FORMS"] = len(items)
    data["items-INITIAL_FORMS"] = len(items)
    for index, entry in enumerate(items):
        row = {"item_id": entry.pk, "status": entry.status, "clause_reference": "", "excerpt": ""}
        row.update((overrides or {}).get(entry.key, {}))
        row.setdefault("note", "")
        for name, value in row.items():
            data[f"items-{index}-{name}"] = value
    return data


def statuses(checklist):
    return {i.key: i.status for i in checklist.items.all()}


def test_the_whole_checklist_is_saved_from_one_page(browser_as, checklist, lena):
    url = reverse("contracts:checklist", kwargs={"offer_pk": checklist.offer_id})
    overrides = {
        "sla": {"status": "acceptable", "clause_reference": "§7.1", "excerpt": "99.9 %"},
        "termination_exit": {"status": "missing", "note": "No export window"},
    }
    response = browser_as("lena").post(url, form_data(checklist, overrides=overrides))
    assert response.status_code == 302
    sla = item(checklist, "sla")
    assert (sla.status, sla.clause_reference, sla.excerpt, sla.reviewer) == (
        "acceptable",
        "§7.1",
        "99.9 %",
        lena,
    )
    assert item(checklist, "termination_exit").history.first().history_change_reason == (
        "Reviewed the MSA"
    )


@pytest.mark.parametrize(
    "overrides,reason,message",
    [
        ({"sla": {"status": "bogus"}}, "Review", "Select a valid choice"),
        ({"sla": {"status": "not_applicable"}}, "Review", "cannot be marked not applicable"),
        ({"sla": {"item_id": 999999}}, "Review", "not part of this checklist"),
        ({"sla": {"status": "missing"}}, "", "This field is required"),
    ],
    ids=["unknown status", "required item n/a", "foreign item id", "no reason"],
)
def test_invalid_input_is_shown_in_place_and_nothing_is_saved(
    browser_as, checklist, overrides, reason, message
):
    url = reverse("contracts:checklist", kwargs={"offer_pk": checklist.offer_id})
    data = form_data(
        checklist,
        reason=reason,
        overrides={**overrides, "audit_rights": {"status": "acceptable"}},
    )
    before = statuses(checklist)
    response = browser_as("lena").post(url, data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert 'role="alert"' in response.content.decode()
    assert statuses(checklist) == before


def test_a_stale_form_is_refused_with_a_message(browser_as, checklist, lena):
    stale = form_data(checklist, overrides={"sla": {"status": "missing"}})
    set_statuses(lena, checklist, {"sla": "acceptable"})
    url = reverse("contracts:checklist", kwargs={"offer_pk": checklist.offer_id})
    response = browser_as("lena").post(url, stale)
    assert "Someone else saved this record" in response.content.decode()
    assert item(checklist, "sla").status == "acceptable"


def test_waiving_in_the_browser(browser_as, checklist, lena):
    set_statuses(lena, checklist, {"sla": "missing"})
    url = reverse("contracts:waive", kwargs={"pk": item(checklist, "sla").pk})
    response = browser_as("lena").post(url, {"reason": "   "})
    assert response.status_code == 200 and "This field is required" in response.content.decode()
    assert not RedFlagWaiver.objects.exists()
    response = browser_as("lena").post(url, {"reason": "Credits are enough"})
    assert response.status_code == 302
    page = browser_as("lena").get(reverse("offers:detail", kwargs={"pk": checklist.offer_id}))
    assert "Credits are enough" in page.content.decode()
    assert "waived by Lena" in page.content.decode()


def test_waiving_a_non_red_item_in_the_browser_is_refused(browser_as, checklist):
    url = reverse("contracts:waive", kwargs={"pk": item(checklist, "sla").pk})
    response = browser_as("lena").post(url, {"reason": "Why not"})
    assert response.status_code == 200
    assert "is not a red flag" in response.content.decode()
    assert not RedFlagWaiver.objects.exists()


def template_form_data(rows, note):
    """What the publish page posts: v1's items first, then the extra rows."""
    v1 = list(ChecklistTemplate.objects.get(number=1).items.order_by("number"))
    data = {"items-TOTAL_FORMS": len(rows), "items-INITIAL_FORMS": len(v1), "note": note}
    for index, row in enumerate(rows):
        for name, value in row.items():
            data[f"items-{index}-{name}"] = value
    return data


def v1_rows():
    return [
        {
            "key": i.key,
            "title": i.title,
            "sub_points": "\n".join(i.sub_points),
            "guidance": i.guidance,
            **({"required": "on"} if i.required else {}),
        }
        for i in ChecklistTemplate.objects.get(number=1).items.order_by("number")
    ]


def test_publishing_a_template_version_in_the_browser(browser_as, lena):
    rows = v1_rows()
    for row in rows[1:]:
        row["DELETE"] = "on"
    rows[0]["sub_points"] = "Value\n\nCredits\n"
    rows += [{"key": "sovereignty", "title": "Data sovereignty", "sub_points": "Where"}, {}]
    response = browser_as("lena").post(
        reverse("contracts:template-publish"), template_form_data(rows, "Shorter list")
    )
    assert response.status_code == 302, response.context["formset"].errors
    latest = ChecklistTemplate.objects.get(number=3)
    assert [(i.key, i.sub_points, i.required) for i in latest.items.all()] == [
        ("sla", ["Value", "Credits"], True),
        ("sovereignty", ["Where"], False),
    ]
    assert latest.published_by == lena


def test_a_template_with_a_duplicate_key_is_refused_in_place(browser_as):
    rows = [*v1_rows(), {"key": "sla", "title": "SLA again"}]
    response = browser_as("lena").post(
        reverse("contracts:template-publish"), template_form_data(rows, "Dup")
    )
    assert response.status_code == 200
    assert "used by another item" in response.content.decode()
    assert ChecklistTemplate.objects.count() == 2


def build_case(lena, priya, offers):
    case = make_case(priya)
    for n in range(offers):
        checklist = make_checklist(lena, offer=make_offer(priya, case))
        if n % 2:
            set_statuses(lena, checklist, {**all_acceptable(checklist), "sla": "missing"})
    return case


@pytest.mark.parametrize("offers", [1, 6])
def test_comparison_query_count_does_not_grow_with_offers(
    browser_as, lena, priya, offers, django_assert_max_num_queries
):
    case = build_case(lena, priya, offers)
    client = browser_as("aude")
    with django_assert_max_num_queries(14):
        response = client.get(reverse("contracts:comparison", kwargs={"pk": case.pk}))
    assert response.status_code == 200
    assert response.content.decode().count('class="badge bad">red flag') == offers // 2


@pytest.mark.parametrize("offers", [1, 6])
def test_panels_use_a_fixed_number_of_queries(lena, priya, aude, offers, django_assert_num_queries):
    case = build_case(lena, priya, offers)
    with django_assert_num_queries(4):
        panel = case_panel(case, actor=aude)
    assert len(panel.context["offers"]) == offers
    offer = case.offers.first()
    with django_assert_num_queries(4):  # one loads the permissions
        offer_panel(offer, actor=aude)


def test_case_panel_says_what_is_missing(lena, priya, aude):
    case = make_case(priya)
    bare = make_offer(priya, case)
    half = make_checklist(lena, offer=make_offer(priya, case))
    set_statuses(lena, half, {"sla": "missing", "audit_rights": "needs_negotiation"})
    missing = case_panel(case, actor=aude).missing
    assert f"{bare.vendor}: no contract clause checklist yet." in missing
    assert any(
        "2 open red flags" in line and "1. Service level agreement (SLA) (missing)" in line
        for line in missing
    )
    assert f"{half.offer.vendor}: 9 of 11 clause items not reviewed yet." in missing

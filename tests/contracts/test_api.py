"""API: bulk item saves are atomic and name the bad field; waivers; template versions."""

import pytest

from apps.contracts.models import ChecklistTemplate, ClauseChecklist, RedFlagWaiver
from apps.contracts.selectors import open_red_flags
from tests.contracts.factories import item, make_checklist, set_statuses


@pytest.fixture
def checklist(lena, priya):
    return make_checklist(lena, creator=priya)


def url(checklist):
    return f"/api/v1/clause-checklists/{checklist.pk}/"


def test_patch_saves_many_items_and_returns_red_flags(api_as, checklist):
    body = {
        "items": [
            {"id": item(checklist, "sla").pk, "status": "acceptable", "clause_reference": "§7"},
            {"id": item(checklist, "audit_rights").pk, "status": "missing"},
        ],
        "change_reason": "MSA read",
        "version": checklist.version,
    }
    response = api_as("lena").patch(url(checklist), body, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["version"] == checklist.version + 1
    by_key = {i["key"]: i for i in data["items"]}
    assert by_key["sla"]["reviewer"] == "lena" and by_key["sla"]["verdict"] == "acceptable"
    assert by_key["audit_rights"]["verdict"] == "red_flag"
    assert data["open_red_flags"][0] == {
        "item_id": item(checklist, "audit_rights").pk,
        "number": 6,
        "key": "audit_rights",
        "title": "Audit rights",
        "status": "missing",
        "kind": "red_flag",
    }


@pytest.mark.parametrize(
    "bad,field",
    [
        ({"status": "bogus"}, "status"),
        ({"id": 999999}, "id"),
        ({"status": "not_applicable"}, "status"),
    ],
)
def test_patch_with_one_bad_row_saves_nothing(api_as, checklist, bad, field):
    rows = [
        {"id": item(checklist, "audit_rights").pk, "status": "missing"},
        {"id": item(checklist, "sla").pk, "status": "acceptable", **bad},
    ]
    response = api_as("lena").patch(
        url(checklist),
        {"items": rows, "change_reason": "x", "version": checklist.version},
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()
    text = str(errors)
    assert field in text
    assert item(checklist, "audit_rights").status == ""


def test_patch_needs_a_reason_and_a_fresh_version(api_as, checklist, lena):
    row = [{"id": item(checklist, "sla").pk, "status": "missing"}]
    response = api_as("lena").patch(url(checklist), {"items": row}, format="json")
    assert response.status_code == 400 and "change_reason" in response.json()
    set_statuses(lena, checklist, {"sla": "acceptable"})
    response = api_as("lena").patch(
        url(checklist),
        {"items": row, "change_reason": "x", "version": checklist.version},
        format="json",
    )
    assert response.status_code == 409
    assert item(checklist, "sla").status == "acceptable"


def test_starting_a_second_checklist_for_an_offer_is_refused(api_as, checklist):
    response = api_as("lena").post(
        "/api/v1/clause-checklists/", {"offer": checklist.offer_id}, format="json"
    )
    assert response.status_code == 400 and "offer" in response.json()
    assert ClauseChecklist.objects.count() == 1


def test_filters_by_offer_and_case(api_as, checklist, lena, priya):
    make_checklist(lena, creator=priya)
    api = api_as("aude")
    assert api.get(f"/api/v1/clause-checklists/?offer={checklist.offer_id}").json()["count"] == 1
    case = checklist.offer.case_id
    assert api.get(f"/api/v1/clause-checklists/?case={case}").json()["count"] == 1
    assert api.get("/api/v1/clause-checklists/").json()["count"] == 2


@pytest.mark.parametrize(
    "status,reason,field",
    [("missing", "  ", "reason"), ("acceptable", "Fine", "item"), ("", "Fine", "item")],
    ids=["blank reason", "non-red item", "unreviewed item"],
)
def test_invalid_waivers_are_refused(api_as, checklist, lena, status, reason, field):
    if status:
        set_statuses(lena, checklist, {"sla": status})
    response = api_as("lena").post(
        "/api/v1/red-flag-waivers/",
        {"item": item(checklist, "sla").pk, "reason": reason},
        format="json",
    )
    assert response.status_code == 400 and field in response.json()
    assert not RedFlagWaiver.objects.exists()


def test_a_waiver_is_listed_with_who_and_when(api_as, checklist, lena):
    set_statuses(lena, checklist, {"sla": "missing"})
    api_as("lena").post(
        "/api/v1/red-flag-waivers/",
        {"item": item(checklist, "sla").pk, "reason": "Credits suffice"},
        format="json",
    )
    [waiver] = api_as("aude").get("/api/v1/red-flag-waivers/").json()["results"]
    assert waiver["waived_by"] == "lena" and waiver["waived_at"]
    assert (waiver["reason"], waiver["waived_status"]) == ("Credits suffice", "missing")


def test_publishing_a_template_version(api_as):
    body = {
        "note": "Add sovereignty",
        "items": [
            {"key": "sla", "title": "SLA", "sub_points": ["Value"]},
            {"key": "sovereignty", "title": "Sovereignty", "required": False},
        ],
    }
    response = api_as("lena").post("/api/v1/checklist-templates/", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["number"] == 3 and response.json()["published_by"] == "lena"
    duplicate = {**body, "items": [{"key": "a", "title": "A"}, {"key": "a", "title": "B"}]}
    response = api_as("lena").post("/api/v1/checklist-templates/", duplicate, format="json")
    assert response.status_code == 400 and "items[1].key" in response.json()
    assert ChecklistTemplate.objects.count() == 3


def test_demo_has_a_checklist_per_offer_and_one_with_two_red_flags_one_waived(demo_case, db):
    case = demo_case
    checklists = {c.offer.vendor.name: c for c in ClauseChecklist.objects.filter(offer__case=case)}
    assert len(checklists) == 3
    borealis = checklists["Borealis GPU Cloud K.K."]
    red = [i for i in borealis.items.all() if i.status in ("missing", "needs_negotiation")]
    assert len(red) == 2
    waiver = RedFlagWaiver.objects.get()
    assert waiver.item.checklist == borealis and waiver.waived_by.username == "lena"
    assert [f.key for f in open_red_flags(borealis)] == ["termination_exit"]
    assert open_red_flags(checklists["Aurora Compute Pte. Ltd."]) == []

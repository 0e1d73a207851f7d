"""A clause checklist saved item by item: one row kept on its own, the others left as the
reader typed them, unsaved; a refused row or a stale page saves nothing."""

import pytest
from django.urls import reverse

from tests.contracts.factories import item, make_checklist, set_statuses
from tests.contracts.test_pages import form_data, statuses

pytestmark = pytest.mark.django_db


@pytest.fixture
def checklist(lena, priya):
    return make_checklist(lena, creator=priya)


def _url(checklist) -> str:
    return reverse("contracts:checklist", kwargs={"offer_pk": checklist.offer_id})


OVERRIDES = {
    "sla": {"status": "acceptable", "clause_reference": "§7.1", "excerpt": "99.9 %"},
    "termination_exit": {"status": "missing", "note": "No export window yet"},
}


def test_one_item_is_saved_and_the_other_rows_keep_what_was_typed(browser_as, checklist, lena):
    before = statuses(checklist)
    data = form_data(checklist, reason="", overrides=OVERRIDES)
    data["save_item"] = item(checklist, "sla").pk
    response = browser_as("lena").post(_url(checklist), data)

    assert response.status_code == 200
    sla = item(checklist, "sla")
    assert (sla.status, sla.clause_reference, sla.excerpt, sla.reviewer) == (
        "acceptable",
        "§7.1",
        "99.9 %",
        lena,
    )
    assert sla.history.first().history_change_reason == "Saved item by item"
    # The other row is not saved, but its entries are on the page, without refusals.
    assert item(checklist, "termination_exit").status == before["termination_exit"]
    text = response.content.decode()
    assert "No export window yet" in text and "Item saved." in text
    assert 'role="alert"' not in text
    # The page now carries the checklist's new version: the whole save goes through.
    checklist.refresh_from_db()
    assert f'name="version" value="{checklist.version}"' in text
    whole = form_data(checklist, overrides=OVERRIDES)
    assert browser_as("lena").post(_url(checklist), whole).status_code == 302
    assert item(checklist, "termination_exit").status == "missing"


def test_the_reason_given_is_kept_with_the_item(browser_as, checklist):
    data = form_data(checklist, reason="First reading of the MSA", overrides=OVERRIDES)
    data["save_item"] = item(checklist, "sla").pk
    assert browser_as("lena").post(_url(checklist), data).status_code == 200
    reason = item(checklist, "sla").history.first().history_change_reason
    assert reason == "First reading of the MSA"


def test_a_refused_row_saves_nothing_and_says_why_in_place(browser_as, checklist):
    before = statuses(checklist)
    data = form_data(checklist, reason="", overrides={"sla": {"status": "not_applicable"}})
    data["save_item"] = item(checklist, "sla").pk
    response = browser_as("lena").post(_url(checklist), data)
    assert response.status_code == 200
    text = response.content.decode()
    assert "cannot be marked not applicable" in text and 'role="alert"' in text
    assert "This field is required" not in text  # no reason is needed for one item
    assert statuses(checklist) == before


def test_a_stale_page_saves_no_item(browser_as, checklist, lena):
    stale = form_data(checklist, overrides={"sla": {"status": "missing"}})
    stale["save_item"] = item(checklist, "sla").pk
    set_statuses(lena, checklist, {"sla": "acceptable"})
    response = browser_as("lena").post(_url(checklist), stale)
    assert "Someone else saved this record" in response.content.decode()
    assert item(checklist, "sla").status == "acceptable"


def test_an_item_of_another_checklist_is_refused(browser_as, checklist):
    data = form_data(checklist, overrides=OVERRIDES)
    data["save_item"] = 999999
    response = browser_as("lena").post(_url(checklist), data)
    assert "This item is not on the checklist." in response.content.decode()
    assert item(checklist, "sla").status != "acceptable"


@pytest.mark.parametrize(("who", "status"), [("priya", 403), ("tariq", 403), ("aude", 403)])
def test_only_legal_saves_an_item(browser_as, checklist, who, status):
    data = form_data(checklist, overrides=OVERRIDES)
    data["save_item"] = item(checklist, "sla").pk
    assert browser_as(who).post(_url(checklist), data).status_code == status
    assert item(checklist, "sla").status != "acceptable"


def test_each_row_offers_its_own_save_after_the_whole_checklists(browser_as, checklist):
    text = browser_as("lena").get(_url(checklist)).content.decode()
    first_submit = text.index('type="submit"')
    assert "Save the whole checklist" in text[first_submit : first_submit + 80]
    sla = item(checklist, "sla")
    assert f'name="save_item" value="{sla.pk}" formaction="#item-{sla.pk}"' in text
    assert f'id="item-{sla.pk}"' in text

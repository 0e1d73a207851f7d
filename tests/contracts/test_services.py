"""Writes: checklists from templates, atomic whole-checklist saves, waivers and their lapse."""

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from apps.contracts.models import ChecklistItem, ChecklistTemplate, RedFlagWaiver
from apps.contracts.selectors import case_red_flags, open_red_flags
from apps.contracts.services import (
    checklist_create,
    checklist_save,
    checklist_template_publish,
    red_flag_waive,
)
from apps.core.services import ConcurrentEditError, tracked_update
from tests.contracts.factories import all_acceptable, item, make_checklist, set_statuses
from tests.factories import make_case, make_offer


@pytest.fixture
def checklist(lena, priya):
    return make_checklist(lena, creator=priya)


def snapshot(checklist):
    return [
        (i.status, i.clause_reference, i.excerpt, i.note, i.reviewer_id, i.version)
        for i in ChecklistItem.objects.filter(checklist=checklist).order_by("number")
    ] + [checklist.__class__.objects.get(pk=checklist.pk).version]


def test_a_new_checklist_copies_the_latest_template_with_every_item_unreviewed(checklist):
    assert checklist.template.number == 2  # the default, version 2
    items = list(checklist.items.order_by("number"))
    assert len(items) == 11
    assert all(i.status == "" and i.reviewer is None for i in items)
    assert items[0].sub_points == checklist.template.items.get(key="sla").sub_points
    assert [f.kind.value for f in open_red_flags(checklist)] == ["not_reviewed"] * 11


def test_an_offer_has_one_checklist(lena, checklist):
    with pytest.raises(ValidationError) as error:
        checklist_create(actor=lena, offer=checklist.offer)
    assert "offer" in error.value.message_dict


def test_saving_records_reviewer_time_and_history_with_reason(lena, checklist):
    sla = item(checklist, "sla")
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[{"id": sla.pk, "status": "acceptable", "clause_reference": " §7.1 "}],
        reason="First pass over the MSA",
    )
    sla.refresh_from_db()
    assert (sla.status, sla.clause_reference, sla.reviewer) == ("acceptable", "§7.1", lena)
    assert sla.reviewed_at is not None
    latest = sla.history.first()
    assert (latest.history_user, latest.history_change_reason) == (lena, "First pass over the MSA")
    checklist_row = checklist.history.first()
    assert checklist_row.history_user == lena
    assert checklist_row.history_change_reason == "First pass over the MSA"
    # Items not in the save are untouched.
    assert item(checklist, "planned_maintenance").reviewer is None


BAD_ROWS = [
    # (row builder, error key, message fragment)
    (lambda c: {"id": item(c, "sla").pk, "status": "bogus"}, "items[1].status", "not a status"),
    (lambda c: {"id": 999999, "status": "missing"}, "items[1].id", "not part of this checklist"),
    (
        lambda c: {"id": item(c, "sla").pk, "status": "not_applicable"},
        "items[1].status",
        "required",
    ),
    (lambda c: {"id": item(c, "audit_rights").pk}, "items[1].id", "listed twice"),
    (lambda c: {"status": "missing"}, "items[1].id", "not part of this checklist"),
]


@pytest.mark.parametrize("row,key,fragment", BAD_ROWS)
def test_one_bad_row_saves_nothing_and_names_the_field(lena, checklist, row, key, fragment):
    before = snapshot(checklist)
    good = {"id": item(checklist, "audit_rights").pk, "status": "missing", "note": "No logs"}
    with pytest.raises(ValidationError) as error:
        checklist_save(
            actor=lena, checklist=checklist, items=[good, row(checklist)], reason="Review"
        )
    assert list(error.value.message_dict) == [key]
    assert fragment in error.value.message_dict[key][0]
    assert snapshot(checklist) == before


def test_an_item_of_another_checklist_is_refused(lena, priya, checklist):
    other = make_checklist(lena, creator=priya)
    foreign = item(other, "sla")
    with pytest.raises(ValidationError) as error:
        checklist_save(
            actor=lena,
            checklist=checklist,
            items=[{"id": foreign.pk, "status": "acceptable"}],
            reason="Review",
        )
    assert "items[0].id" in error.value.message_dict
    foreign.refresh_from_db()
    assert foreign.status == ""


def test_a_save_without_a_reason_is_refused(lena, checklist):
    before = snapshot(checklist)
    with pytest.raises(ValidationError) as error:
        checklist_save(
            actor=lena,
            checklist=checklist,
            items=[{"id": item(checklist, "sla").pk, "status": "acceptable"}],
            reason="  ",
        )
    assert "change_reason" in error.value.message_dict
    assert snapshot(checklist) == before


def test_a_stale_version_is_refused(lena, checklist):
    set_statuses(lena, checklist, {"sla": "acceptable"})
    with pytest.raises(ConcurrentEditError):
        checklist_save(
            actor=lena,
            checklist=checklist,
            items=[{"id": item(checklist, "sla").pk, "status": "missing"}],
            reason="Review",
            expected_version=checklist.version,
        )
    assert item(checklist, "sla").status == "acceptable"


def test_only_legal_reviewers_write(priya, tariq, aude, checklist):
    for person in (priya, tariq, aude):
        with pytest.raises(PermissionDenied):
            checklist_save(actor=person, checklist=checklist, items=[], reason="x")
        with pytest.raises(PermissionDenied):
            red_flag_waive(actor=person, item=item(checklist, "sla"), reason="x")
        with pytest.raises(PermissionDenied):
            checklist_create(actor=person, offer=checklist.offer)
        with pytest.raises(PermissionDenied):
            checklist_template_publish(actor=person, items=[{"key": "a", "title": "A"}], note="x")


# --- waivers -----------------------------------------------------------------


def test_a_waiver_names_who_when_and_why_and_clears_the_red_flag(lena, checklist):
    set_statuses(lena, checklist, {**all_acceptable(checklist), "prepayment": "needs_negotiation"})
    assert [f.key for f in open_red_flags(checklist)] == ["prepayment"]
    waiver = red_flag_waive(
        actor=lena, item=item(checklist, "prepayment"), reason="  Finance accepts 50 %  "
    )
    assert (waiver.waived_by, waiver.justification) == (lena, "Finance accepts 50 %")
    assert waiver.waived_status == "needs_negotiation" and waiver.waived_at is not None
    assert open_red_flags(checklist) == []
    row = waiver.history.get()
    assert row.history_user == lena and "Finance accepts 50 %" in row.history_change_reason


@pytest.mark.parametrize("reason", ["", "   ", "\n\t"])
def test_a_waiver_without_a_reason_is_refused(lena, checklist, reason):
    set_statuses(lena, checklist, {"sla": "missing"})
    with pytest.raises(ValidationError) as error:
        red_flag_waive(actor=lena, item=item(checklist, "sla"), reason=reason)
    assert "reason" in error.value.message_dict
    assert not RedFlagWaiver.objects.exists()


def test_a_waiver_reason_cannot_be_emptied_later(lena, checklist):
    set_statuses(lena, checklist, {"sla": "missing"})
    waiver = red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Credits suffice")
    with pytest.raises(ValidationError) as error:
        tracked_update(waiver, actor=lena, reason="Tidy", fields={"justification": "  "})
    assert "justification" in error.value.message_dict
    waiver.refresh_from_db()
    assert waiver.justification == "Credits suffice"


@pytest.mark.parametrize("status", ["", "acceptable", "not_applicable"])
def test_waiving_an_item_that_is_not_a_red_flag_is_refused(lena, checklist, status):
    if status:
        set_statuses(lena, checklist, {"prepayment": status})
    with pytest.raises(ValidationError) as error:
        red_flag_waive(actor=lena, item=item(checklist, "prepayment"), reason="Fine")
    assert "not a red flag" in error.value.message_dict["item"][0]
    assert not RedFlagWaiver.objects.exists()


def test_a_red_flag_is_waived_once(lena, checklist):
    set_statuses(lena, checklist, {"sla": "missing"})
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Accepted")
    with pytest.raises(ValidationError) as error:
        red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Again")
    assert "already waived" in error.value.message_dict["item"][0]


def test_editing_the_excerpt_keeps_the_waiver(lena, checklist):
    set_statuses(lena, checklist, {"sla": "missing"})
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Accepted")
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[{"id": item(checklist, "sla").pk, "excerpt": "New text", "status": "missing"}],
        reason="Quoted the clause",
    )
    waiver = RedFlagWaiver.objects.get()
    assert waiver.lapsed_at is None
    assert "sla" not in [f.key for f in open_red_flags(checklist)]


@pytest.mark.parametrize("new_status", ["needs_negotiation", "acceptable", ""])
def test_changing_the_status_lapses_the_waiver_for_good(lena, checklist, new_status):
    set_statuses(lena, checklist, {"sla": "missing"})
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Accepted")
    set_statuses(lena, checklist, {"sla": new_status}, reason="Vendor revised §7")
    waiver = RedFlagWaiver.objects.get()
    assert waiver.lapsed_at is not None
    assert f"to {new_status or 'not reviewed'}" in waiver.lapse_note
    lapse = waiver.history.first()
    assert lapse.history_user == lena and "lapsed" in lapse.history_change_reason
    # Back to the status once waived: the old waiver does not revive.
    set_statuses(lena, checklist, {"sla": "missing"}, reason="Vendor withdrew the revision")
    assert [f.key for f in open_red_flags(checklist) if f.kind == "red_flag"] == ["sla"]
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Accepted again")
    assert RedFlagWaiver.objects.count() == 2


# --- template versions ---------------------------------------------------------


NEW_ITEMS = [
    {"key": "sla", "title": "SLA", "sub_points": ["Value", "Credits"], "required": True},
    {"key": "sovereignty", "title": "Data sovereignty", "sub_points": [], "required": False},
]


def test_a_new_version_is_used_by_new_checklists_and_old_ones_keep_theirs(lena, priya):
    old = make_checklist(lena, creator=priya)
    template = checklist_template_publish(actor=lena, items=NEW_ITEMS, note="Add sovereignty")
    assert (template.number, template.published_by) == (3, lena)
    assert template.history.get().history_change_reason.startswith("Template v3 published")
    new = make_checklist(lena, creator=priya)
    assert new.template == template
    assert [i.key for i in new.items.order_by("number")] == ["sla", "sovereignty"]
    old.refresh_from_db()
    assert old.template.number == 2 and old.items.count() == 11
    assert item(old, "sla").title == "Service level agreement (SLA)"


@pytest.mark.parametrize(
    "items,note,key",
    [
        ([], "x", "items"),
        ([{"key": "a", "title": "A"}, {"key": "a", "title": "B"}], "x", "items[1].key"),
        ([{"key": "bad key!", "title": "A"}], "x", "items[0].key"),
        ([{"key": "a", "title": " "}], "x", "items[0].title"),
        ([{"key": "a", "title": "A", "sub_points": ["ok", ""]}], "x", "items[0].sub_points"),
        ([{"key": "a", "title": "A"}], " ", "note"),
    ],
)
def test_an_invalid_template_is_refused_and_nothing_published(lena, items, note, key):
    with pytest.raises(ValidationError) as error:
        checklist_template_publish(actor=lena, items=items, note=note)
    assert key in error.value.message_dict
    assert ChecklistTemplate.objects.count() == 2  # the default, versions 1 and 2


def test_case_red_flags_per_offer(lena, priya):
    case = make_case(priya)
    clear = make_checklist(lena, offer=make_offer(priya, case))
    set_statuses(lena, clear, all_acceptable(clear))
    flagged = make_checklist(lena, offer=make_offer(priya, case))
    set_statuses(lena, flagged, {**all_acceptable(flagged), "audit_rights": "missing"})
    bare = make_offer(priya, case)
    entries = {e.offer.pk: e for e in case_red_flags(case)}
    assert not entries[clear.offer_id].blocks_approval
    assert [f.key for f in entries[flagged.offer_id].open] == ["audit_rights"]
    assert entries[bare.pk].checklist is None and entries[bare.pk].blocks_approval

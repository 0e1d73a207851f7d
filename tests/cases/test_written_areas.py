"""A write recomputes only the areas of the stored standing that its kind of record can
change, and what it keeps is what a standing computed afresh would show.

Each kind of record listed in ``KIND_AREAS`` is written (deleted, through the tracked
service) on the demo's cases, whose standings five kinds of viewer have stored; every
stored standing must then equal one computed afresh. A kind mapped to too few areas
leaves a kept area showing what the deleted record said, and fails here.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import ProtectedError
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone, translation

from apps.audit.chain import tracked_history_models
from apps.cases.models import CaseStanding, ProcurementCase, StandingMark
from apps.cases.records import case_path
from apps.cases.services import case_update
from apps.casework import panels as panels_module
from apps.casework.cockpit import open_findings
from apps.casework.panels import AREAS, case_area_panel, case_panels
from apps.casework.registers import approved_offer_id
from apps.casework.standing import areas_above, case_standing, chain_versions, compute_standing
from apps.casework.written_areas import (
    CASE,
    CASE_FIELDS_READ_BY_NO_AREA,
    KIND_AREAS,
    areas_written,
)
from apps.core.services import tracked_delete
from tests.cases.test_case_standing import STORED_PAGE_QUERIES

VIEWERS = ("tariq", "lena", "priya", "fiona", "aude")
# Kinds every area may read: left out of the mapping on purpose (every area).
# A vendor's certification is a finding on each of its cases: every area, as a vendor.
UNMAPPED = {
    "offers.offer",
    "offers.declaredspec",
    "vendors.vendor",
    "vendors.certification",
    # A lapsed reassessment is a finding on every case of its vendor: every area.
    "casework.reassessment",
    CASE,
}


@pytest.fixture
def demo(demo_once, db):
    # The refreshes the demo's writes left waiting for a commit that never comes (the
    # module's transaction is rolled back): one waiting for a case stands in for the
    # refresh of every later write to it in the same transaction.
    connection.run_on_commit[:] = [
        entry for entry in connection.run_on_commit if not hasattr(entry[1], "refreshes_case")
    ]
    return demo_once


def users() -> dict:
    return {user.username: user for user in get_user_model().objects.all()}


def store_standings(case) -> None:
    everyone = users()
    for name in VIEWERS:
        case_standing(case, everyone[name], chain_versions())


def assert_current(case, viewers=VIEWERS) -> None:
    """Every stored standing of the case was computed after the last write, and shows
    what a standing computed afresh shows."""
    case = ProcurementCase.objects.get(pk=case.pk)
    head = chain_versions().seq
    rows = list(CaseStanding.objects.filter(case=case).select_related("viewer"))
    assert len(rows) == len(viewers)
    for row in rows:
        assert row.seq == head, "left stale"
        with translation.override(row.language), timezone.override(row.time_zone):
            fresh = compute_standing(case, row.viewer)
        assert row.html == fresh.html, f"{row.viewer}: stored differs from afresh"
        assert row.parts == fresh.parts


def edit_requirements(case, text: str) -> None:
    case = ProcurementCase.objects.get(pk=case.pk)
    case_update(actor=users()["priya"], case=case, fields={"requirements": text}, reason="Noted")


def records_of(kind: str, case):
    model = next(m.instance_type for m in tracked_history_models() if _label(m) == kind)
    path = case_path(model)
    rows = model._base_manager.order_by("-pk")
    return rows.filter(**{path: case.pk}) if path else rows


def _label(history_model) -> str:
    return history_model.instance_type._meta.label_lower


def delete_one(kind: str, case, actor) -> bool:
    """Delete one record of this kind that the case reads; False when none can be."""
    for record in records_of(kind, case)[:5]:
        try:
            with transaction.atomic():
                tracked_delete(record, actor=actor, reason="Withdrawn")
        except (ProtectedError, ValueError, LookupError):  # held by another: the next
            continue
        return True
    return False


@pytest.mark.parametrize("kind", sorted(KIND_AREAS))
def test_a_write_of_each_kind_leaves_every_stored_standing_as_computed_afresh(
    demo, kind, django_capture_on_commit_callbacks
):
    admin = users()["admin"]
    deleted = False
    for case in ProcurementCase.objects.order_by("pk"):
        if not records_of(kind, case).exists():
            continue  # nothing of this kind to delete: the case's standing is not stored
        store_standings(case)
        with django_capture_on_commit_callbacks(execute=True):
            if not delete_one(kind, case, admin):
                continue
            deleted = True
            # A record that hangs from no case only raises every case's mark: the next
            # write to the case computes its areas too.
            edit_requirements(case, f"After a {kind} went")
        assert_current(case)
    if not deleted:
        pytest.skip(f"the demo has no {kind} that can be deleted")


def test_several_kinds_in_one_transaction_recompute_the_union_of_their_areas(
    demo, monkeypatch, django_capture_on_commit_callbacks
):
    case = ProcurementCase.objects.order_by("pk").first()
    store_standings(case)
    admin = users()["admin"]
    computed = watch_areas(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        assert delete_one("contracts.checklistitem", case, admin)
        assert delete_one("access.accessgrant", case, admin)
    assert computed == {"contracts", "access", "approval"}
    assert_current(case)


def watch_areas(monkeypatch) -> set[str]:
    """The areas whose panel is computed from now on."""
    computed: set[str] = set()
    for area, entry in AREAS.items():
        if entry.provider is None:
            continue

        def counted(case, *, actor, _area=area, _compute=entry.provider.case_panel):
            computed.add(_area)
            return _compute(case, actor=actor)

        monkeypatch.setattr(entry.provider, "case_panel", counted)
    summary = panels_module.case_summary

    def summary_counted(case):
        computed.update({"sizing", "offers"})
        return summary(case)

    monkeypatch.setattr(panels_module, "case_summary", summary_counted)
    return computed


def test_an_edit_recomputes_only_the_areas_its_kind_can_change(
    demo, monkeypatch, django_capture_on_commit_callbacks
):
    case = ProcurementCase.objects.order_by("pk").first()
    store_standings(case)
    computed = watch_areas(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        edit_requirements(case, "Only the header reads this")
    assert computed == set()
    assert_current(case)  # computes every area afresh, to compare

    computed.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert delete_one("contracts.checklistitem", case, users()["admin"])
    assert computed == {"contracts", "approval"}
    assert_current(case)


def test_an_edit_on_the_case_form_recomputes_no_area_and_the_page_reads_it_stored(
    demo, client, monkeypatch, django_capture_on_commit_callbacks
):
    case = ProcurementCase.objects.order_by("pk").first()
    client.force_login(users()["tariq"])
    page = reverse("cases:detail", kwargs={"pk": case.pk})
    assert client.get(page).status_code == 200  # stored for this kind of viewer
    form = {
        name: "" if getattr(case, name) is None else getattr(case, name)
        for name in ("name", "workload", "slo_p95_ttft_ms", "slo_error_rate_pct")
        + ("slo_peak_memory_pct", "exit_window_days", "availability_need_pct", "version")
    }
    computed = watch_areas(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("cases:edit", kwargs={"pk": case.pk}),
            {**form, "requirements": "Now for 800 users", "change_reason": "More users"},
        )
    assert response.status_code == 302
    assert computed == set()
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(page).status_code == 200
    assert len(ctx.captured_queries) == STORED_PAGE_QUERIES
    assert_current(case, viewers=["tariq"])


def test_an_edit_of_what_every_area_reads_recomputes_every_area(
    demo, monkeypatch, django_capture_on_commit_callbacks
):
    case = ProcurementCase.objects.order_by("pk").first()
    store_standings(case)
    computed = watch_areas(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        case_update(
            actor=users()["priya"],
            case=ProcurementCase.objects.get(pk=case.pk),
            fields={"slo_p95_ttft_ms": case.slo_p95_ttft_ms + 1},
            reason="Tighter",
        )
    assert computed == set(AREAS)
    assert_current(case)


def test_an_unknown_kind_marks_every_area():
    assert areas_written("someapp.newrecord") is None
    assert areas_written(CASE, None) is None
    assert areas_written(CASE, frozenset({"requirements", "version"})) == frozenset()
    assert areas_written(CASE, frozenset({"requirements", "status"})) is None


def test_the_marks_say_which_areas_changed_since_a_standing():
    case_mark = StandingMark(key=1, seq=12, areas={"contracts": 12, "approval": 12, "costs": 9})
    every = StandingMark(key=StandingMark.ALL, seq=7, areas={"*": 7})
    assert areas_above([case_mark, every], 10) == {"contracts", "approval"}
    assert areas_above([case_mark, every], 8) == {"contracts", "approval", "costs"}
    assert areas_above([case_mark, every], 6) is None
    assert areas_above([StandingMark(key=1, seq=12, areas=None)], 11) is None  # older marks
    assert areas_above([case_mark], 12) == set()


def test_every_mapped_kind_is_a_tracked_record_and_every_area_exists():
    tracked = {_label(model) for model in tracked_history_models()}
    assert set(KIND_AREAS) <= tracked
    for areas in KIND_AREAS.values():
        assert set(areas) <= set(AREAS)
    # Every tracked kind is mapped or left to every area on purpose.
    assert tracked - set(KIND_AREAS) <= UNMAPPED, tracked - set(KIND_AREAS) - UNMAPPED


_TABLE = re.compile(r'(?:FROM|JOIN)\s+"([a-z_0-9]+)"')


def test_every_record_an_area_reads_is_mapped_to_that_area(demo):
    """Each area's panel computed alone on each demo case: the kinds of record it reads
    (the tables of its queries) must list the area (or change every area)."""
    kinds = {m.instance_type._meta.db_table: _label(m) for m in tracked_history_models()}
    admin = users()["admin"]
    for case in ProcurementCase.objects.all():
        for area in AREAS:
            with CaptureQueriesContext(connection) as ctx:
                case_area_panel(case, area, actor=admin)
            read = {kinds.get(t) for q in ctx.captured_queries for t in _TABLE.findall(q["sql"])}
            for kind in read & set(KIND_AREAS):
                assert area in KIND_AREAS[kind], f"{area} reads {kind}"


class Watched:
    """A case field whose every read is noted."""

    def __init__(self, name: str, read: set[str]):
        self.name, self.read = name, read

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        self.read.add(self.name)
        return instance.__dict__[self.name]

    def __set__(self, instance, value):
        instance.__dict__[self.name] = value


def test_no_area_reads_the_case_fields_mapped_to_none(demo, monkeypatch):
    cases = list(ProcurementCase.objects.all())
    admin = users()["admin"]
    read: set[str] = set()
    for name in CASE_FIELDS_READ_BY_NO_AREA:
        monkeypatch.setattr(ProcurementCase, name, Watched(name, read), raising=False)
    for case in cases:
        panels = case_panels(case, actor=admin)
        approved_offer_id(case)
        open_findings(case, panels)
    assert not read & CASE_FIELDS_READ_BY_NO_AREA


# Before the commit: the case locked and read, its constraints checked, saved with its
# history row linked into the chain, the fields it changed and the case's mark.
# After: the chain's versions, the case, its stale standings and marks, the viewer's
# permissions, the standing stored in place.
EDIT_QUERIES = 21


def test_an_edit_costs_a_fixed_number_of_queries_however_long_the_history(
    demo, django_capture_on_commit_callbacks
):
    case = ProcurementCase.objects.order_by("pk").first()
    tariq = users()["tariq"]
    counts = []
    for rounds in (1, 30):
        for n in range(rounds):
            with django_capture_on_commit_callbacks(execute=True):
                edit_requirements(case, f"Round {rounds}.{n}")
        case_standing(case, tariq, chain_versions())
        with (
            django_capture_on_commit_callbacks(execute=True),
            CaptureQueriesContext(connection) as ctx,
        ):
            edit_requirements(case, f"Measured after {rounds}")
        counts.append(len(ctx.captured_queries))
    assert counts == [EDIT_QUERIES, EDIT_QUERIES]

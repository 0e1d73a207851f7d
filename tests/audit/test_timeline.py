"""The audit timeline (issue 7 part 3): diffs, who/when/why, filters, bounded queries at scale."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.cases.models import ProcurementCase
from apps.cases.services import case_update
from apps.offers.models import Offer
from apps.offers.services import offer_update
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres

HistoricalCase = ProcurementCase.history.model
HistoricalOffer = Offer.history.model


@pytest.fixture
def case_with_changes(priya, tariq):
    case = make_case(priya, name="Timeline")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    case_update(actor=tariq, case=case, fields={"slo_p95_ttft_ms": 900}, reason="Tighter SLO")
    offer_update(
        actor=priya, offer=offer, fields={"notes": "Call back Friday"}, reason="Vendor call"
    )
    return case, offer


def _entries(response):
    return list(response.context["page"].object_list)


def test_the_case_timeline_shows_field_diffs_with_who_when_why(browser_as, case_with_changes):
    case, offer = case_with_changes
    response = browser_as("lena").get(reverse("audit:case-timeline", args=[case.pk]))
    assert response.status_code == 200
    entries = _entries(response)
    newest = entries[0]
    assert (newest.source.key, newest.user, newest.reason, newest.action) == (
        "offers.offer",
        "priya",
        "Vendor call",
        "changed",
    )
    assert [(c.field, c.old, c.new) for c in newest.changes] == [("notes", "", "Call back Friday")]
    slo = next(e for e in entries if e.reason == "Tighter SLO")
    assert slo.user == "tariq" and [(c.old, c.new) for c in slo.changes] == [(1500, 900)]
    assert [e.when for e in entries] == sorted((e.when for e in entries), reverse=True)
    assert {"cases.procurementcase", "offers.offer", "offers.declaredspec"} <= {
        e.source.key for e in entries
    }
    assert "Tighter SLO" in response.content.decode()


def test_filters_by_user_record_type_and_date(browser_as, case_with_changes, tariq):
    case, _offer = case_with_changes
    client = browser_as("aude")
    url = reverse("audit:case-timeline", args=[case.pk])
    by_tariq = _entries(client.get(url, {"user": tariq.pk}))
    assert [e.reason for e in by_tariq] == ["Tighter SLO"]
    offers_only = _entries(client.get(url, {"record_type": ["offers.offer"]}))
    assert offers_only and {e.source.key for e in offers_only} == {"offers.offer"}
    today = timezone.localdate()
    assert len(_entries(client.get(url, {"since": today, "until": today}))) >= 5
    assert _entries(client.get(url, {"until": today - timedelta(days=1)})) == []


def test_a_bad_date_range_names_the_field(browser_as, case_with_changes):
    case, _offer = case_with_changes
    response = browser_as("aude").get(
        reverse("audit:case-timeline", args=[case.pk]),
        {"since": "2026-05-02", "until": "2026-05-01"},
    )
    assert response.context["form"].errors == {
        "until": ["The end of the range is before its start."]
    }
    bad = browser_as("aude").get(
        reverse("audit:case-timeline", args=[case.pk]), {"since": "yesterday"}
    )
    assert "since" in bad.context["form"].errors


def test_the_record_timeline_shows_one_records_history(browser_as, case_with_changes):
    _case, offer = case_with_changes
    response = browser_as("tariq").get(
        reverse("audit:record-timeline", args=["offers.offer", offer.pk])
    )
    entries = _entries(response)
    assert {e.object_id for e in entries} == {offer.pk}
    assert [e.action for e in entries] == ["changed", "created"]


def test_history_exports_stream_csv_and_json_with_filters(browser_as, case_with_changes, tariq):
    case, _offer = case_with_changes
    client = browser_as("aude")
    response = client.get(reverse("audit:case-timeline-csv", args=[case.pk]), {"user": tariq.pk})
    assert response.streaming and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["user"], r["reason"]) for r in rows] == [("tariq", "Tighter SLO")]
    assert json.loads(rows[0]["changes"])[0]["new"] == "900"
    response = client.get(reverse("audit:case-timeline-json", args=[case.pk]))
    data = json.loads(b"".join(response.streaming_content))
    assert data["case"]["id"] == case.pk
    assert data["entries"][0]["reason"] == "Vendor call"


def test_the_api_timeline_is_paginated_and_validates_filters(api_as, case_with_changes):
    case, _offer = case_with_changes
    api = api_as("lena")
    response = api.get(f"/api/v1/cases/{case.pk}/timeline/", {"page_size": 2})
    assert response.status_code == 200
    assert response.data["next"] and len(response.data["results"]) == 2
    assert response.data["results"][0]["reason"] == "Vendor call"
    following = api.get(response.data["next"])
    assert following.status_code == 200 and len(following.data["results"]) == 2
    rows = [(r["record_type"], r["history_id"]) for r in response.data["results"]]
    assert not {(r["record_type"], r["history_id"]) for r in following.data["results"]} & set(rows)
    bad = api.get(f"/api/v1/cases/{case.pk}/timeline/", {"since": "soon"})
    assert bad.status_code == 400 and "since" in bad.data


def _bulk_history(case, offer, n):
    """``n`` history rows for the case and ``n`` for its offer, written straight to the tables."""
    start = timezone.now() - timedelta(days=30)
    rows = []
    for model, obj_id, field in [
        (HistoricalCase, case.pk, "requirements"),
        (HistoricalOffer, offer.pk, "notes"),
    ]:
        base = model.objects.filter(id=obj_id).order_by("history_id").first()
        values = {
            f.attname: getattr(base, f.attname)
            for f in model._meta.concrete_fields
            if not f.primary_key
        }
        batch = []
        for i in range(n):
            batch.append(
                model(
                    **{
                        **values,
                        field: f"revision {i}",
                        "history_type": "~",
                        "history_change_reason": f"edit {i}",
                        "history_date": start
                        + timedelta(seconds=2 * i + (model is HistoricalOffer)),
                    }
                )
            )
        model.objects.bulk_create(batch, batch_size=2000)
        rows.append(n)
    return sum(rows)


def _count_queries(client, url, params=None):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, params or {})
    assert response.status_code == 200
    return len(ctx.captured_queries), response


def _case_read_by_the_auditor(browser_as, priya, name: str):
    """A case with one offer, the auditor's browser, and the case timeline's URL."""
    case = make_case(priya, name=name)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    return case, offer, browser_as("aude"), reverse("audit:case-timeline", args=[case.pk])


@pytest.mark.whole_case
def test_twenty_thousand_rows_load_in_a_bounded_number_of_queries(
    browser_as, priya, django_assert_max_num_queries
):
    from apps.audit.timeline import Cursor

    case, offer, client, url = _case_read_by_the_auditor(browser_as, priya, "Busy")
    small, _response = _count_queries(client, url)
    assert small <= 15  # session, permissions, case, filter form, the heads, one per type

    assert _bulk_history(case, offer, 10_000) == 20_000
    with django_assert_max_num_queries(small):
        response = client.get(url)
    page = response.context["page"]
    assert len(page.entries) == 50 and page.next_cursor is not None
    newest = page.entries[0]
    assert newest.record == offer.vendor.name or newest.source.key in {
        "offers.offer",
        "offers.declaredspec",
        "cases.procurementcase",
    }
    # A page half-way down: after a row in the middle of the history.
    row = HistoricalOffer.objects.filter(history_change_reason="edit 5000").get()
    middle_cursor = Cursor(row.history_date, row.history_id, "offers.offer").text()
    with django_assert_max_num_queries(small):
        deep = client.get(url, {"cursor": middle_cursor})
    middle = deep.context["page"].entries
    assert len(middle) == 50
    # Consecutive revisions of the same record diff against each other.
    revised = next(e for e in middle if e.reason.startswith("edit ") and e.changes)
    n = int(revised.reason.split()[1])
    assert [(c.old, c.new) for c in revised.changes] == [(f"revision {n - 1}", f"revision {n}")]
    with django_assert_max_num_queries(small):
        client.get(url, {"record_type": ["offers.offer"], "cursor": middle_cursor})
    api, _response = _count_queries(
        browser_as("aude"), f"/api/v1/cases/{case.pk}/timeline/", {"cursor": middle_cursor}
    )
    assert api <= small


def _every_entry(parts, flt=None):
    """The whole timeline worked out row by row from every history row: the reference."""
    from apps.audit.timeline import TimelineFilter, _narrow, diff

    flt = flt or TimelineFilter()
    entries = []
    for index, (source, queryset) in enumerate(parts):
        if flt.record_types and source.key not in flt.record_types:
            continue
        object_pk = source.model._meta.pk.attname
        everything = list(queryset.order_by("history_id"))
        wanted = {row.history_id for row in _narrow(queryset, flt)}
        before = {}
        for row in everything:
            previous = before.get(getattr(row, object_pk))
            before[getattr(row, object_pk)] = row
            if row.history_id in wanted:
                changes = diff(previous, row) if previous is not None else []
                entries.append((row.history_date, row.history_id, index, source.key, changes))
    entries.sort(key=lambda e: (e[0], e[1], e[2]), reverse=True)
    return [(key, history_id, changes) for _when, history_id, _src, key, changes in entries]


def _page_view(entries):
    return [(e.source.key, e.history_id, e.changes) for e in entries]


@pytest.fixture
def busy_case_with_ties(priya, tariq):
    """A case and its offer edited 120 times each, every case edit at the same instant as one."""
    case = make_case(priya, name="Ties")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    start = timezone.now() - timedelta(days=3)
    for model, obj_id, field in [
        (HistoricalCase, case.pk, "requirements"),
        (HistoricalOffer, offer.pk, "notes"),
    ]:
        base = model.objects.filter(id=obj_id).order_by("history_id").first()
        values = {f.attname: getattr(base, f.attname) for f in model._meta.concrete_fields}
        values.pop("history_id")
        model.objects.bulk_create(
            model(
                **{
                    **values,
                    field: f"revision {i}",
                    "history_type": "~",
                    "history_change_reason": f"edit {i}",
                    "history_user_id": (tariq if i % 3 else priya).pk,
                    # Pairs of rows, one per table, share a date; some dates repeat.
                    "history_date": start + timedelta(seconds=i // 2),
                }
            )
            for i in range(120)
        )
    return case


@pytest.mark.parametrize("page_size", [50, 7])
def test_every_page_equals_the_whole_timeline_sliced(busy_case_with_ties, page_size):
    from django.core.paginator import Paginator

    from apps.audit.sources import case_history_sources
    from apps.audit.timeline import Timeline, TimelineFilter

    parts = case_history_sources(busy_case_with_ties)
    reference = _every_entry(parts)
    paginator = Paginator(Timeline(parts, TimelineFilter()), page_size)
    assert paginator.count == len(reference) > 240
    assert paginator.num_pages == -(-len(reference) // page_size)
    for number in sorted({1, 2, 3, paginator.num_pages // 2, paginator.num_pages}):
        page = paginator.page(number)
        start = (number - 1) * page_size
        assert _page_view(page.object_list) == reference[start : start + page_size], number
    # The ties between tables are really there, and ordered by history id then table.
    dates = [e.when for e in paginator.page(1).object_list]
    assert len(set(dates)) < len(dates)


@pytest.mark.parametrize(
    "flt_kwargs",
    [{"record_types": ("offers.offer",)}, {"user": "tariq"}, {"since": "today"}],
)
def test_filtered_pages_equal_the_filtered_whole_timeline(busy_case_with_ties, tariq, flt_kwargs):
    from django.core.paginator import Paginator

    from apps.audit.sources import case_history_sources
    from apps.audit.timeline import Timeline, TimelineFilter

    if flt_kwargs.get("user"):
        flt = TimelineFilter(user_id=tariq.pk)
    elif flt_kwargs.get("since"):
        flt = TimelineFilter(since=timezone.localdate() - timedelta(days=3))
    else:
        flt = TimelineFilter(**flt_kwargs)
    parts = case_history_sources(busy_case_with_ties)
    reference = _every_entry(parts, flt)
    paginator = Paginator(Timeline(parts, flt), 20)
    assert paginator.count == len(reference) > 0
    for number in paginator.page_range:
        start = (number - 1) * 20
        assert _page_view(paginator.page(number).object_list) == reference[start : start + 20]


def test_the_first_page_costs_the_same_queries_however_many_rows(
    browser_as, priya, django_assert_max_num_queries
):
    case, offer, client, url = _case_read_by_the_auditor(browser_as, priya, "Growing")
    api_url = f"/api/v1/cases/{case.pk}/timeline/"
    small, _response = _count_queries(client, url)
    small_api, _response = _count_queries(client, api_url)
    _bulk_history(case, offer, 1_000)
    with django_assert_max_num_queries(small):
        response = client.get(url)
    assert len(response.context["page"].entries) == 50 and response.context["older"]
    with django_assert_max_num_queries(small_api):
        assert client.get(api_url).status_code == 200


def test_one_save_is_one_event_and_references_read_as_names(browser_as, priya, lena):
    """A checklist saved with three clauses is one event, and the reviewer is a name."""
    from apps.contracts.services import checklist_create, checklist_save

    case = make_case(priya, name="One save")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    checklist = checklist_create(actor=lena, offer=offer)
    items = list(checklist.items.order_by("number")[:3])
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[{"id": item.pk, "status": "acceptable"} for item in items],
        reason="First reading of the draft",
    )
    response = browser_as("aude").get(reverse("audit:case-timeline", args=[case.pk]))
    assert response.status_code == 200
    newest = response.context["events"][0]
    assert newest.first.reason == "First reading of the draft"
    # The three clauses and the checklist they belong to: one save, one event.
    assert len(newest.entries) == 4
    assert newest.records == "3 checklist items, clause checklist"
    reviewers = {
        (change.old, change.new)
        for entry in newest.entries
        for change in entry.changes
        if change.field == "reviewer_id"
    }
    assert reviewers == {(None, "lena")}
    html = response.content.decode()
    assert html.count("First reading of the draft") == 1
    assert "One save, 4 records" in html
    assert f"→ <ins>{lena.pk}</ins>" not in html and "→ <ins>lena</ins>" in html

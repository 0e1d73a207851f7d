"""The case timeline read page by page after a cursor, on the page and in the API: every
row once and in order (ties between tables included), filters kept from page to page, a
cursor that does not read refused clearly, each role's reading unchanged, the same
queries however long the history, and each table's rows read through its index."""

import re
from datetime import timedelta
from html import unescape

import pytest
from django.core import signing
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.audit.sources import case_history_sources, case_sources
from apps.audit.timeline import CURSOR_SALT, CaseTimeline, Cursor, TimelineFilter
from apps.cases.models import ProcurementCase
from apps.offers.models import Offer
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres

HistoricalCase = ProcurementCase.history.model
HistoricalOffer = Offer.history.model
ROLES = ["priya", "lena", "tariq", "aude", "ada"]
OLDER = re.compile(r'<a href="\?([^"]+)" rel="next">')


def _grow(case, offer, n, *, start, users=(), same_ids=False):
    """``n`` rows for the case and ``n`` for its offer, written straight to their tables;
    row i of each is dated alike, some dates repeat, and with ``same_ids`` the two rows
    of a date carry the same history id as well."""
    for table_number, (model, obj_id, field) in enumerate(
        [(HistoricalCase, case.pk, "requirements"), (HistoricalOffer, offer.pk, "notes")]
    ):
        base = model.objects.filter(id=obj_id).order_by("history_id").first()
        values = {f.attname: getattr(base, f.attname) for f in model._meta.concrete_fields}
        values.pop("history_id")
        rows = []
        for i in range(n):
            row = {
                **values,
                field: f"revision {i} of {table_number}",
                "history_type": "~",
                "history_change_reason": f"edit {i}",
                "history_date": start + timedelta(seconds=i // 3),
            }
            if users:
                row["history_user_id"] = users[i % len(users)].pk
            if same_ids:
                row["history_id"] = 900_000 + i
            rows.append(model(**row))
        # untracked: rows standing for edits made long ago, written as history itself
        model.objects.bulk_create(rows)


@pytest.fixture
def tied_case(priya, tariq):
    """A case and its offer edited 90 times each, every case edit at the same instant and
    with the same history id as an offer edit, three edits to an instant."""
    case = make_case(priya, name="Ties")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    start = timezone.now() - timedelta(days=3)
    _grow(case, offer, 90, start=start, users=(priya, tariq, tariq), same_ids=True)
    return case


def _reference(case, *, actor=None, flt=None):
    """Every row of the case's timeline, newest first: (table key, history id), worked out
    from the tables themselves without the timeline's paging."""
    flt = flt or TimelineFilter()
    rows = []
    for source, queryset in case_history_sources(case, actor=actor):
        if flt.record_types and source.key not in flt.record_types:
            continue
        if flt.user_id is not None:
            queryset = queryset.filter(history_user_id=flt.user_id)
        for when, history_id in queryset.values_list("history_date", "history_id"):
            rows.append((when, history_id, source.key))
    rows.sort(reverse=True)
    return [(key, history_id) for _when, history_id, key in rows]


def _page_through(client, url, params=None):
    """Every page of the case timeline, following each page's link to the older one."""
    seen, pages, query = [], 0, dict(params or {})
    response = client.get(url, query)
    while True:
        assert response.status_code == 200
        pages += 1
        seen += [(e.source.key, e.history_id) for e in response.context["page"].entries]
        link = OLDER.search(response.content.decode())
        if link is None:
            assert response.context["older"] is None
            return seen, pages
        response = client.get(f"{url}?{unescape(link.group(1))}")


def _api_through(api, case, params=None):
    seen, pages = [], 0
    response = api.get(f"/api/v1/cases/{case.pk}/timeline/", params or {})
    while True:
        assert response.status_code == 200, response.data
        pages += 1
        seen += [(r["record_type"], r["history_id"]) for r in response.data["results"]]
        if response.data["next"] is None:
            return seen, pages
        response = api.get(response.data["next"])


def test_the_page_gives_every_row_once_in_order(browser_as, tied_case):
    reference = _reference(tied_case)
    seen, pages = _page_through(
        browser_as("aude"), reverse("audit:case-timeline", args=[tied_case.pk])
    )
    assert seen == reference and len(seen) > 180
    assert pages == -(-len(reference) // 50)
    # The ties are there: rows of two tables with the same date and history id.
    assert ("offers.offer", 900_000) in seen and ("cases.procurementcase", 900_000) in seen


def test_the_api_gives_every_row_once_in_order(api_as, tied_case):
    reference = _reference(tied_case)
    seen, pages = _api_through(api_as("aude"), tied_case, {"page_size": 7})
    assert seen == reference
    assert pages == -(-len(reference) // 7)
    # A cursor falling between the two rows of a tie: the page after it starts at the other.
    offer_at = seen.index(("offers.offer", 900_000))
    assert seen[offer_at + 1] == ("cases.procurementcase", 900_000)


def test_the_cursor_breaks_ties_by_table(tied_case):
    """Past the offer's row of a tie comes the case's row of the same date and id; past
    the case's row, neither of the two again."""
    when = HistoricalOffer.objects.get(history_id=900_030).history_date
    timeline = CaseTimeline(tied_case.pk, case_sources(), TimelineFilter())
    after_offer = timeline.page_after(Cursor(when, 900_030, "offers.offer"), 3).entries
    assert (after_offer[0].source.key, after_offer[0].history_id) == (
        "cases.procurementcase",
        900_030,
    )
    after_case = timeline.page_after(Cursor(when, 900_030, "cases.procurementcase"), 3).entries
    assert [(e.source.key, e.history_id) for e in after_case] == [
        (e.source.key, e.history_id) for e in after_offer[1:3]
    ] + [(after_case[2].source.key, after_case[2].history_id)]
    assert all(e.history_id < 900_030 and e.when <= when for e in after_case)


def test_filters_hold_from_page_to_page(browser_as, api_as, tied_case, tariq):
    flt = TimelineFilter(user_id=tariq.pk, record_types=("offers.offer",))
    reference = _reference(tied_case, flt=flt)
    assert len(reference) == 60
    params = {"user": tariq.pk, "record_type": "offers.offer"}
    seen, pages = _api_through(api_as("lena"), tied_case, {**params, "page_size": 25})
    assert (seen, pages) == (reference, 3)
    seen, pages = _page_through(
        browser_as("aude"), reverse("audit:case-timeline", args=[tied_case.pk]), params
    )
    assert (seen, pages) == (reference, 2)


def test_an_area_stands_for_its_kinds_and_single_kind_links_still_work(browser_as, tied_case):
    client = browser_as("aude")
    url = reverse("audit:case-timeline", args=[tied_case.pk])
    offers = TimelineFilter(record_types=("offers.declaredspec", "offers.offer"))
    seen, _pages = _page_through(client, url, {"area": "offers"})
    assert seen == _reference(tied_case, flt=offers)
    single = TimelineFilter(record_types=("offers.declaredspec",))
    seen, _pages = _page_through(client, url, {"record_type": "offers.declaredspec"})
    assert seen == _reference(tied_case, flt=single) and seen
    html = client.get(url).content.decode()
    assert 'name="area" value="contracts"' in html and 'name="area" value="evidence"' in html
    # The single kinds fold away unless one of them is chosen.
    assert '<details class="record-kinds">' in html
    chosen = client.get(url, {"record_type": "offers.offer"}).content.decode()
    assert '<details class="record-kinds" open>' in chosen


def _bad_cursors():
    good = Cursor(timezone.now(), 5, "offers.offer").text()
    return [
        "not-a-cursor",
        good[:-3] + ("abc" if not good.endswith("abc") else "xyz"),  # its signature changed
        signing.dumps("a page", salt=CURSOR_SALT),  # signed here, but not a cursor
        signing.dumps(["yesterday", 5, "offers.offer"], salt=CURSOR_SALT),
        signing.dumps([timezone.now().isoformat(), "5", "offers.offer"], salt=CURSOR_SALT),
        signing.dumps([timezone.now().isoformat(), 5, "offers.offer"], salt="another.salt"),
    ]


@pytest.mark.parametrize("index", range(6))
def test_a_cursor_that_does_not_read_is_refused_clearly(browser_as, api_as, tied_case, index):
    bad = _bad_cursors()[index]
    response = api_as("aude").get(f"/api/v1/cases/{tied_case.pk}/timeline/", {"cursor": bad})
    assert response.status_code == 400 and "cursor" in response.data
    page = browser_as("aude").get(
        reverse("audit:case-timeline", args=[tied_case.pk]), {"cursor": bad}
    )
    assert page.status_code == 200 and page.context["cursor_refused"]
    assert "That page link could not be read" in page.content.decode()
    newest = [(e.source.key, e.history_id) for e in page.context["page"].entries]
    assert newest == _reference(tied_case)[:50]


@pytest.mark.parametrize("role", ROLES)
def test_each_role_pages_through_what_it_read_before(api_as, tied_case, people, role):
    """Paging changes nothing of who reads what: each role's rows are those of the
    record types it may read, every page with a cursor as allowed as the first."""
    reference = _reference(tied_case, actor=people[role])
    seen, _pages = _api_through(api_as(role), tied_case, {"page_size": 40})
    assert seen == reference and seen


def test_an_old_page_number_shows_the_newest_page(browser_as, tied_case):
    response = browser_as("aude").get(
        reverse("audit:case-timeline", args=[tied_case.pk]), {"page": 3}
    )
    assert response.status_code == 200 and not response.context["cursor_refused"]
    newest = [(e.source.key, e.history_id) for e in response.context["page"].entries]
    assert newest == _reference(tied_case)[:50]


def _queries(client, url, params=None):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, params or {})
    assert response.status_code == 200
    return len(ctx.captured_queries), response


def test_a_page_costs_the_same_queries_at_5_and_200_history_rows(browser_as, api_as, priya):
    """The rows added are older than the case's own first rows, so the newest page holds
    the same kinds of record either way: only the length of the history differs."""
    case = make_case(priya, name="Growing")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    long_ago = timezone.now() - timedelta(days=400)
    client, api = browser_as("aude"), api_as("aude")
    url, api_url = (
        reverse("audit:case-timeline", args=[case.pk]),
        f"/api/v1/cases/{case.pk}/timeline/",
    )
    _grow(case, offer, 3, start=long_ago)
    assert len(_reference(case)) < 50
    client.get(url)  # the first view of a process loads content types and templates
    small, _response = _queries(client, url)
    small_api, _response = _queries(api, api_url)

    _grow(case, offer, 100, start=long_ago - timedelta(days=1))
    assert len(_reference(case)) > 200
    large, response = _queries(client, url)
    large_api, api_response = _queries(api, api_url)
    assert (large, large_api) == (small, small_api)
    # A page deep in the history costs no more than the first.
    deep, _response = _queries(client, f"{url}?{response.context['older']}")
    deep_api, _response = _queries(api, api_response.data["next"])
    assert deep <= large and deep_api <= large_api


def test_every_case_history_table_has_its_timeline_index(db):
    """Each table a case's timeline reads is indexed on the column leading to the case,
    then date and history id, and on record and history id: a table added later needs
    its indexes in a migration."""
    with connection.cursor() as cursor:
        for source in case_sources():
            table = source.history_model._meta.db_table
            link = (
                source.model._meta.pk.attname
                if source.case_path == ""
                else source.history_model._meta.get_field(source.case_path.split("__")[0]).attname
            )
            columns = [
                c["columns"]
                for c in connection.introspection.get_constraints(cursor, table).values()
                if c["index"]
            ]
            assert [link, "history_date", "history_id"] in columns, table
            # The row before each row of a page, for its diff.
            record = source.model._meta.pk.column
            assert [record, "history_id"] in columns, table


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plan of PostgreSQL")
def test_a_tables_rows_of_one_case_are_read_through_its_index(priya):
    """Many cases' offers in one history table, analysed: the newest rows of one case past
    a cursor are a range of the (case, date, history id) index, not a scan and a sort."""
    case = make_case(priya, name="Indexed")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    base = HistoricalOffer.objects.filter(id=offer.pk).first()
    values = {f.attname: getattr(base, f.attname) for f in HistoricalOffer._meta.concrete_fields}
    values.pop("history_id")
    start = timezone.now() - timedelta(days=100)
    # untracked: other cases' history, written straight to the table to make it large
    HistoricalOffer.objects.bulk_create(
        HistoricalOffer(
            **{
                **values,
                "case_id": case.pk + 1 + i % 200,
                "history_date": start + timedelta(minutes=i),
            }
        )
        for i in range(20_000)
    )
    with connection.cursor() as db:
        db.execute(f"ANALYZE {HistoricalOffer._meta.db_table}")
        for source_key, table_index in (("offers.offer", "tl_offers_offer"),):
            timeline = CaseTimeline(
                case.pk, case_sources(), TimelineFilter(record_types=(source_key,))
            )
            for after in (None, Cursor(timezone.now(), 10**9, "offers.offer")):
                sql, params = timeline.branch(0, after, 51)
                db.execute(f"EXPLAIN {sql}", params)
                plan = "\n".join(line for (line,) in db.fetchall())
                assert table_index in plan, plan
                assert "Seq Scan" not in plan and "Sort" not in plan, plan


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plan of PostgreSQL")
def test_a_table_that_reaches_its_case_through_a_join_is_read_through_its_index(priya, lena):
    """Clauses reach their case through their checklist and offer: the clause history of
    one case is read by checklist through an index (its own or the checklist column's,
    whichever the planner finds cheaper: the case's few checklists each give a range),
    never by scanning the table."""
    from apps.contracts.models import ChecklistItem
    from apps.contracts.services import checklist_create

    case = make_case(priya, name="Joined")
    checklist_create(actor=lena, offer=make_offer(priya, case, spec=FULL_SPEC))
    history = ChecklistItem.history.model
    base = history.objects.order_by("history_id").first()
    values = {f.attname: getattr(base, f.attname) for f in history._meta.concrete_fields}
    values.pop("history_id")
    start = timezone.now() - timedelta(days=100)
    # untracked: other checklists' history, written straight to the table to make it large
    history.objects.bulk_create(
        history(
            **{
                **values,
                "checklist_id": base.checklist_id + 1 + i % 500,
                "history_date": start + timedelta(minutes=i),
            }
        )
        for i in range(20_000)
    )
    table = history._meta.db_table
    timeline = CaseTimeline(
        case.pk, case_sources(), TimelineFilter(record_types=("contracts.checklistitem",))
    )
    with connection.cursor() as db:
        db.execute(f"ANALYZE {table}")
        for after in (None, Cursor(timezone.now(), 10**9, "contracts.checklistitem")):
            sql, params = timeline.branch(0, after, 51)
            db.execute(f"EXPLAIN {sql}", params)
            plan = "\n".join(line for (line,) in db.fetchall())
            assert re.search(rf"Index (Only )?Scan using \w+ on {table} h", plan), plan
            assert f"Seq Scan on {table}" not in plan, plan

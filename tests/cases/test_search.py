"""One search box over cases, vendors, offers, clauses and evidence."""

import hashlib
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from tests.contracts.factories import make_checklist
from tests.evidence.factories import make_bundle_record, make_token
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture
def world(priya, lena):
    vendor = make_vendor(priya, name="Borealis GPU Cloud", jurisdiction="Finland")
    case = make_case(priya, name="Borealis training run", requirements="训练 Llama 3 模型")
    offer = make_offer(priya, case, vendor=vendor, spec=FULL_SPEC, accelerator_model="H200 SXM")
    checklist = make_checklist(lena, offer=offer)
    return {"vendor": vendor, "case": case, "offer": offer, "checklist": checklist}


def _search(client, words):
    response = client.get(reverse("cases:search"), {"q": words})
    assert response.status_code == 200
    return response.content.decode()


def test_one_search_finds_each_kind(browser_as, world):
    text = _search(browser_as("priya"), "Borealis")
    assert reverse("cases:detail", args=[world["case"].pk]) in text
    assert reverse("vendors:detail", args=[world["vendor"].pk]) in text
    assert reverse("offers:detail", args=[world["offer"].pk]) in text


def test_clauses_and_chinese_text(browser_as, world):
    clause = world["checklist"].items.order_by("number").first()
    assert clause.title.split()[0] in _search(browser_as("lena"), clause.title.split()[0])
    assert reverse("cases:detail", args=[world["case"].pk]) in _search(browser_as("priya"), "模型")


def test_a_clause_hit_leads_each_role_to_a_page_it_may_open(browser_as, world):
    clause = world["checklist"].items.order_by("number").first()
    for role in ("lena", "aude"):
        client = browser_as(role)
        text = _search(client, clause.title)
        start = text.index('<div class="search-results">')
        link = text[start:].split('href="', 1)[1].split('"', 1)[0]
        assert client.get(link).status_code == 200, (role, link)


@pytest.mark.parametrize(
    "words",
    ["", "   ", "zzz-no-such-thing", "%", "_", "' OR 1=1 --", "x" * 5000]
    # What to_tsquery would read as its own syntax.
    + ["a:b", "!", "(", "\\", "&|", "'':*", "<->", "zzz:* & !", "'' '", "\\'x", "x\\"],
)
def test_odd_words_never_fail(browser_as, world, words):
    text = _search(browser_as("priya"), words)
    assert "Borealis training run" not in text.split('class="search-results"')[1]


def test_queries_do_not_grow_with_records(browser_as, priya, world):
    client = browser_as("priya")

    def queries():
        with CaptureQueriesContext(connection) as ctx:
            _search(client, "Borealis")
        return len(ctx.captured_queries)

    one = queries()
    for n in range(5):
        case = make_case(priya, name=f"Borealis {n}")
        make_offer(priya, case, vendor=world["vendor"], spec=FULL_SPEC)
    assert queries() == one


def test_the_search_page_needs_sign_in(client):
    response = client.get(reverse("cases:search"), {"q": "x"})
    assert response.status_code == 302


# --- matching, ranking and who may read what ------------------------------------------

only_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="full-text search and its indexes: PostgreSQL only"
)


def _bundle(tariq, world, content=b'{"run": "search"}'):
    token = make_token(tariq, world["case"], world["offer"]).record
    return make_bundle_record(world["case"], world["offer"], token, n=1, content=content)


def _hits(text: str) -> str:
    return text.split('class="search-results"', 1)[1]


def test_the_last_word_typed_matches_the_start_of_a_word(browser_as, world):
    text = _hits(_search(browser_as("priya"), "H20"))
    assert reverse("offers:detail", args=[world["offer"].pk]) in text


@only_postgres
def test_words_match_in_any_order_and_a_short_last_word_as_a_prefix(browser_as, world):
    client = browser_as("priya")
    case_url = reverse("cases:detail", args=[world["case"].pk])
    assert case_url in _hits(_search(client, "training Borea"))  # not a substring
    assert reverse("offers:detail", args=[world["offer"].pk]) in _hits(_search(client, "h2"))
    assert case_url not in _hits(_search(client, "training Boreal zzz"))


def test_a_chinese_substring_finds_the_case(browser_as, priya):
    case = make_case(priya, name="Sovereign cloud", requirements="在新加坡训练大语言模型，按月结算")
    text = _hits(_search(browser_as("priya"), "大语言"))
    assert reverse("cases:detail", args=[case.pk]) in text


def test_a_sha256_prefix_finds_the_bundle(browser_as, tariq, world):
    bundle = _bundle(tariq, world)
    text = _hits(_search(browser_as("tariq"), bundle.sha256[:12]))
    assert reverse("evidence:detail", args=[bundle.pk]) in text


@only_postgres
def test_hits_are_ranked_before_they_are_newest_first(browser_as, priya):
    often = make_case(priya, name="Aurora cluster", requirements="Aurora nodes, Aurora fabric")
    once = make_case(priya, name="Aurora reserve")  # newer, the word once
    text = _hits(_search(browser_as("priya"), "aurora"))
    assert text.index(reverse("cases:detail", args=[often.pk])) < text.index(
        reverse("cases:detail", args=[once.pk])
    )


@only_postgres
def test_a_word_many_records_hold_is_ranked_among_its_newest_matches(
    browser_as, priya, monkeypatch
):
    """However many records hold the word, the search ranks its newest few matches only
    (read through the table's index on its newest order, not every match)."""
    from apps.casework import search

    monkeypatch.setattr(search, "RANKED_AMONG", 2)
    oldest = make_case(priya, name="Aurora cluster", requirements="Aurora nodes, Aurora fabric")
    newer = make_case(priya, name="Aurora reserve")
    newest = make_case(priya, name="Aurora spare", requirements="Aurora again")
    text = _hits(_search(browser_as("priya"), "aurora"))
    assert reverse("cases:detail", args=[oldest.pk]) not in text
    # Among the two newest, the one holding the word more often first.
    assert text.index(reverse("cases:detail", args=[newest.pk])) < text.index(
        reverse("cases:detail", args=[newer.pk])
    )


def test_records_of_a_case_one_may_not_read_are_left_out(browser_as, tariq, world, monkeypatch):
    """The case rule is applied in the query of every kind that belongs to a case."""
    from apps.cases import selectors
    from apps.cases.models import ProcurementCase

    bundle = _bundle(tariq, world)
    clause = world["checklist"].items.order_by("number").first()
    hidden = world["case"].pk
    monkeypatch.setattr(
        selectors, "_visible_cases", lambda actor: ProcurementCase.objects.exclude(pk=hidden)
    )
    client = browser_as("ada")
    text = _hits(_search(client, "Borealis"))
    assert reverse("vendors:detail", args=[world["vendor"].pk]) in text  # belongs to no case
    assert reverse("cases:detail", args=[hidden]) not in text
    assert reverse("offers:detail", args=[world["offer"].pk]) not in text
    assert reverse("evidence:detail", args=[bundle.pk]) not in _hits(
        _search(client, bundle.sha256[:12])
    )
    assert reverse("contracts:checklist", args=[world["offer"].pk]) not in _hits(
        _search(client, clause.title)
    )


# --- the indexes are the ones the queries use (PostgreSQL) ------------------------------

# Each kind's table and the prefix of its indexes (the apps' search_indexes migrations).
INDEXES = {
    "cases_procurementcase": "cases",
    "vendors_vendor": "vendors",
    "offers_offer": "offers",
    "contracts_checklistitem": "clauses",
    "evidence_evidencebundle": "bundles",
}


def _ranked_queries(client, words) -> dict[str, str]:
    """The query that ranks each kind's matches, by table."""
    with CaptureQueriesContext(connection) as ctx:
        _search(client, words)
    found = {}
    for query in ctx.captured_queries:
        for table in INDEXES:
            if query["sql"].startswith(f'SELECT "{table}"."id"') and "ts_rank" in query["sql"]:
                found[table] = query["sql"]
    return found


def _plan(sql: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql)
        return "\n".join(row[0] for row in cursor.fetchall())


@only_postgres
def test_the_bundle_search_uses_its_indexes_on_a_full_table(browser_as, tariq, world):
    from apps.evidence.models import EvidenceBundle

    token = make_token(tariq, world["case"], world["offer"]).record
    now = timezone.now()
    # untracked: rows for the planner's statistics, never read as records
    EvidenceBundle.objects.bulk_create(
        EvidenceBundle(
            case=world["case"],
            offer=world["offer"],
            token=token,
            sha256=hashlib.sha256(f"bulk-{n}".encode()).hexdigest(),
            bundle_uuid=str(uuid.uuid4()),
            host_id=f"host-{n % 50}",
            size=100,
            storage_name=f"evidence/bulk-{n}.json",
            format_version="diligence-evidence/1",
            harness_version="0.1.0",
            received_at=now,
            nonce=token.nonce,
        )
        for n in range(3000)
    )
    with connection.cursor() as cursor:
        # What autovacuum does in time: the rows moved from the indexes' lists of
        # fresh entries into the indexes proper, and the table's statistics.
        for index in ("bundles_search_words", "bundles_search_trigrams"):
            cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [index])
        cursor.execute("ANALYZE evidence_evidencebundle")
    sha = hashlib.sha256(b"bulk-1234").hexdigest()
    client = browser_as("tariq")
    assert reverse("evidence:detail", args=[EvidenceBundle.objects.get(sha256=sha).pk]) in (
        _hits(_search(client, sha[:10]))
    )
    some_uuid = EvidenceBundle.objects.filter(host_id="host-7").first().bundle_uuid
    for words in (sha[:10], some_uuid[:13], "3f2a9c"):
        plan = _plan(_ranked_queries(client, words)["evidence_evidencebundle"])
        assert "Seq Scan on evidence_evidencebundle" not in plan, plan
        assert "Bitmap Index Scan on bundles_search_trigrams" in plan, plan
        assert "Bitmap Index Scan on bundles_search_words" in plan, plan


def _discourage_scans_of_whole_tables(cursor):
    # A few rows: reading the whole table (or a whole other index) would be cheaper.
    cursor.execute("SET LOCAL enable_seqscan = off")
    cursor.execute("SET LOCAL enable_indexscan = off")


@only_postgres
@pytest.mark.parametrize("table", INDEXES)
def test_each_kind_is_matched_by_its_indexed_expressions(browser_as, world, table):
    """With whole-table reads discouraged, the planner reaches for the search indexes: the
    query's expressions are the indexed ones (a drift between them would show here)."""
    with connection.cursor() as cursor:
        _discourage_scans_of_whole_tables(cursor)
    queries = _ranked_queries(browser_as("ada"), "Borealis")
    plan = _plan(queries[table])
    assert f"Bitmap Index Scan on {INDEXES[table]}_search_words" in plan, plan
    assert f"Bitmap Index Scan on {INDEXES[table]}_search_trigrams" in plan, plan


@only_postgres
def test_offers_are_found_by_their_vendor_through_its_name_index(browser_as, world):
    with connection.cursor() as cursor:
        _discourage_scans_of_whole_tables(cursor)
    with CaptureQueriesContext(connection) as ctx:
        text = _hits(_search(browser_as("priya"), "Borealis GPU"))
    assert reverse("offers:detail", args=[world["offer"].pk]) in text
    names = [
        q["sql"]
        for q in ctx.captured_queries
        if q["sql"].startswith('SELECT "vendors_vendor"."id" AS "pk" FROM')
    ]
    assert names
    assert "Bitmap Index Scan on vendors_search_name_trigrams" in _plan(names[0])


def test_on_postgresql_the_search_reads_its_indexes_before_any_whole_table(priya):
    """The planner prices a prefix or substring lookup in a GIN index above a scan of a
    table of some ten thousand rows; the search turns such scans off for its own
    transaction, and only for it."""
    if connection.vendor != "postgresql":
        pytest.skip("the planner's settings are PostgreSQL's")
    from apps.casework.search import search

    make_case(priya, name="Planner case")
    with CaptureQueriesContext(connection) as ctx:
        search(priya, "Planner")
    statements = [q["sql"] for q in ctx.captured_queries]
    assert any("set_config('enable_seqscan', 'off', true)" in s for s in statements[:3])
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_seqscan")
        assert cursor.fetchone()[0] == "on"  # the request's other queries are unchanged

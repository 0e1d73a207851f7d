"""One search box over cases, vendors, offers, clauses and evidence."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.contracts.factories import make_checklist
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
    "words", ["", "   ", "zzz-no-such-thing", "%", "_", "' OR 1=1 --", "x" * 5000]
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

"""The portfolio across cases: who may open it, its numbers on a small world worked out by
hand, the lists its numbers lead to, its CSV and XLSX, and its queries flat in the number
of cases."""

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.approvals.acceptances import finding_accept
from apps.approvals.models import Approval
from apps.cases.models import ProcurementCase
from apps.casework.portfolio_overview import portfolio_for
from apps.contracts.services import checklist_save, red_flag_waive
from apps.core.roles import Role
from apps.core.services import tracked_create, tracked_update
from tests.contracts.factories import item, make_checklist, set_statuses
from tests.costs.factories import CLEAN, make_budget, make_import
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor

PORTFOLIO = reverse("cases:portfolio")
ALLOWED = {"priya", "fiona", "aude", "ada"}
EVERYONE = ("priya", "lena", "tariq", "fiona", "aude", "ada")


def _approve(people, case, offer, *, days: int) -> None:
    """The decision in force approving ``offer``, ``days`` after the case was opened."""
    tracked_create(
        Approval,
        actor=people["tariq"],
        case=case,
        offer=offer,
        decision=Approval.Decision.APPROVED,
        decided_by=people["tariq"],
        decided_at=case.created_at + timedelta(days=days),
        comment="Gates held",
    )
    tracked_update(case, actor=people["tariq"], reason="Approved", fields={"status": "approved"})


def build_world(people) -> SimpleNamespace:
    """Four cases, hand-computed below:

    - Chat (evaluating): Aurora (Singapore), 64 cards at 3.10 USD per GPU-hour for 12
      months, picked by its USD budget of 1,900,000; one month billed, 145,252.00 USD;
      its contract's export window is shorter than the exit window (blocks) and its SLA
      below the availability needed (needs acceptance); a red-flag waiver running 45
      days, an accepted finding running 10.
    - Embeddings (evaluating): Borealis (Japan), 32 cards at 2.00 EUR for 12 months,
      picked by a EUR budget of 500,000; nothing billed.
    - Old draft (draft), opened 100 days ago, no offer.
    - Decided (approved): Cumulus (Singapore), 16 cards at 3.10 USD for 12 months,
      approved 10 days after it was opened; no budget.
    """
    priya, lena = people["priya"], people["lena"]
    today = timezone.localdate()
    aurora = make_vendor(priya, name="Aurora", jurisdiction="Singapore")
    borealis = make_vendor(priya, name="Borealis", jurisdiction="Japan")
    cumulus = make_vendor(priya, name="Cumulus", jurisdiction="Singapore")

    chat = make_case(priya, name="Chat", exit_window_days=30, availability_need_pct=Decimal("99.9"))
    chat_offer = make_offer(priya, chat, vendor=aurora, spec=FULL_SPEC)
    make_budget(priya, chat, offer=chat_offer)
    make_import(priya, chat, ("2026-10", CLEAN))
    checklist = make_checklist(lena, offer=chat_offer)
    set_statuses(lena, checklist, {"sla": "missing"})
    red_flag_waive(
        actor=lena,
        item=item(checklist, "sla"),
        reason="Service credits suffice",
        expires_on=today + timedelta(days=45),
    )
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[],
        reason="Terms read from the contract",
        contract_terms={
            "image_format": "proprietary",
            "data_export_days": 10,
            "sla_availability_pct": Decimal("99.5"),
        },
    )
    finding_accept(
        actor=lena,
        case=chat,
        code="contracts.image_not_portable",
        offer_id=chat_offer.pk,
        key="image_format",
        role=Role.LEGAL,
        reason="We rebuild from our own Dockerfiles",
        expires_on=today + timedelta(days=10),
    )

    embeddings = make_case(priya, name="Embeddings")
    embeddings_offer = make_offer(
        priya,
        embeddings,
        vendor=borealis,
        accelerator_count=32,
        unit_price=Decimal("2.00"),
        currency="EUR",
        prepayment_ratio=Decimal("0"),
    )
    make_budget(
        priya, embeddings, offer=embeddings_offer, currency="EUR", total_amount=Decimal("500000")
    )

    draft = make_case(priya, name="Old draft")
    # untracked: the test backdates the opening, which no service changes
    ProcurementCase.objects.filter(pk=draft.pk).update(
        created_at=timezone.now() - timedelta(days=100)
    )

    decided = make_case(priya, name="Decided")
    decided_offer = make_offer(priya, decided, vendor=cumulus, accelerator_count=16)
    decided.refresh_from_db()
    _approve(people, decided, decided_offer, days=10)
    return SimpleNamespace(
        chat=chat,
        embeddings=embeddings,
        draft=draft,
        decided=decided,
        aurora=aurora,
        borealis=borealis,
        cumulus=cumulus,
    )


@pytest.fixture
def world(people):
    return build_world(people)


def _row(rows, key, currency):
    return next(r for r in rows if r.key == key and r.currency == currency)


# --- who may open it ---------------------------------------------------------------------


@pytest.mark.parametrize("role", EVERYONE)
def test_procurement_finance_auditors_and_administrators_open_it(browser_as, people, role):
    response = browser_as(role).get(PORTFOLIO)
    if role in ALLOWED:
        assert response.status_code == 200
        assert "<h1>Portfolio</h1>" in response.content.decode()
    else:
        assert response.status_code == 403
        # The refusal says who may open it.
        text = response.content.decode()
        assert "Procurement reviewer, Finance approver, Auditor, Administrator" in text


@pytest.mark.parametrize("role", EVERYONE)
def test_the_header_links_to_it_for_those_who_may_open_it(browser_as, people, role):
    html = browser_as(role).get(reverse("cases:list")).content.decode()
    assert (f'href="{PORTFOLIO}"' in html) == (role in ALLOWED)


def test_a_visitor_not_signed_in_is_sent_to_sign_in(client):
    response = client.get(PORTFOLIO)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_superuser_in_no_group_opens_it(client, django_user_model):
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(root)
    assert client.get(PORTFOLIO).status_code == 200


# --- the numbers -------------------------------------------------------------------------


def test_the_numbers_of_a_small_world(world, people):
    p = portfolio_for(people["aude"])
    stages = {row.status: row for row in p.stages}
    assert stages["evaluating"].total.count == 2
    assert [c.count for c in stages["evaluating"].ages] == [2, 0, 0, 0]
    assert stages["draft"].total.count == 1
    assert [c.count for c in stages["draft"].ages] == [0, 0, 1, 0]  # 91–180 days
    assert stages["approved"].total.count == 1
    assert p.case_count == 4

    # Cycle time: one decided case, ten days from opening to its decision.
    assert p.cycle.count == 1
    assert p.cycle.median_days == Decimal(10)
    assert [t.name for t in p.cycle.slowest] == ["Decided"]

    # Committed: cards × 12 months × 730 h × the hourly price, in the offer's currency.
    aurora = _row(p.vendors, "Aurora", "USD")
    assert aurora.committed == Decimal("1737984")  # 64 × 12 × 730 × 3.10
    assert aurora.budget == Decimal("1900000")
    assert aurora.actual == Decimal("145252")
    assert aurora.case_count == 1
    cumulus = _row(p.vendors, "Cumulus", "USD")
    assert cumulus.committed == Decimal("434496")  # 16 × 12 × 730 × 3.10
    assert cumulus.budget == 0 and cumulus.committed_of_budget is None
    borealis = _row(p.vendors, "Borealis", "EUR")
    assert borealis.committed == Decimal("560640")  # 32 × 12 × 730 × 2.00, never in USD
    assert borealis.budget == Decimal("500000")
    assert {(r.key, r.currency) for r in p.vendors} == {
        ("Aurora", "USD"),
        ("Cumulus", "USD"),
        ("Borealis", "EUR"),
    }

    # By month: the bill in its month; commitments by the month of their approval.
    months = {(r.key, r.currency): r for r in p.months}
    assert months[("2026-10", "USD")].actual == Decimal("145252")
    approved_month = f"{timezone.localtime(world.decided.created_at + timedelta(days=10)):%Y-%m}"
    assert months[(approved_month, "USD")].committed == Decimal("434496")
    assert months[("Chosen, not approved yet", "EUR")].committed == Decimal("560640")

    # Concentration: 112 cards chosen; USD spend shared 80/20, EUR spend all Borealis.
    share = {r.key: r for r in p.vendor_share}
    assert share["Aurora"].cards == 64
    assert share["Aurora"].cards_share == Decimal(64) / Decimal(112)
    assert share["Aurora"].committed_share == Decimal("0.8")
    assert share["Cumulus"].committed_share == Decimal("0.2")
    assert share["Borealis"].committed_share == Decimal(1)
    countries = {(r.key, r.currency): r for r in p.country_share}
    assert countries[("Singapore", "USD")].cards == 80
    assert countries[("Singapore", "USD")].cards_share == Decimal(80) / Decimal(112)
    assert countries[("Japan", "EUR")].cards == 32

    # Expiring: the acceptance within 30 days, the waiver within 31–60.
    assert [(e.kind, e.bucket, e.days_left) for e in p.expiring] == [
        ("Accepted finding", 30, 10),
        ("Red-flag waiver", 60, 45),
    ]
    counts = {row.kind: [c.count for c in row.counts] for row in p.expiry_counts}
    assert counts == {"Red-flag waiver": [0, 1, 0], "Accepted finding": [1, 0, 0]}

    # Open findings: Chat's export window blocks, its SLA awaits acceptance; the image
    # format is accepted.
    assert [(r.name, [c.count for c in r.counts]) for r in p.findings] == [("Chat", [1, 1])]


def test_it_counts_only_the_cases_the_reader_may_see(world, people, monkeypatch):
    from apps.casework import portfolio_overview

    def only_chat(actor):
        return ProcurementCase.objects.filter(pk=world.chat.pk)

    monkeypatch.setattr(portfolio_overview, "case_list_for", only_chat)
    p = portfolio_for(people["aude"])
    assert p.case_count == 1
    assert {r.key for r in p.vendors} == {"Aurora"}
    assert [e.kind for e in p.expiring] == ["Accepted finding", "Red-flag waiver"]


def test_the_page_shows_the_numbers_formatted(world, browser_as):
    html = browser_as("fiona").get(PORTFOLIO).content.decode()
    assert "1,737,984.00 USD" in html
    assert "560,640.00 EUR" in html
    assert "80 %" in html  # Aurora's share of the USD committed
    assert "57.1 %" in html  # Aurora's share of the cards: 64 of 112
    assert "bills as imported on each case" in html
    assert "10 days" in html  # the median cycle time


def test_without_bills_it_says_only_the_committed_spend_is_shown(browser_as, priya):
    case = make_case(priya)
    offer = make_offer(priya, case)
    make_budget(priya, case, offer=offer)
    html = browser_as("priya").get(PORTFOLIO).content.decode()
    assert "only the committed spend is shown" in html


# --- the links ---------------------------------------------------------------------------


def _listed(client, url: str) -> list[str]:
    html = client.get(url).content.decode()
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    return sorted(re.findall(r'<td><a href="/cases/\d+/"[^>]*>([^<]+)</a>', body))


def test_each_number_leads_to_a_list_of_what_it_counts(world, browser_as, people):
    client = browser_as("aude")
    p = portfolio_for(people["aude"])
    stages = {row.status: row for row in p.stages}
    assert _listed(client, stages["evaluating"].total.url) == ["Chat", "Embeddings"]
    assert _listed(client, stages["evaluating"].ages[0].url) == ["Chat", "Embeddings"]
    assert _listed(client, stages["draft"].ages[2].url) == ["Old draft"]
    assert _listed(client, stages["draft"].ages[0].url) == []
    assert [_listed(client, row.total.url) for row in p.cycle.decided] == [["Decided"], []]
    # Vendors and countries: the cases whose chosen offer they are (approved or picked).
    assert _listed(client, _row(p.vendors, "Aurora", "USD").url) == ["Chat"]
    assert _listed(client, _row(p.vendors, "Cumulus", "USD").url) == ["Decided"]
    assert _listed(client, _row(p.country_share, "Singapore", "USD").url) == ["Chat", "Decided"]
    assert _listed(client, _row(p.country_share, "Japan", "EUR").url) == ["Embeddings"]
    # Findings: the case's findings page, showing the counted findings only.
    blocks, awaiting = p.findings[0].counts
    html = client.get(blocks.url).content.decode()
    assert "Data export window shorter than the exit window" in html
    assert "SLA below the availability the case needs" not in html
    html = client.get(awaiting.url).content.decode()
    assert "SLA below the availability the case needs" in html
    assert "Data export window shorter than the exit window" not in html
    assert "Images not rebuildable with another provider" not in html  # accepted
    # Expiring: each count leads to its bucket's rows on the page, each to its record.
    page = client.get(PORTFOLIO).content.decode()
    assert 'href="#expiring-30"' in page and 'id="expiring-30"' in page
    section = page[page.index('id="expiring-60"') : page.index('id="expiring-90"')]
    assert f'href="/cases/{world.chat.pk}/clause-checklists/"' in section
    comparison = client.get(f"/cases/{world.chat.pk}/clause-checklists/").content.decode()
    assert "Service level agreement (SLA)" in comparison


def test_a_new_list_filter_keeps_working_alone(world, browser_as):
    client = browser_as("priya")
    assert _listed(client, reverse("cases:list") + f"?vendor={world.borealis.pk}") == ["Embeddings"]
    assert _listed(client, reverse("cases:list") + "?country=singapore") == ["Chat", "Decided"]
    response = client.get(reverse("cases:list"), {"opened_after": "not a date"})
    assert response.status_code == 200 and "Enter a valid date." in response.content.decode()


# --- CSV and XLSX ------------------------------------------------------------------------


def test_each_table_as_csv(world, browser_as):
    client = browser_as("aude")
    response = client.get(PORTFOLIO, {"format": "csv", "table": "vendors"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="portfolio-vendors-' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][:4] == ["Vendor", "Currency", "Cases", "Committed"]
    by_vendor = {(r[0], r[1]): r for r in rows[1:]}
    assert by_vendor[("Aurora", "USD")][3:8] == [
        "1737984.00",
        "1900000.00",
        "91.47",
        "145252.00",
        "7.64",
    ]
    assert by_vendor[("Borealis", "EUR")][3] == "560640.00"
    shares = list(
        csv.reader(
            io.StringIO(
                client.get(PORTFOLIO, {"format": "csv", "table": "vendor-share"}).content.decode()
            )
        )
    )
    assert ["Aurora", "USD", "1", "64", "57.14", "1737984.00", "80.00"] in shares
    stages = client.get(PORTFOLIO, {"format": "csv", "table": "stages"}).content.decode()
    assert "Draft,1,0,0,1,0" in stages
    assert client.get(PORTFOLIO, {"format": "csv", "table": "nothing"}).status_code == 404


def test_every_table_as_one_workbook(world, browser_as):
    from openpyxl import load_workbook

    response = browser_as("fiona").get(PORTFOLIO, {"format": "xlsx"})
    assert response.status_code == 200
    book = load_workbook(io.BytesIO(response.content))
    assert book.sheetnames[:4] == [
        "Cases by stage and age",
        "Cycle time",
        "Spend by vendor",
        "Spend by month",
    ]
    vendors = book["Spend by vendor"]
    rows = {(r[0], r[1]): r for r in vendors.iter_rows(min_row=2, values_only=True)}
    assert rows[("Aurora", "USD")][3] == 1737984  # a number, not text
    findings = book["Open findings by severity"]
    assert list(findings.iter_rows(values_only=True)) == [
        ("Case", "Blocks", "Needs acceptance"),
        ("Chat", 1, 1),
    ]


def test_a_name_that_looks_like_a_formula_stays_text(browser_as, priya):
    case = make_case(priya, name="=HYPERLINK(1)")
    make_offer(priya, case, vendor=make_vendor(priya, name="=cmd|x"))
    make_budget(priya, case, offer=case.offers.get())
    text = browser_as("priya").get(PORTFOLIO, {"format": "csv", "table": "vendors"})
    assert "'=cmd|x" in text.content.decode()


# --- queries -----------------------------------------------------------------------------


def _grow(people, n: int) -> None:
    priya = people["priya"]
    vendor = make_vendor(priya)
    for _ in range(n):
        case = make_case(priya)
        offer = make_offer(priya, case, vendor=vendor)
        make_budget(priya, case, offer=offer)
        make_import(priya, case, ("2026-10", CLEAN))


def _queries(client) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(PORTFOLIO)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def test_the_queries_do_not_grow_with_the_cases(browser_as, people):
    client = browser_as("aude")
    _grow(people, 1)
    one = _queries(client)
    _grow(people, 29)
    assert _queries(client) == one


def test_no_number_or_row_links_a_reader_to_a_page_they_may_not_open(world, browser_as):
    for role in ALLOWED:
        client = browser_as(role)
        page = client.get(PORTFOLIO).content.decode()
        main = page[page.index("<main") : page.index("</main>")]
        for url in set(re.findall(r'href="(/[^"#]*)', main)):
            response = client.get(url.replace("&amp;", "&"))
            assert response.status_code == 200, (role, url)


def test_it_only_reads(browser_as):
    assert browser_as("aude").post(PORTFOLIO).status_code == 405


def test_it_is_read_again_after_a_write_and_kept_between_writes(world, browser_as, people):
    client = browser_as("fiona")
    seen = lambda: int(  # noqa: E731
        re.search(r"Across the (\d+) cases? you may see", client.get(PORTFOLIO).content.decode())[1]
    )
    before = seen()
    assert _queries(client) < 10  # the reader's session and permissions, the kept portfolio
    make_case(people["priya"], name="Kept afresh")  # a tracked write: read again
    assert seen() == before + 1


def test_the_page_shows_the_cases_with_most_findings_and_the_csv_every_one(
    world, browser_as, monkeypatch
):
    monkeypatch.setattr("apps.casework.portfolio_overview.FINDINGS_SHOWN", 0)
    client = browser_as("fiona")
    html = client.get(PORTFOLIO).content.decode()
    assert "1 more case has some: the CSV lists every case" in html
    findings = html.split('id="findings"', 1)[1].split("</section>", 1)[0]
    assert "Chat</a></th>" not in findings
    csv = b"".join(client.get(PORTFOLIO, {"format": "csv", "table": "findings"})).decode()
    assert "Chat" in csv


def test_a_write_counts_again_at_once_the_findings_of_the_case_it_touches_alone(
    world, browser_as, people, monkeypatch
):
    from apps.casework import portfolio_overview

    counted: list[list[int]] = []
    count_afresh = portfolio_overview.area_registers

    def spy(cases, *, today):
        counted.append(sorted(case.pk for case in cases))
        return count_afresh(cases, today=today)

    monkeypatch.setattr(portfolio_overview, "area_registers", spy)
    client = browser_as("fiona")

    def findings() -> list[list[str]]:
        text = client.get(PORTFOLIO, {"format": "csv", "table": "findings"}).content.decode()
        return list(csv.reader(io.StringIO(text)))[1:]

    assert findings() == [["Chat", "1", "1"]]
    assert counted == [sorted([world.chat.pk, world.embeddings.pk, world.decided.pk])]
    # Another reader, then the page: the counts are read back, not worked out again.
    assert "Chat</a></th>" in browser_as("aude").get(PORTFOLIO).content.decode()
    assert len(counted) == 1
    # A tracked write on Chat: the very next read counts Chat again, and only Chat.
    finding_accept(
        actor=people["priya"],
        case=world.chat,
        code="contracts.sla_below_need",
        offer_id=world.chat.offers.get().pk,
        key="sla_availability_pct",
        role=Role.PROCUREMENT,
        reason="Service credits suffice",
        expires_on=timezone.localdate() + timedelta(days=20),
    )
    assert findings() == [["Chat", "1", "0"]]
    assert counted[1:] == [[world.chat.pk]]
    # A write every case reads (a vendor) counts every open case again.
    make_vendor(people["priya"], name="Dorado")
    assert findings() == [["Chat", "1", "0"]]
    assert counted[2] == sorted([world.chat.pk, world.embeddings.pk, world.decided.pk])


def test_the_page_is_kept_rendered_and_rendered_again_after_a_write(world, browser_as, people):
    client = browser_as("fiona")
    first = client.get(PORTFOLIO).content.decode()
    assert "Across the 4 cases you may see" in first
    with CaptureQueriesContext(connection) as ctx:
        again = client.get(PORTFOLIO).content.decode()
    assert not any("cases_procurementcase" in q["sql"] for q in ctx.captured_queries)
    assert again.count("Across the 4 cases you may see") == 1
    # The page around the kept tables is each answer's own (its forms' tokens).
    token = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
    assert token.findall(first) and token.findall(first) != token.findall(again)
    make_case(people["priya"], name="Kept afresh")  # a tracked write: rendered again
    assert "Across the 5 cases you may see" in client.get(PORTFOLIO).content.decode()


def test_without_a_cache_or_stored_standings_every_case_is_counted_on_each_read(
    world, browser_as, monkeypatch, settings
):
    from django.core.cache import cache

    from apps.casework import portfolio_overview

    calls = []
    count_afresh = portfolio_overview.area_registers

    def spy(cases, *, today):
        calls.append(len(cases))
        return count_afresh(cases, today=today)

    monkeypatch.setattr(portfolio_overview, "area_registers", spy)
    client = browser_as("fiona")

    def findings() -> str:
        return client.get(PORTFOLIO, {"format": "csv", "table": "findings"}).content.decode()

    def unreachable(*args, **kwargs):
        raise ConnectionError("the cache is down")

    monkeypatch.setattr("django.core.cache.cache.get", unreachable)
    monkeypatch.setattr("django.core.cache.cache.set", unreachable)
    assert "Chat,1,1" in findings()
    assert "Chat,1,1" in findings()
    assert calls == [3, 3]
    monkeypatch.undo()
    monkeypatch.setattr(portfolio_overview, "area_registers", spy)
    settings.CASE_STANDING_STORED = False
    assert "Chat,1,1" in findings()
    cache.clear()  # the page as a whole is kept still: read it afresh
    assert "Chat,1,1" in findings()
    assert calls == [3, 3, 3, 3]

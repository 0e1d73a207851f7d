"""The offer matrix: every offer of a case side by side, sortable, as CSV and XLSX.

priya's case needs 64 H200 cards for 100 hours (600 conversations of 32k tokens,
eight cards an instance). Aurora's 64 cards meet it and hold every approval gate;
Borealis is cheaper but has an open red flag on its billing basis (and a waived one
on its SLA); Cirrus offers 32 cards, short by 32.
"""

import copy
import csv
import io
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from openpyxl import load_workbook

from apps.access.services import access_matrix_review
from apps.casework.matrix import offer_matrix
from apps.contracts.services import red_flag_waive
from apps.core.services import tracked_update
from apps.evidence.selectors import case_verifications
from apps.sizing.services import compute_demand_save
from tests.access.factories import make_matrix_in_place
from tests.approvals.factories import make_verification, score_in_full
from tests.assessments.factories import make_assessment
from tests.contracts.factories import all_acceptable, item, make_checklist, set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer, make_vendor
from tests.packets.factories import DEMAND

ROLES = ("priya", "lena", "tariq", "aude", "ada")
HEADLINE = {
    "gpus": 8,
    "max_output_tok_s": 2841.26,
    "ttft_p50_ms_lowest_level": 212.4,
    "max_concurrency_within_slo": 64,
    "matmul": {"bf16": "756.2 TFLOP/s"},
}


def _offer(priya, case, name, **fields):
    vendor = make_vendor(priya, name=name)
    offer = make_offer(priya, case, vendor=vendor, spec=FULL_SPEC, **fields)
    score_in_full(priya, offer)
    return offer


@pytest.fixture(scope="module")
def _world(module_people):
    priya, lena, tariq = (module_people[name] for name in ("priya", "lena", "tariq"))
    case = make_case(priya, name="Chat assistant: Llama 3.1 70B")
    compute_demand_save(actor=priya, case=case, fields={**DEMAND, "hours_needed": Decimal(100)})
    aurora = _offer(priya, case, "Aurora Compute")
    borealis = _offer(priya, case, "Borealis Cloud", unit_price=Decimal("2.90"))
    cirrus = _offer(priya, case, "Cirrus GPU", accelerator_count=32)
    score_in_full(tariq, aurora, score=5)  # a second reviewer, who rates Aurora higher

    checklist = make_checklist(lena, offer=aurora)
    set_statuses(lena, checklist, all_acceptable(checklist))
    flagged = make_checklist(lena, offer=borealis)
    set_statuses(
        lena,
        flagged,
        {**all_acceptable(flagged), "sla": "needs_negotiation", "billing_basis": "missing"},
    )
    red_flag_waive(actor=lena, item=item(flagged, "sla"), reason="Service credits suffice")
    make_assessment(lena, case, signed=True)
    access_matrix_review(actor=tariq, matrix=make_matrix_in_place(tariq, case, reason="Started"))
    verification = make_verification(tariq, aurora)
    tracked_update(verification, actor=tariq, reason="Numbers", fields={"headline": HEADLINE})
    make_verification(tariq, borealis, verdict="failed")
    case.refresh_from_db()
    return case, aurora, borealis, cirrus


@pytest.fixture
def world(_world, people):
    """The case and its three offers, built once for the module; each test its copy."""
    return copy.deepcopy(_world)


def _body(response) -> bytes:
    """A spreadsheet's bytes: the exports are streamed."""
    assert response.streaming
    return b"".join(response.streaming_content)


def _url(case, **query) -> str:
    url = reverse("scorecards:matrix", args=[case.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def _rows(html: str) -> list[str]:
    """The page's rows, each as its text, in the order shown."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [part.split("</tr>", 1)[0] for part in body.split("<tr data-offer=")[1:]]


def _order(html: str) -> list[int]:
    return [int(row.split('"', 2)[1]) for row in _rows(html)]


def _cell(row_html: str, column: str) -> str:
    return row_html.split(f'data-column="{column}"', 1)[1].split("</td>", 1)[0]


def test_each_offer_shows_its_fit_price_score_flags_evidence_gates_and_acceptance(
    browser_as, world
):
    case, aurora, borealis, cirrus = world
    response = browser_as("aude").get(_url(case))
    assert response.status_code == 200
    rows = _rows(response.content.decode())
    a, b, c = rows  # in the order the offers were added
    assert "Aurora Compute" in a and "Borealis Cloud" in b and "Cirrus GPU" in c
    assert "64 × NVIDIA H200 SXM 141GB" in a and "32 × NVIDIA H200 SXM 141GB" in c

    # Fit: Aurora and Borealis meet the demand; Cirrus is short by 32 GPUs, and says so.
    assert "meets it" in _cell(a, "fit") and "needs 64 of the 64 GPUs offered" in _cell(a, "fit")
    assert "short by 32 GPUs" in _cell(c, "fit")
    assert 'data-column="fit" class="differs"' in c
    assert 'data-column="fit" class="best"' in a

    # Price: effective per GPU-hour with the prepayment financed; Borealis is the cheapest.
    assert "3.1372 USD" in _cell(a, "price") and "30 % prepaid" in _cell(a, "price")
    assert "cheapest" in _cell(b, "price") and 'class="num best" data-column="price"' in b
    assert 'class="num differs" data-column="price"' in a
    assert "over the cheapest" in _cell(a, "price")
    # Cost of the capacity needed: 64 GPUs × 100 h × 3.1372 = 20,078.08 USD.
    assert "20,078.08 USD" in _cell(a, "cost")
    assert "64 GPUs in whole nodes × 100 h" in _cell(a, "cost")
    assert "cheapest" not in _cell(c, "cost")

    # Scores: Aurora's two reviewers disagree (60 and 100 points); the others have one.
    assert "80.00" in _cell(a, "score") and "2 reviewers" in _cell(a, "score")
    assert "highest" in _cell(a, "score") and "20.00 points below the highest" in _cell(b, "score")
    assert "40.00 points" in _cell(a, "spread") and "—" in _cell(b, "spread")

    # Red flags and waivers, from the clause checklists.
    assert "no open red flag" in _cell(a, "flags")
    flags = _cell(b, "flags")
    assert "1 open red flag" in flags and "Billing basis" in flags
    assert "1 waiver in force" in flags and "Service credits suffice" in flags
    assert "no clause checklist yet" in _cell(c, "flags")

    # Evidence with its key numbers; gates; acceptance.
    evidence = _cell(a, "evidence")
    assert "Verified" in evidence and "Best output tokens/s: 2,841.3" in evidence
    assert "P50 time to first token (ms): 212" in evidence
    assert "Highest concurrency within SLOs: 64" in evidence and "756.2 TFLOP/s" in evidence
    assert "Failed" in _cell(b, "evidence") and "no evidence" in _cell(c, "evidence")
    assert "10 of 10 held" in _cell(a, "gates")
    assert "No open red flag" in _cell(b, "gates")
    assert "Offer meets the compute demand" in _cell(c, "gates")
    assert all("No acceptance plan" in _cell(row, "acceptance") for row in rows)


def test_the_case_page_links_to_the_matrix(browser_as, world):
    case = world[0]
    page = browser_as("lena").get(reverse("cases:detail", args=[case.pk])).content.decode()
    assert f'href="{_url(case)}"' in page


def test_sorting_by_a_column_keeps_it_in_the_links_and_marks_the_heading(browser_as, world):
    case, aurora, borealis, cirrus = world
    client = browser_as("priya")

    page = client.get(_url(case, sort="price")).content.decode()
    assert _order(page) == [borealis.pk, aurora.pk, cirrus.pk]
    assert 'aria-sort="ascending"><a href="?sort=-price" data-sort="price">' in page
    assert 'href="?sort=price&amp;format=csv"' in page
    assert page.count("aria-sort=") == 1

    page = client.get(_url(case, sort="-price")).content.decode()
    assert _order(page)[-1] == borealis.pk
    assert 'aria-sort="descending"' in page

    # The best score first on the first click; an offer short of the demand last by fit.
    page = client.get(_url(case)).content.decode()
    assert 'href="?sort=-score" data-sort="score"' in page
    page = client.get(_url(case, sort="-score")).content.decode()
    assert _order(page)[0] == aurora.pk
    page = client.get(_url(case, sort="fit")).content.decode()
    assert _order(page)[-1] == cirrus.pk
    # Offers without a value for the column come last whichever way it is sorted.
    page = client.get(_url(case, sort="-evidence")).content.decode()
    assert _order(page)[-1] == cirrus.pk

    # An unknown column is no sort at all.
    page = client.get(_url(case, sort="nonsense")).content.decode()
    assert "aria-sort=" not in page
    assert _order(page) == [aurora.pk, borealis.pk, cirrus.pk]


def test_the_csv_holds_the_same_rows_in_the_same_order(browser_as, world):
    case, aurora, borealis, cirrus = world
    response = browser_as("aude").get(_url(case, sort="price", format="csv"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == (
        f'attachment; filename="offer-matrix-{case.pk}-chat-assistant-llama-31-70b.csv"'
    )
    table = list(csv.DictReader(io.StringIO(_body(response).decode())))
    assert [row["Vendor"] for row in table] == ["Borealis Cloud", "Aurora Compute", "Cirrus GPU"]
    borealis_row, aurora_row, cirrus_row = table
    assert aurora_row["Meets the compute demand"] == "Yes"
    assert cirrus_row["Meets the compute demand"] == "No" and cirrus_row["GPUs short"] == "32"
    assert aurora_row["Price per GPU-hour (prepayment included)"] == "3.1372"
    # 30 % of 3.10 × 64 GPUs × 12 months × 730 h.
    assert aurora_row["Currency"] == "USD"
    assert aurora_row["Prepayment (whole contract)"] == "521395.20"
    assert aurora_row["Cost of the capacity needed"] == "20078.08"
    assert aurora_row["Weighted score"] == "80.00" and aurora_row["Reviewer spread"] == "40.00"
    assert borealis_row["Open red flags"].startswith("7. Billing basis")
    assert "Service credits suffice" in borealis_row["Waivers in force"]
    assert aurora_row["Evidence verdict"] == "Verified" and aurora_row["BF16 matmul"]
    assert aurora_row["Best output tokens/s"] == "2841.3"
    assert aurora_row["Gates held"] == "10" and aurora_row["Gates"] == "10"
    assert cirrus_row["Evidence verdict"] == "No evidence"
    assert aurora_row["Acceptance"] == "No acceptance plan"


def test_the_xlsx_holds_the_same_rows_and_fills_the_cells_that_differ(browser_as, world):
    case, aurora, borealis, cirrus = world
    response = browser_as("aude").get(_url(case, format="xlsx"))
    assert response.status_code == 200
    assert response["Content-Type"] == (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    )
    assert response["Content-Disposition"].endswith('-chat-assistant-llama-31-70b.xlsx"')
    book = load_workbook(io.BytesIO(_body(response)))
    sheet = book.active
    values = [[cell.value for cell in row] for row in sheet.iter_rows()]
    headings = values[0]
    column = {heading: index for index, heading in enumerate(headings)}
    assert [row[0] for row in values[1:]] == ["Aurora Compute", "Borealis Cloud", "Cirrus GPU"]
    aurora_row, borealis_row, cirrus_row = values[1:]
    # Numbers are numbers a spreadsheet can sum.
    assert aurora_row[column["Cost of the capacity needed"]] == pytest.approx(20078.08)
    assert aurora_row[column["Price per GPU-hour (prepayment included)"]] == pytest.approx(3.1372)
    assert cirrus_row[column["GPUs short"]] == 32
    assert borealis_row[column["Open red flags"]].startswith("7. Billing basis")
    # Cirrus is short of the demand: its cell is filled; Aurora's is not.
    fit = column["Meets the compute demand"] + 1
    assert sheet.cell(row=4, column=fit).fill.fgColor.rgb.endswith("FFF4E5")
    assert sheet.cell(row=2, column=fit).fill.fill_type is None


def test_text_a_spreadsheet_would_run_is_written_as_text(browser_as, priya, lena, world):
    case = world[0]
    evil = make_offer(
        priya,
        case,
        vendor=make_vendor(priya, name='=HYPERLINK("http://evil.example","x")'),
        spec=FULL_SPEC,
    )
    checklist = make_checklist(lena, offer=evil, statuses={"sla": "needs_negotiation"})
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="+cmd|' /C calc'!A0")
    client = browser_as("aude")

    text = _body(client.get(_url(case, format="csv"))).decode()
    table = list(csv.reader(io.StringIO(text)))
    row = next(r for r in table if "HYPERLINK" in r[0])
    assert row[0] == '\'=HYPERLINK("http://evil.example","x")'
    assert any(cell.startswith("'+cmd") or "+cmd|" in cell for cell in row)
    assert not any(cell.startswith(("=", "+", "@")) for r in table for cell in r)

    book = load_workbook(io.BytesIO(_body(client.get(_url(case, format="xlsx")))))
    cells = [cell for row in book.active.iter_rows() for cell in row]
    vendor = next(c for c in cells if isinstance(c.value, str) and "HYPERLINK" in c.value)
    assert vendor.value == '\'=HYPERLINK("http://evil.example","x")' and vendor.data_type == "s"
    assert not any(c.data_type == "f" for c in cells)


@pytest.mark.parametrize("role", ROLES)
def test_every_role_that_reads_scorecards_opens_the_matrix(browser_as, world, role):
    case = world[0]
    client = browser_as(role)
    assert client.get(_url(case)).status_code == 200
    assert client.get(_url(case, format="csv")).status_code == 200
    assert client.get(_url(case, format="xlsx")).status_code == 200


def test_without_the_role_the_matrix_is_refused(client, django_user_model, world):
    case = world[0]
    client.force_login(django_user_model.objects.create_user(username="nobody", password="pw"))
    assert client.get(_url(case)).status_code == 403
    assert client.get(_url(case, format="csv")).status_code == 403


def test_anonymous_visitors_are_sent_to_sign_in(client, world):
    case = world[0]
    for url in (_url(case), _url(case, format="csv"), _url(case, format="xlsx")):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_a_case_without_offers_says_so(browser_as, priya):
    case = make_case(priya)
    page = browser_as("priya").get(_url(case)).content.decode()
    assert "No offers on this case yet." in page and "format=csv" not in page


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def _grow(people, case, n: int) -> None:
    """``n`` more offers, each scored, with a clause checklist and a verification."""
    priya, lena, tariq = people["priya"], people["lena"], people["tariq"]
    for _ in range(n):
        offer = make_offer(priya, case, spec=FULL_SPEC)
        score_in_full(priya, offer)
        make_checklist(lena, offer=offer, statuses={"sla": "needs_negotiation"})
        make_verification(tariq, offer)


@pytest.mark.parametrize("fmt", ["", "csv", "xlsx"])
def test_queries_do_not_grow_with_the_offers(browser_as, people, fmt):
    priya = people["priya"]
    case = make_case(priya)
    compute_demand_save(actor=priya, case=case, fields={**DEMAND, "hours_needed": Decimal(10)})
    make_assessment(people["lena"], case, signed=True)
    client = browser_as("priya")
    url = _url(case, sort="price", **({"format": fmt} if fmt else {}))
    _grow(people, case, 2)
    two = _queries(client, url)
    _grow(people, case, 4)
    assert _queries(client, url) == two


def test_the_matrix_reads_what_the_comparison_and_the_gates_read(world):
    """Nothing recomputed by hand: the same fit, price and gates as their own pages."""
    from apps.approvals.selectors import case_gates
    from apps.scorecards.selectors import case_comparison

    case = world[0]
    rows = offer_matrix(case)
    comparison = {row.offer.pk: row for row in case_comparison(case).rows}
    gates = {entry.offer.pk: entry for entry in case_gates(case)}
    for row in rows:
        assert row.price == comparison[row.offer.pk].price
        assert row.fit == comparison[row.offer.pk].fit
        assert [g.held for g in row.gates.gates] == [g.held for g in gates[row.offer.pk].gates]


def test_the_acceptance_of_the_approved_offer_and_a_plan_not_in_force(browser_as, people):
    from apps.approvals.services import approval_decide, case_submit_for_approval
    from tests.acceptance.factories import make_evidence, make_plan
    from tests.approvals.factories import make_ready_case

    priya, tariq = people["priya"], people["tariq"]
    case, offer, (_first, other, _third) = make_ready_case(people)
    make_evidence(tariq, offer)
    case = case_submit_for_approval(actor=priya, case=case)
    other.refresh_from_db()  # its case is pending approval now
    make_plan(tariq, other)  # prepared while pending, for an offer the decision passed over
    approval_decide(actor=tariq, case=case, decision="approved", comment="Gates held", offer=offer)
    offer.refresh_from_db()
    make_plan(tariq, offer)

    page = browser_as("aude").get(_url(case, sort="acceptance")).content.decode()
    rows = dict(zip(_order(page), _rows(page), strict=True))
    assert "In progress" in _cell(rows[offer.pk], "acceptance")
    assert "Plan drawn up; not the plan in force" in _cell(rows[other.pk], "acceptance")
    assert _order(page)[:2] == [offer.pk, other.pk]
    assert "No acceptance plan" in _cell(rows[_order(page)[2]], "acceptance")


def test_the_matrix_shows_each_offers_newest_verification(browser_as, people, world):
    case, aurora, borealis, cirrus = world
    tariq = people["tariq"]
    # Borealis failed once; then two more runs, the newest verified with its numbers.
    make_verification(tariq, borealis, verdict="failed")
    newest = make_verification(tariq, borealis)
    tracked_update(
        newest, actor=tariq, reason="Numbers", fields={"headline": {"max_output_tok_s": 1234.5}}
    )
    with CaptureQueriesContext(connection) as ctx:
        found = case_verifications(case)
    assert len(ctx.captured_queries) == 1
    assert found[borealis.pk].pk == newest.pk and cirrus.pk not in found
    assert found[aurora.pk].headline == HEADLINE

    table = list(
        csv.DictReader(
            io.StringIO(_body(browser_as("aude").get(_url(case, format="csv"))).decode())
        )
    )
    row = next(r for r in table if r["Vendor"] == "Borealis Cloud")
    assert row["Evidence verdict"] == "Verified" and row["Best output tokens/s"] == "1234.5"
    page = browser_as("aude").get(_url(case)).content.decode()
    assert "1,234.5" in page

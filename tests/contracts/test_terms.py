"""Contract terms beside the checklist: saved with it, checked against the case, compared
across offers in the matrix and its exports, and written into the packet."""

import io
from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from apps.cases.services import case_update
from apps.contracts.models import ClauseChecklist, ContractTerms
from apps.contracts.packet import packet_section
from apps.contracts.selectors import case_contract_terms
from apps.contracts.services import checklist_save
from apps.contracts.terms import CaseNeeds, Check, TermValues
from apps.contracts.terms import findings as term_findings
from apps.core.services import ConcurrentEditError
from tests.contracts.factories import item, make_checklist
from tests.contracts.test_pages import form_data
from tests.factories import make_case, make_offer
from tests.test_generated_chinese import ZH, assert_chinese
from tests.test_i18n import _compiled_catalogue  # noqa: F401  (compiles the catalogue)

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
# Legal reviewers record terms; procurement, tech leads and auditors read; the admin does all.
WRITERS = {"lena", "ada"}
OTHERS = ["priya", "tariq", "aude"]


@pytest.fixture
def case(priya):
    case = make_case(priya, exit_window_days=45)
    return case_update(
        actor=priya, case=case, fields={"availability_need_pct": Decimal("99.9")}, reason="SLOs"
    )


@pytest.fixture
def checklist(lena, priya, case):
    offer = make_offer(priya, case, billing_basis="per_hour", prepayment_ratio=Decimal("0.6"))
    return make_checklist(lena, offer=offer)


SHORT_EXIT = {
    "data_export_days": 30,  # the case needs 45
    "prepayment_pct": Decimal("60"),
    "ordinary_prepayment_pct": Decimal("35"),  # premium about 71 %: above the range
    "sla_availability_pct": Decimal("99.95"),
    "image_format": "oci",
    "billing_basis": "per_hour",
}


def checks_of(checklist):
    (entry,) = [e for e in case_contract_terms(checklist.offer.case) if e.checklist == checklist]
    return {f.check.value for f in entry.findings}


# --- the service ------------------------------------------------------------------


def test_terms_are_saved_with_the_items_and_kept_in_history(lena, checklist):
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[{"id": item(checklist, "sla").pk, "status": "acceptable"}],
        reason="MSA read",
        expected_version=checklist.version,
        contract_terms=SHORT_EXIT,
    )
    terms = ContractTerms.objects.get(checklist=checklist)
    assert terms.data_export_days == 30 and terms.sla_availability_pct == Decimal("99.95")
    (created,) = terms.history.all()
    assert (created.history_change_reason, created.history_user) == ("MSA read", lena)
    assert ClauseChecklist.objects.get(pk=checklist.pk).version == checklist.version + 1
    assert checks_of(checklist) == {"export_window_short", "premium_above_range"}

    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[],
        reason="Vendor extended the window",
        contract_terms={"data_export_days": 60, "ordinary_prepayment_pct": Decimal("45")},
    )
    terms.refresh_from_db()
    assert terms.data_export_days == 60 and terms.history.count() == 2
    assert terms.history.first().history_change_reason == "Vendor extended the window"
    assert checks_of(checklist) == {"premium_in_range"}  # 60 / 45 − 1 ≈ 33 %


def test_a_bad_term_saves_nothing_not_even_the_items(lena, checklist):
    with pytest.raises(ValidationError) as raised:
        checklist_save(
            actor=lena,
            checklist=checklist,
            items=[{"id": item(checklist, "sla").pk, "status": "acceptable"}],
            reason="MSA read",
            contract_terms={"sla_availability_pct": Decimal("100.5"), "data_export_days": -3},
        )
    assert set(raised.value.message_dict) == {
        "terms.sla_availability_pct",
        "terms.data_export_days",
    }
    assert not ContractTerms.objects.exists()
    assert item(checklist, "sla").status == ""


def test_a_stale_version_is_refused(lena, checklist):
    with pytest.raises(ConcurrentEditError):
        checklist_save(
            actor=lena,
            checklist=checklist,
            items=[],
            reason="Late",
            expected_version=checklist.version - 1,
            contract_terms={"data_export_days": 30},
        )
    assert not ContractTerms.objects.exists()


@pytest.mark.parametrize("username", OTHERS)
def test_only_a_legal_reviewer_records_terms(people, checklist, username):
    with pytest.raises(PermissionDenied):
        checklist_save(
            actor=people[username],
            checklist=checklist,
            items=[],
            reason="Try",
            contract_terms={"data_export_days": 30},
        )
    assert not ContractTerms.objects.exists()


# --- the checklist page -----------------------------------------------------------


def page_url(checklist):
    return reverse("contracts:checklist", kwargs={"offer_pk": checklist.offer_id})


def with_terms(checklist, values, **kwargs):
    data = form_data(checklist, **kwargs)
    for name, value in values.items():
        data[f"terms-{name}"] = "" if value is None else str(value)
    return data


def test_the_page_shows_each_term_beside_its_clause_and_saves_it(browser_as, checklist):
    client = browser_as("lena")
    html = client.get(page_url(checklist)).content.decode()
    sla_row = html.index("id_terms-sla_availability_pct")
    assert html.index(item(checklist, "sla").title) < sla_row
    assert html.index("id_terms-data_export_days") > html.index(
        item(checklist, "termination_exit").title
    )
    response = client.post(page_url(checklist), with_terms(checklist, SHORT_EXIT))
    assert response.status_code == 302
    assert ContractTerms.objects.get(checklist=checklist).prepayment_pct == Decimal("60")
    html = client.get(page_url(checklist)).content.decode()
    assert 'data-check="export_window_short"' in html
    assert 'data-check="premium_above_range"' in html
    assert "Premium over ordinary customers: 71.4 %" in html


def test_the_page_shows_findings_in_chinese(browser_as, lena, checklist):
    checklist_save(
        actor=lena, checklist=checklist, items=[], reason="MSA", contract_terms=SHORT_EXIT
    )
    html = browser_as("lena").get(page_url(checklist), **ZH).content.decode()
    assert "数据导出窗口" in html
    assert "The contract leaves 30 days" not in html


EVERY_CHECK = [
    (TermValues(data_export_days=30), CaseNeeds(exit_window_days=45)),
    (TermValues(), CaseNeeds(exit_window_days=45, availability_need_pct=Decimal("99.9"))),
    (
        TermValues(sla_availability_pct=Decimal("99")),
        CaseNeeds(availability_need_pct=Decimal("99.9")),
    ),
    (TermValues(prepayment_pct=Decimal("80"), ordinary_prepayment_pct=Decimal("40")), CaseNeeds()),
    (TermValues(prepayment_pct=Decimal("56"), ordinary_prepayment_pct=Decimal("40")), CaseNeeds()),
    (TermValues(image_format="proprietary", exit_penalty_pct=Decimal("20")), CaseNeeds()),
    (TermValues(exit_penalty_pct=Decimal("25")), CaseNeeds()),
    (
        TermValues(billing_basis="per_month", prepayment_pct=Decimal("50")),
        CaseNeeds(offer_billing_basis="per_second", offer_prepayment_ratio=Decimal("0.3")),
    ),
]


def test_every_finding_reads_in_chinese():
    seen = set()
    with translation.override("zh-hans"):
        for values, needs in EVERY_CHECK:
            for finding in term_findings(values, needs):
                assert_chinese(finding.message)
                seen.add(finding.check)
    assert seen == set(Check)


@pytest.mark.parametrize(
    "values,field,message",
    [
        ({"sla_availability_pct": "101"}, "sla_availability_pct", "less than or equal to 100"),
        ({"maintenance_notice_hours": "-2"}, "maintenance_notice_hours", "greater than or equal"),
        ({"image_format": "tarball"}, "image_format", "Select a valid choice"),
        ({"billing_basis": "weekly"}, "billing_basis", "Select a valid choice"),
    ],
)
def test_a_bad_term_on_the_page_is_shown_in_place(browser_as, checklist, values, field, message):
    overrides = {"sla": {"status": "acceptable"}}
    response = browser_as("lena").post(
        page_url(checklist), with_terms(checklist, values, overrides=overrides)
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert field in response.context["terms_form"].errors
    assert not ContractTerms.objects.exists() and item(checklist, "sla").status == ""


@pytest.mark.parametrize("username", OTHERS)
def test_the_page_refuses_terms_from_other_roles(browser_as, checklist, username):
    response = browser_as(username).post(page_url(checklist), with_terms(checklist, SHORT_EXIT))
    assert response.status_code == 403
    assert not ContractTerms.objects.exists()


# --- the API ----------------------------------------------------------------------


def api_url(checklist):
    return f"/api/v1/clause-checklists/{checklist.pk}/"


def api_terms(values):
    return {k: str(v) if isinstance(v, Decimal) else v for k, v in values.items()}


def test_the_api_records_terms_and_reports_the_checks(api_as, checklist):
    body = {"terms": api_terms(SHORT_EXIT), "change_reason": "MSA", "version": checklist.version}
    response = api_as("lena").patch(api_url(checklist), body, format="json")
    assert response.status_code == 200, response.content
    terms = response.json()["terms"]
    assert terms["values"]["data_export_days"] == 30
    assert terms["values"]["sla_availability_pct"] == "99.950"
    assert Decimal(terms["prepayment_premium"]) == Decimal("0.714286")
    by_check = {f["check"]: f for f in terms["findings"]}
    assert set(by_check) == {"export_window_short", "premium_above_range"}
    assert by_check["export_window_short"]["severity"] == "bad"
    assert by_check["export_window_short"]["term"] == "data_export_days"


@pytest.mark.parametrize(
    "bad,field",
    [
        ({"sla_availability_pct": "100.5"}, "sla_availability_pct"),
        ({"exit_penalty_pct": "-1"}, "exit_penalty_pct"),
        ({"data_deletion_days": -1}, "data_deletion_days"),
        ({"data_export_days": "many"}, "data_export_days"),
        ({"image_format": "tarball"}, "terms.image_format"),
        ({"billing_basis": "weekly"}, "terms.billing_basis"),
    ],
)
def test_the_api_refuses_a_bad_term_and_saves_nothing(api_as, checklist, bad, field):
    body = {
        "items": [{"id": item(checklist, "sla").pk, "status": "acceptable"}],
        "terms": {"data_export_days": 60, **bad},
        "change_reason": "MSA",
        "version": checklist.version,
    }
    response = api_as("lena").patch(api_url(checklist), body, format="json")
    assert response.status_code == 400
    assert field.removeprefix("terms.") in response.content.decode()
    assert not ContractTerms.objects.exists() and item(checklist, "sla").status == ""


def test_the_api_answers_409_on_a_stale_version(api_as, checklist):
    body = {"terms": {"data_export_days": 60}, "change_reason": "MSA", "version": 0}
    response = api_as("lena").patch(api_url(checklist), body, format="json")
    assert response.status_code == 409
    assert not ContractTerms.objects.exists()


@pytest.mark.parametrize("username", ROLES)
def test_every_role_as_the_api_allows_it(api_as, lena, checklist, username):
    checklist_save(
        actor=lena, checklist=checklist, items=[], reason="MSA", contract_terms=SHORT_EXIT
    )
    client = api_as(username)
    read = client.get(api_url(checklist))
    assert read.status_code == 200
    assert read.json()["terms"]["values"]["data_export_days"] == 30
    version = read.json()["version"]
    body = {"terms": {"data_export_days": 90}, "change_reason": "Extend", "version": version}
    write = client.patch(api_url(checklist), body, format="json")
    assert write.status_code == (200 if username in WRITERS else 403)
    expected = 90 if username in WRITERS else 30
    assert ContractTerms.objects.get(checklist=checklist).data_export_days == expected


def test_the_case_states_its_availability_need_through_the_api(api_as, case):
    client = api_as("priya")
    url = f"/api/v1/cases/{case.pk}/"
    version = client.get(url).json()["version"]
    body = {"availability_need_pct": "101", "version": version, "change_reason": "SLO"}
    assert client.patch(url, body, format="json").status_code == 400
    body["availability_need_pct"] = "99.5"
    response = client.patch(url, body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["availability_need_pct"] == "99.500"


# --- across offers: the matrix, its exports, the comparison and the packet -----------


@pytest.fixture
def two_offers(lena, priya, case, checklist):
    checklist_save(
        actor=lena, checklist=checklist, items=[], reason="MSA", contract_terms=SHORT_EXIT
    )
    other = make_checklist(lena, offer=make_offer(priya, case))
    checklist_save(
        actor=lena,
        checklist=other,
        items=[],
        reason="MSA",
        contract_terms={"data_export_days": 90, "sla_availability_pct": Decimal("99.5")},
    )
    return case, checklist, other


def test_the_offer_matrix_lines_the_terms_up(browser_as, two_offers):
    case, first, other = two_offers
    response = browser_as("aude").get(reverse("scorecards:matrix", kwargs={"pk": case.pk}))
    html = response.content.decode()
    table = html[html.index('class="dense contract-terms"') :]
    assert 'data-term="data_export_days"' in table
    assert "30 days" in table and "90 days" in table
    assert 'data-check="export_window_short"' in table
    assert 'data-check="sla_below_need"' in table  # 99.5 % against the 99.9 % needed
    assert "71.4 %" in table  # the first offer's premium


def test_the_matrix_csv_and_xlsx_carry_the_terms(browser_as, two_offers):
    from openpyxl import load_workbook

    case, first, other = two_offers
    url = reverse("scorecards:matrix", kwargs={"pk": case.pk})
    client = browser_as("aude")
    csv_text = b"".join(client.get(url, {"format": "csv"}).streaming_content).decode()
    header, *lines = csv_text.splitlines()
    assert "Data export window (days)" in header
    assert "Prepayment premium over ordinary customers (%)" in header
    assert "Contract term findings" in header
    first_line = next(line for line in lines if "71.43" in line)
    assert "fewer than the 45 days" in first_line

    xlsx = client.get(url, {"format": "xlsx"})
    book = load_workbook(io.BytesIO(b"".join(xlsx.streaming_content)))
    sheet = book.active
    headings = [cell.value for cell in sheet[1]]
    column = headings.index("Data export window (days)")
    values = sorted(row[column].value for row in sheet.iter_rows(min_row=2))
    assert values == [30, 90]
    basis = headings.index("Billing basis")
    assert {row[basis].value for row in sheet.iter_rows(min_row=2)} == {"Per hour", None}


def test_the_comparison_page_and_the_packet_show_the_terms(browser_as, two_offers):
    case, first, other = two_offers
    html = browser_as("tariq").get(reverse("contracts:comparison", kwargs={"pk": case.pk}))
    assert 'data-check="export_window_short"' in html.content.decode()
    section = packet_section(case)
    rendered = render_to_string(section.template, section.context)
    assert 'data-term="image_format"' in rendered
    assert "Standard container image (OCI / Docker)" in rendered
    assert 'data-check="premium_above_range"' in rendered

"""The chain covers the live rows: each record's current row must equal its newest history row.

An UPDATE of a live row behind the application's back (raw SQL, a database
console) writes no history, so the live row and its newest history row drift
apart; the verifier names the table, the record and the fields.
"""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.audit.models import ChainVerification
from apps.audit.verification import Kind, verify_chain
from apps.cases.models import ProcurementCase
from apps.offers.models import Offer
from tests.audit.tampering import raw_delete, raw_update
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres


@pytest.fixture
def case(priya):
    case = make_case(priya, name="Live rows")
    make_offer(priya, case, spec=FULL_SPEC)
    return case


def _raw_edit_case(case) -> None:
    # As an operator with a database console would: no service, no history row.
    raw_update(ProcurementCase, case.pk, "status", ProcurementCase.Status.APPROVED)
    raw_update(ProcurementCase, case.pk, "name", "Quietly renamed")


def test_an_untouched_database_verifies_clean(seeded_demo, db, capsys):
    call_command("verify_audit_chain")
    out = capsys.readouterr().out
    report = verify_chain()
    assert report.intact, [p.describe() for p in report.problems]
    assert report.records >= ProcurementCase.objects.count() + Offer.objects.count() > 0
    assert f"chain intact: {report.rows} rows" in out
    assert f"{report.records} live rows match their history" in out


def test_a_raw_update_of_a_live_row_is_named_by_the_command(case, capsys):
    _raw_edit_case(case)
    with pytest.raises(SystemExit) as exit_:
        call_command("verify_audit_chain")
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert f"cases.procurementcase, record {case.pk}: the live row differs" in err
    assert "name, status" in err
    recorded = ChainVerification.objects.get()
    assert not recorded.intact
    assert recorded.first_problem["kind"] == Kind.LIVE
    assert recorded.first_problem["record_id"] == case.pk
    assert recorded.first_problem["fields"] == ["name", "status"]


def test_only_the_edited_record_and_fields_are_reported(case, priya):
    other = make_case(priya, name="Untouched")
    raw_update(ProcurementCase, case.pk, "requirements", "8 cards, not 64")
    (problem,) = verify_chain().problems
    assert (problem.kind, problem.table, problem.record_id, problem.fields) == (
        Kind.LIVE,
        "cases.procurementcase",
        case.pk,
        ["requirements"],
    )
    assert other.pk != problem.record_id


def test_a_null_on_one_side_only_is_a_difference(priya):
    offer = make_offer(priya, make_case(priya), contract_term_months=None)
    raw_update(Offer, offer.pk, "contract_term_months", None)  # NULL already: no change
    assert verify_chain().intact
    raw_update(Offer, offer.pk, "contract_term_months", 36)
    (problem,) = verify_chain().problems
    assert (problem.table, problem.fields) == ("offers.offer", ["contract_term_months"])
    raw_update(Offer, offer.pk, "contract_term_months", None)
    assert verify_chain().intact


def test_a_live_row_deleted_behind_the_apps_back_is_named(priya):
    case = make_case(priya, name="Deleted quietly")
    raw_delete(ProcurementCase, case.pk)
    problems = verify_chain().problems
    assert [(p.kind, p.table, p.record_id) for p in problems] == [
        (Kind.LIVE, "cases.procurementcase", case.pk)
    ]
    assert "the live row is gone" in problems[0].describe()


def test_a_live_row_inserted_behind_the_apps_back_is_named(case):
    columns = [f.column for f in ProcurementCase._meta.concrete_fields if not f.primary_key]
    listed = ", ".join(connection.ops.quote_name(c) for c in columns)
    table = connection.ops.quote_name(ProcurementCase._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({listed}) SELECT {listed} FROM {table} WHERE id = %s",
            [case.pk],
        )
    smuggled = ProcurementCase.objects.exclude(pk=case.pk).get(name=case.name)
    (problem,) = verify_chain().problems
    assert (problem.kind, problem.record_id) == (Kind.LIVE, smuggled.pk)
    assert "has no history" in problem.describe()


def test_the_live_row_check_is_set_based(priya):
    make_case(priya)
    with CaptureQueriesContext(connection) as few:
        verify_chain()
    for _ in range(12):
        make_offer(priya, make_case(priya), spec=FULL_SPEC)
    with CaptureQueriesContext(connection) as more:
        assert verify_chain().intact
    assert len(more) == len(few)


def test_the_api_reports_the_edited_live_row(case, api_as):
    _raw_edit_case(case)
    response = api_as("aude").post("/api/v1/audit/chain/verify/", format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["intact"] is False
    assert body["first_problem"]["table"] == "cases.procurementcase"
    assert body["first_problem"]["record_id"] == case.pk
    assert body["first_problem"]["fields"] == ["name", "status"]
    assert "name, status" in body["first_problem"]["text"]
    status = api_as("aude").get("/api/v1/audit/chain/", format="json").json()
    assert status["verified"] is False
    assert f"cases.procurementcase, record {case.pk}" in status["first_problem"]


def test_the_chain_page_reports_the_edited_live_row(case, browser_as):
    _raw_edit_case(case)
    client = browser_as("aude")
    client.post(reverse("audit:chain-verify"))
    page = client.get(reverse("audit:chain")).content.decode()
    assert f"cases.procurementcase, record {case.pk}: the live row differs" in page
    assert "name, status" in page

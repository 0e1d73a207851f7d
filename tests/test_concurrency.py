"""Contention is normal: people acting at once get one winner and a 409, never a 500.

Each test sends real requests from several threads at once, each thread on its
own database connection, released together by a barrier. On PostgreSQL the row
locks decide the race; on the embedded SQLite default the database file's lock
does (write transactions start immediately and wait for each other), so the
same tests run on both databases.
"""

import threading
from collections import Counter
from importlib import import_module

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.approvals.models import Approval
from apps.approvals.services import case_submit_for_approval
from apps.cases.models import ProcurementCase
from apps.contracts.models import RedFlagWaiver
from apps.offers.models import Offer
from tests.approvals.factories import make_ready_case
from tests.contracts.factories import make_checklist
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture(autouse=True)
def _default_checklist_template():
    """A transactional test starts from empty tables: publish the template the migrations did."""
    from django.apps import apps

    from apps.contracts.models import ChecklistTemplate

    if not ChecklistTemplate.objects.exists():
        import_module("apps.contracts.migrations.0002_default_template").publish_default(apps, None)


def race(people, calls) -> list:
    """Run each ``(username, call)`` in its own thread at once; their responses, in order."""
    barrier = threading.Barrier(len(calls))
    responses: list = [None] * len(calls)

    def run(index: int, username: str, call) -> None:
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=people[username])
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        try:
            barrier.wait(timeout=30)
            responses[index] = call(client)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(i, username, call))
        for i, (username, call) in enumerate(calls)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert all(r is not None for r in responses), "a request did not finish"
    return responses


def statuses(responses) -> Counter:
    return Counter(r.status_code for r in responses)


def test_two_clients_racing_on_one_version_cannot_both_win(people):
    case = make_case(people["priya"])

    def rename(name):
        return lambda client: client.patch(
            f"/api/v1/cases/{case.pk}/",
            {"name": name, "version": 1, "change_reason": "Rename"},
            format="json",
        )

    responses = race(people, [("priya", rename("Priya's name")), ("tariq", rename("Tariq's"))])
    assert statuses(responses) == {200: 1, 409: 1}
    case.refresh_from_db()
    winner = next(r for r in responses if r.status_code == 200).json()["name"]
    assert case.version == 2 and case.name == winner
    assert case.history.count() == 2  # created, then exactly one edit


def test_fifty_saves_of_one_version_give_one_edit_and_49_conflicts(people):
    case = make_case(people["priya"])
    calls = [
        (
            ("priya", "tariq")[i % 2],
            lambda client, i=i: client.patch(
                f"/api/v1/cases/{case.pk}/",
                {"requirements": f"Edit {i}", "version": 1, "change_reason": f"Edit {i}"},
                format="json",
            ),
        )
        for i in range(50)
    ]
    responses = race(people, calls)
    assert statuses(responses) == {200: 1, 409: 49}
    case.refresh_from_db()
    assert case.version == 2 and case.history.count() == 2


def test_saves_without_a_version_are_refused_not_last_write_wins(people):
    case = make_case(people["priya"])
    calls = [
        (
            "priya",
            lambda client, i=i: client.patch(
                f"/api/v1/cases/{case.pk}/",
                {"requirements": f"Edit {i}", "change_reason": "Edit"},
                format="json",
            ),
        )
        for i in range(10)
    ]
    assert statuses(race(people, calls)) == {428: 10}
    case.refresh_from_db()
    assert case.version == 1


def test_ten_approvals_at_once_give_exactly_one_decision(people):
    case, offer, _offers = make_ready_case(people)
    case_submit_for_approval(actor=people["priya"], case=case)

    def approve(client):
        return client.post(
            f"/api/v1/cases/{case.pk}/decision/",
            {"offer": offer.pk, "decision": "approved", "comment": "All gates held"},
            format="json",
        )

    responses = race(people, [(("tariq", "ada")[i % 2], approve) for i in range(10)])
    assert statuses(responses) == {201: 1, 409: 9}
    refused = next(r for r in responses if r.status_code == 409).json()
    assert "Approved" in refused["status"][0]  # told why: the case is decided already
    assert Approval.objects.filter(case=case).count() == 1
    case.refresh_from_db()
    assert case.status == ProcurementCase.Status.APPROVED
    moves = [h.status for h in case.history.order_by("history_id")]
    assert moves.count(ProcurementCase.Status.APPROVED) == 1


def test_a_rejection_racing_an_approval_leaves_one_decision(people):
    case, offer, _offers = make_ready_case(people)
    case_submit_for_approval(actor=people["priya"], case=case)

    def decide(decision):
        return lambda client: client.post(
            f"/api/v1/cases/{case.pk}/decision/",
            {"offer": offer.pk, "decision": decision, "comment": "Decided"},
            format="json",
        )

    responses = race(people, [("tariq", decide("approved")), ("ada", decide("rejected"))])
    assert statuses(responses) == {201: 1, 409: 1}
    [approval] = Approval.objects.filter(case=case)
    case.refresh_from_db()
    assert case.status == approval.decision


def test_five_submits_at_once_give_one_submission(people):
    case = make_case(people["priya"])
    make_offer(people["priya"], case, spec=FULL_SPEC)

    def submit(client):
        return client.post(f"/api/v1/cases/{case.pk}/submit-for-approval/", {}, format="json")

    responses = race(people, [(("priya", "ada")[i % 2], submit) for i in range(5)])
    assert statuses(responses) == {200: 1, 409: 4}
    case.refresh_from_db()
    assert case.status == ProcurementCase.Status.PENDING_APPROVAL
    moves = [h.status for h in case.history.order_by("history_id")]
    assert moves.count(ProcurementCase.Status.PENDING_APPROVAL) == 1


def test_two_offer_edits_of_one_version(people):
    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case, spec=FULL_SPEC)
    version = Offer.objects.get(pk=offer.pk).version

    def note(text):
        return lambda client: client.patch(
            f"/api/v1/offers/{offer.pk}/",
            {"notes": text, "version": version, "change_reason": "Note"},
            format="json",
        )

    responses = race(people, [("priya", note("One")), ("ada", note("Two"))])
    assert statuses(responses) == {200: 1, 409: 1}
    assert Offer.objects.get(pk=offer.pk).version == version + 1


def test_two_waivers_of_one_red_flag_give_one_waiver(people):
    checklist = make_checklist(people["lena"], statuses={"sla": "missing"})
    item = checklist.items.get(key="sla")

    def waive(client):
        return client.post(
            "/api/v1/red-flag-waivers/",
            {"item": item.pk, "reason": "Service credits are enough for this workload"},
            format="json",
        )

    responses = race(people, [("lena", waive), ("ada", waive)])
    assert max(r.status_code for r in responses) < 500
    assert sorted(r.status_code for r in responses)[0] == 201
    assert RedFlagWaiver.objects.filter(item=item).count() == 1


def test_two_imports_of_one_month_at_once_store_it_once(people, settings, tmp_path):
    from apps.costs.models import CostImport, CostPeriod
    from tests.costs.factories import CLEAN, bill_csv, make_budget

    settings.MEDIA_ROOT = tmp_path / "media"
    case = make_case(people["priya"])
    make_budget(people["priya"], case, offer=make_offer(people["priya"], case, spec=FULL_SPEC))
    raw = bill_csv(("2026-09", CLEAN))

    def send(client):
        return client.generic(
            "POST",
            f"/api/v1/cases/{case.pk}/costs/imports/?file_name=sep.csv",
            raw,
            content_type="text/csv",
        )

    responses = race(people, [("priya", send), ("ada", send)])
    assert statuses(responses) == {201: 1, 400: 1}
    refused = next(r for r in responses if r.status_code == 400)
    assert "2026-09" in str(refused.json())
    assert CostImport.objects.filter(case=case).count() == 1
    assert CostPeriod.objects.filter(case=case).count() == 1


# --- Two people creating the same record at once ------------------------------------------
#
# The serializers check uniqueness first; requests at the same moment all pass that check
# and the database refuses all but one. The loser gets a 409 (or the 400 of the check,
# when it ran after the winner's commit), never a 500, and nothing of it is kept.
DUPLICATE_REFUSED = {400, 409}


def _one_winner(responses, created: int = 201) -> None:
    codes = statuses(responses)
    assert codes[created] == 1, codes
    assert set(codes) - {created} <= DUPLICATE_REFUSED, codes


def test_vendors_of_one_name_created_at_once_give_one_vendor(people):
    from apps.vendors.models import Vendor

    def create(client):
        return client.post(
            "/api/v1/vendors/", {"name": "Nimbus GPU", "jurisdiction": "Japan"}, format="json"
        )

    _one_winner(race(people, [(("priya", "ada")[i % 2], create) for i in range(4)]))
    assert Vendor.objects.filter(name="Nimbus GPU").count() == 1


def test_offers_of_one_vendor_on_one_case_created_at_once_give_one_offer(people):
    from tests.factories import make_vendor

    case = make_case(people["priya"])
    vendor = make_vendor(people["priya"])

    def create(client):
        return client.post(
            "/api/v1/offers/",
            {
                "case": case.pk,
                "vendor": vendor.pk,
                "accelerator_model": "NVIDIA H200 SXM 141GB",
                "accelerator_count": 64,
                "unit_price": "3.10",
                "currency": "USD",
                "billing_basis": "per_hour",
                "prepayment_ratio": "0.3",
                "contract_term_months": 12,
            },
            format="json",
        )

    _one_winner(race(people, [(("priya", "ada")[i % 2], create) for i in range(4)]))
    assert Offer.objects.filter(case=case, vendor=vendor).count() == 1


def test_checklists_of_one_offer_created_at_once_give_one_checklist(people):
    from apps.contracts.models import ClauseChecklist

    case = make_case(people["priya"])
    offer = make_offer(people["priya"], case)

    def create(client):
        return client.post("/api/v1/clause-checklists/", {"offer": offer.pk}, format="json")

    _one_winner(race(people, [(("lena", "ada")[i % 2], create) for i in range(4)]))
    assert ClauseChecklist.objects.filter(offer=offer).count() == 1


def test_criteria_revisions_published_at_once_each_get_their_own_number(people):
    from apps.scorecards.models import CriteriaSet

    case = make_case(people["priya"])
    criteria = [
        {"key": "price", "label": "Price", "weight": 60},
        {"key": "support", "label": "Support", "weight": 40},
    ]

    def publish(client):
        return client.post(
            "/api/v1/criteria-sets/", {"case": case.pk, "criteria": criteria}, format="json"
        )

    codes = statuses(race(people, [(("priya", "ada")[i % 2], publish) for i in range(4)]))
    assert set(codes) <= {201} | DUPLICATE_REFUSED, codes
    revisions = list(CriteriaSet.objects.filter(case=case).values_list("revision", flat=True))
    assert sorted(revisions) == list(range(1, len(revisions) + 1))
    assert len(revisions) == codes[201]


def test_a_page_that_loses_a_race_to_create_answers_409(people, client, monkeypatch):
    """The same race through a page: the loser's page says the record exists now."""
    from django.db import IntegrityError

    from apps.vendors import services

    def lose(*args, **kwargs):
        raise IntegrityError("UNIQUE constraint failed: vendors_vendor.name")

    monkeypatch.setattr(services, "vendor_create", lose)
    client.force_login(people["priya"])
    response = client.post(
        "/vendors/new/", {"name": "Nimbus GPU", "jurisdiction": "Japan", "regions": ""}
    )
    assert response.status_code == 409
    assert b"exists already" in response.content


def test_two_uploads_of_one_kind_at_once_take_versions_one_and_two(people, settings, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from apps.contracts.models import ContractDocument
    from tests.contracts.factories import pdf_bytes

    settings.MEDIA_ROOT = tmp_path / "media"
    offer = make_offer(people["priya"], make_case(people["priya"]), spec=FULL_SPEC)
    url = reverse("contracts:document-upload", args=[offer.pk])

    def upload(username, pages):
        def call(client):
            client.force_login(people[username])
            return client.post(
                url, {"kind": "msa", "file": SimpleUploadedFile("msa.pdf", pdf_bytes(pages))}
            )

        return (username, call)

    responses = race(people, [upload("priya", 2), upload("lena", 4)])
    assert statuses(responses) == Counter({302: 2})
    numbers = sorted(ContractDocument.objects.filter(offer=offer).values_list("number", flat=True))
    assert numbers == [1, 2]

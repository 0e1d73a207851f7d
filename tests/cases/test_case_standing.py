"""Where a case stands is stored, kept current by the tracked writes themselves.

The case page reads each area's standing from a stored row; every tracked write
raises the mark of the case it touches (or of every case), and the standings of
the touched case are computed again once the write commits. These tests make
each kind of write and look at the page through HTTP right after it.
"""

import copy

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.access.models import AccessGrant
from apps.audit.chain import tracked_history_models
from apps.cases.models import CaseStanding, StandingMark
from apps.cases.records import case_path, cases_of
from apps.cases.services import case_update
from apps.casework.standing import (
    _store,
    chain_versions,
    compute_standing,
    variant,
)
from apps.contracts.models import ChecklistItem
from apps.offers.models import Offer
from apps.vendors.models import Vendor
from apps.vendors.services import vendor_update
from tests.access.factories import make_matrix
from tests.approvals.factories import make_ready_case
from tests.contracts.factories import set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer

NOT_READY = "No offer passes every approval gate yet"
# Session, viewer, the viewer's permissions, the chain's versions, the case, the stored
# standing with its marks, the viewer's roles for the site header.
STORED_PAGE_QUERIES = 7


@pytest.fixture(scope="module")
def _ready(module_people):
    return make_ready_case(module_people)


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module with no refresh run after its writes
    (as in a test, where nothing commits); each test its copy."""
    return copy.deepcopy(_ready)


def page(client, case) -> str:
    response = client.get(reverse("cases:detail", kwargs={"pk": case.pk}))
    assert response.status_code == 200
    return response.content.decode()


def counted(client, case) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as ctx:
        html = page(client, case)
    return len(ctx.captured_queries), html


def reopen_a_clause(lena, offer) -> str:
    checklist = offer.clause_checklist
    item = checklist.items.order_by("number").first()
    set_statuses(lena, checklist, {item.key: "missing"}, reason="Clause removed in the new draft")
    return f"{item.number}. {item.title}"


def test_right_after_an_edit_every_viewer_reads_a_stored_standing(
    browser_as, people, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # each write commits
        case, offer, _made = make_ready_case(people)
    tech, legal = browser_as("tariq"), browser_as("lena")
    assert NOT_READY not in page(tech, case) and NOT_READY not in page(legal, case)

    with django_capture_on_commit_callbacks(execute=True):
        clause = reopen_a_clause(people["lena"], offer)

    for client in (tech, legal):
        queries, html = counted(client, case)
        assert NOT_READY in html and clause in html
        assert queries <= STORED_PAGE_QUERIES


@pytest.mark.parametrize("offers", [1, 5])
def test_the_page_right_after_an_edit_costs_a_fixed_number_of_queries(
    browser_as, people, priya, offers, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # each write commits
        case, _offer, _made = make_ready_case(people, offers=offers)
    client = browser_as("tariq")
    computed, _html = counted(client, case)
    case.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        case_update(
            actor=priya,
            case=case,
            fields={"name": "Second round"},
            reason="New round",
            expected_version=case.version,
        )
    queries, html = counted(client, case)
    assert "Second round" in html
    assert queries == STORED_PAGE_QUERIES < computed


def test_without_the_refresh_the_next_view_computes_the_standing_again(browser_as, people, ready):
    # A write whose refresh did not run (it failed, or the process stopped): the mark
    # alone keeps the old standing from being shown.
    case, offer, _made = ready
    client = browser_as("tariq")
    assert NOT_READY not in page(client, case)
    clause = reopen_a_clause(people["lena"], offer)
    queries, html = counted(client, case)
    assert NOT_READY in html and clause in html
    assert queries > STORED_PAGE_QUERIES
    assert counted(client, case)[0] == STORED_PAGE_QUERIES  # stored again


def test_a_write_to_one_case_leaves_the_others_standing(browser_as, people, ready, priya):
    case, offer, _made = ready
    other = make_case(priya)
    client = browser_as("tariq")
    page(client, case), page(client, other)
    reopen_a_clause(people["lena"], offer)
    assert counted(client, other)[0] == STORED_PAGE_QUERIES
    assert counted(client, case)[0] > STORED_PAGE_QUERIES


def test_a_record_that_hangs_from_no_case_changes_every_case(browser_as, priya):
    first, second = make_case(priya), make_case(priya)
    vendor = make_offer(priya, first, spec=FULL_SPEC).vendor
    make_offer(priya, second, vendor=vendor, spec=FULL_SPEC)
    client = browser_as("priya")
    assert f"Not scored yet: {vendor}" in page(client, first)
    assert f"Not scored yet: {vendor}" in page(client, second)

    vendor_update(actor=priya, vendor=vendor, fields={"name": "Renamed Compute"}, reason="Rebrand")
    assert StandingMark.objects.filter(key=StandingMark.ALL).exists()
    for case in (first, second):
        html = page(client, case)
        assert "Not scored yet: Renamed Compute" in html and f"{vendor}" not in html


def test_a_standing_read_before_a_write_is_never_shown_after_it(browser_as, people, ready, tariq):
    # A view that read the chain and the records before a write committed, and stores
    # what it computed after: the write's mark is above what it read.
    case, offer, _made = ready
    client = browser_as("tariq")
    versions = chain_versions()
    key = variant(tariq, versions)
    before = compute_standing(case, tariq)
    clause = reopen_a_clause(people["lena"], offer)
    _store(case, tariq, key, versions.seq, before)
    html = page(client, case)
    assert NOT_READY in html and clause in html


def test_a_deleted_record_touches_the_case_it_hung_from(people, tariq):
    case = make_case(people["priya"])
    matrix = make_matrix(tariq, case, reason="Started")
    grant = AccessGrant.objects.filter(role__matrix=matrix).first()
    assert cases_of(grant) == {case.pk}
    history = AccessGrant.history.filter(id=grant.pk).first()
    AccessGrant.objects.filter(pk=grant.pk).delete()
    # The grant is gone; its role still names the matrix, and so the case.
    assert cases_of(history.instance) == {case.pk}


def test_every_tracked_record_hangs_from_its_case_or_from_none(people, ready):
    case, offer, _made = ready
    assert cases_of(case) == {case.pk}
    assert cases_of(offer) == {case.pk}
    item = ChecklistItem.objects.filter(checklist__offer=offer).first()
    assert cases_of(item) == {case.pk}
    assert cases_of(offer.vendor) is None
    assert case_path(Vendor) is None
    assert case_path(Offer) == "case"
    for history_model in tracked_history_models():
        case_path(history_model.instance_type)  # every path resolves at start-up


def test_a_kind_of_viewer_gets_its_own_standing(browser_as, people, ready):
    case, _offer, _made = ready
    for username in ("tariq", "lena", "aude"):
        page(browser_as(username), case)
    assert CaseStanding.objects.filter(case=case).count() == 3

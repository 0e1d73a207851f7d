"""The approval page leads with the decision: the offer that may be approved, with its
gates, and the form that decides it, first; the other offers' gates folded below, each
saying why it cannot be approved. Its gates are kept between the writes that change
them (``apps.casework.stored_gates``), never older than the last one."""

import copy
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.approvals.services import case_submit_for_approval
from apps.casework.stored_gates import stored_case_gates, stored_gates
from tests.approvals.factories import make_ready_case, make_verification


@pytest.fixture(scope="module")
def _pending(module_people):
    case, offer, offers = make_ready_case(module_people)
    case = case_submit_for_approval(actor=module_people["priya"], case=case)
    return case, offer, offers


@pytest.fixture
def pending(_pending, people):
    """priya's case waiting for a decision: its first offer holds every gate, the other
    two lack their clause checklists. Built once for the module; each test its copy."""
    return copy.deepcopy(_pending)


def _page(client, case) -> str:
    response = client.get(reverse("approvals:case", args=[case.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_decision_comes_first_and_the_other_offers_are_folded(pending, browser_as):
    case, offer, offers = pending
    page = _page(browser_as("tariq"), case)
    ready = page.index(f'id="offer-{offer.pk}"')
    form = page.index(f'action="{reverse("approvals:decide", args=[case.pk])}"')
    in_force = page.index("Decision in force")
    assert ready < form < in_force
    # The ready offer is the one the form has chosen; the others are offered but disabled.
    assert re.search(rf'<option value="{offer.pk}" selected>', page)
    for other in offers[1:]:
        assert re.search(rf'<option value="{other.pk}" disabled>', page)
        folded = page.index(f'<details class="card" id="offer-{other.pk}">')
        assert form < folded  # folded, and closed: no "open" attribute
        summary = page[folded : page.index("</summary>", folded)]
        assert str(other.vendor) in summary and "cannot be approved" in summary
        assert "No open red flag" in summary  # why: the gate it does not hold
    assert f'id="offer-{offers[1].pk}" open' not in page


def test_without_the_right_to_decide_the_ready_offer_still_leads(pending, browser_as):
    case, offer, offers = pending
    page = _page(browser_as("aude"), case)
    assert reverse("approvals:decide", args=[case.pk]) not in page
    assert page.index(f'id="offer-{offer.pk}"') < page.index("Decision in force")
    assert page.index("Decision in force") < page.index(f'id="offer-{offers[1].pk}"')


def test_the_page_decides_through_the_decide_form(pending, browser_as, people):
    case, offer, _offers = pending
    client = browser_as("tariq")
    response = client.post(
        reverse("approvals:decide", args=[case.pk]),
        {"offer": offer.pk, "decision": "approved", "comment": "Every gate holds."},
    )
    assert response.status_code == 302
    page = _page(client, case)
    assert (
        "Approved" in page and 'action="' + reverse("approvals:decide", args=[case.pk]) not in page
    )


def test_stored_gates_are_read_again_only_after_a_write(pending, people):
    case, offer, _offers = pending
    with stored_gates():
        first = stored_case_gates(case)
        with CaptureQueriesContext(connection) as kept:
            again = stored_case_gates(case)
    assert len(kept.captured_queries) == 2  # the case's mark and the chain's versions
    assert [e.all_held for e in again] == [e.all_held for e in first] == [True, False, False]
    # New evidence that failed: the write raises the case's mark, the gates are gathered anew.
    make_verification(people["tariq"], offer, verdict="failed", age_days=0)
    assert not stored_case_gates(case)[0].all_held


def test_stored_gates_end_when_a_verification_ages_past_its_limit(pending, monkeypatch):
    case, _offer, _offers = pending
    assert stored_case_gates(case)[0].all_held
    later = timezone.now() + timedelta(days=400)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert not stored_case_gates(case)[0].all_held


def test_the_approval_page_follows_a_write_at_once(pending, browser_as, people):
    case, offer, _offers = pending
    client = browser_as("tariq")
    assert 'class="badge ok">every gate held' in _page(client, case)
    make_verification(people["tariq"], offer, verdict="failed", age_days=0)
    page = _page(client, case)
    assert 'class="badge ok">every gate held' not in page
    assert f'<details class="card" id="offer-{offer.pk}">' in page

"""Gates computed from the real records of each app, a missing app, and query counts."""

import copy
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.approvals.selectors import case_gates, gate_inputs, offer_gates
from apps.cases.services import case_offer_minimum_waive
from apps.contracts.services import red_flag_waive
from apps.core.services import tracked_update
from apps.offers.services import declared_spec_update
from tests.access.factories import make_matrix, make_plan
from tests.approvals.factories import make_ready_case, make_verification
from tests.contracts.factories import item, set_statuses
from tests.costs.factories import CLEAN, make_budget, make_import
from tests.factories import FULL_SPEC, make_offer
from tests.workloads.factories import upload_set


def _gate(case, offer, key):
    return next(g for g in offer_gates(case, offer).gates if g.key == key)


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people)
    return case, offer


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready)


def test_a_ready_offer_holds_every_gate_from_its_records(ready):
    case, offer = ready
    entry = offer_gates(case, offer)
    assert entry.all_held, [(g.key, g.reason) for g in entry.open]
    assert gate_inputs(case, offer).spec.confirmed


def test_unconfirmed_spec(ready, people):
    case, offer = ready
    declared_spec_update(
        actor=people["tariq"], spec=offer.declared_spec, fields={"driver_version": ""}, reason="x"
    )
    gate = _gate(case, offer, "declared_spec")
    assert not gate.held and "driver version" in gate.reason
    assert gate.fix_url == reverse("offers:spec", args=[offer.pk])


def test_offer_minimum_and_its_waiver(people):
    case, offer, _offers = make_ready_case(people, offers=2)
    gate = _gate(case, offer, "offer_minimum")
    assert not gate.held and "2 of 3" in gate.reason
    case_offer_minimum_waive(actor=people["priya"], case=case, reason="Only two licensed vendors")
    case.refresh_from_db()
    gate = _gate(case, offer, "offer_minimum")
    assert gate.held and gate.waivers == ("Only two licensed vendors",)


def test_red_flag_blocks_until_a_legal_reviewer_waives_it(ready, people):
    case, offer = ready
    checklist = offer.clause_checklist
    set_statuses(people["lena"], checklist, {"sla": "missing"}, reason="No SLA clause")
    gate = _gate(case, offer, "red_flags")
    assert not gate.held and "Open red flags" in gate.reason
    assert gate.fix_url == reverse("contracts:checklist", args=[offer.pk])
    red_flag_waive(actor=people["lena"], item=item(checklist, "sla"), reason="SLA in the MSA")
    gate = _gate(case, offer, "red_flags")
    assert gate.held and "SLA in the MSA" in gate.waivers[0]


def test_unsigned_and_expired_assessments(ready, people):
    case, offer = ready
    assessment = case.data_export_assessments.get()
    tracked_update(
        assessment,
        actor=people["lena"],
        reason="Review date passed",
        fields={"review_by": timezone.localdate() - timedelta(days=1)},
    )
    gate = _gate(case, offer, "assessment")
    assert not gate.held and "expired" in gate.reason
    tracked_update(
        assessment,
        actor=people["lena"],
        reason="Sign-off voided",
        fields={"signed_off_at": None, "signed_off_by": None, "review_by": None},
    )
    gate = _gate(case, offer, "assessment")
    assert not gate.held and "not signed off" in gate.reason


def test_exit_readiness_unanswered(ready, people):
    case, offer = ready
    answer = case.data_export_assessments.get().answers.get(question_key="exit_bounded_time")
    tracked_update(answer, actor=people["lena"], reason="Unknown yet", fields={"value": ""})
    gate = _gate(case, offer, "exit_readiness")
    assert not gate.held and "(not answered)" in gate.reason
    assert str(answer.question_key) and "exit within a bounded time" in gate.reason


def test_matrix_with_a_violation_or_unreviewed(ready, people):
    case, offer = ready
    matrix = case.access_matrix
    tracked_update(
        matrix,
        actor=people["tariq"],
        reason="Review overdue",
        fields={"review_by": timezone.localdate() - timedelta(days=1)},
    )
    gate = _gate(case, offer, "access_matrix")
    assert not gate.held and "expired" in gate.reason
    # Saving a changed matrix clears its review; an unjustified grant is a violation.
    from apps.access.defaults import default_matrix_payload

    payload = default_matrix_payload()
    payload["grants"] = [dict(g, justification="") for g in payload["grants"]]
    make_matrix(people["tariq"], case, reason="Dropped the reasons", grants=payload["grants"])
    gate = _gate(case, offer, "access_matrix")
    assert not gate.held and "Segregation-of-duties" in gate.reason


def test_failed_or_old_verification(ready, people):
    case, offer = ready
    make_verification(people["tariq"], offer, verdict="failed")
    gate = _gate(case, offer, "verification")
    assert not gate.held and "did not pass" in gate.reason
    make_verification(people["tariq"], offer, verdict="verified", age_days=0)
    assert _gate(case, offer, "verification").held


def test_verification_age_limit_is_configurable(ready, settings):
    case, offer = ready  # its verification is a day old
    settings.APPROVAL_VERIFICATION_MAX_AGE_DAYS = 0
    gate = _gate(case, offer, "verification")
    assert not gate.held and "limit 0" in gate.reason


def _queries(case) -> int:
    with CaptureQueriesContext(connection) as captured:
        case_gates(case)
    return len(captured.captured_queries)


def test_gate_queries_do_not_grow_with_offers(ready, people):
    case, offer = ready
    make_plan(people["tariq"], case)  # its links are read once for every offer
    # The bills are read once for every offer, and so are the case's prompt sets and the
    # offers' load tests.
    make_budget(people["priya"], case, offer=offer)
    make_import(people["priya"], case, ("2026-01", CLEAN))
    upload_set(people["tariq"], case)
    few = _queries(case)
    for _ in range(5):
        make_offer(people["priya"], case, spec=FULL_SPEC)
    assert _queries(case) == few
    # The register adds the contract terms, requirement and acceptances, and the network
    # plan with its workload links (2: the training-traffic findings), the assessments'
    # data inventory and model-weight files, prefetched with them (2: their audit facts),
    # the cost guardrails (3: the budget, the months in force, the approved offer) and a
    # representative load test (2: the case's prompt sets, the offers' load-test summaries),
    # and what the vendors keep (2: their certifications, their open reassessments).
    assert few <= 34


def test_case_page_and_approval_page_query_counts_are_fixed(ready, people, browser_as):
    case, _offer = ready
    client = browser_as("aude")
    urls = [reverse("approvals:case", args=[case.pk]), reverse("approvals:dashboard")]
    before = []
    for url in urls:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        before.append(len(captured.captured_queries))
    for _ in range(5):
        make_offer(people["priya"], case, spec=FULL_SPEC)
    for url, count in zip(urls, before, strict=True):
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        assert len(captured.captured_queries) == count, url

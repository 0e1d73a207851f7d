"""My work reads the findings register: a finding that awaits a role the person holds is
one item, an area finding that blocks is an item of its owning role's section, and an
acceptance about to run out is an item for whoever gave it
(docs/rules/findings.md#in-my-work)."""

import copy
from datetime import timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.approvals.acceptances import finding_accept
from apps.approvals.findings import Severity
from apps.approvals.selectors import case_register
from apps.cases.services import case_update
from apps.casework.dashboard import dashboard_for
from apps.casework.inbox import work_items
from apps.casework.registers import area_registers, findings_url
from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_save
from tests.approvals.factories import make_ready_case
from tests.factories import make_case, make_offer

MY_WORK = reverse("approvals:dashboard")
SLA = "contracts.sla_below_need"
PREMIUM = "contracts.premium_in_range"
EXPORT = "contracts.export_window_short"


@pytest.fixture(scope="module")
def _world(module_people):
    """The ready case with an availability need above its 99.99 % SLA (procurement
    accepts), an exit window longer than its 90-day export window (blocks: legal) and a
    prepayment premium within the market range (procurement and finance accept)."""
    priya, lena = module_people["priya"], module_people["lena"]
    case, offer, _offers = make_ready_case(module_people)
    case = case_update(
        actor=priya,
        case=case,
        fields={"availability_need_pct": Decimal("99.999"), "exit_window_days": 120},
        reason="Night shift; a slow exit",
    )
    checklist_save(
        actor=lena,
        checklist=ClauseChecklist.objects.get(offer=offer),
        items=[],
        reason="Prepayment read from the contract",
        contract_terms={"prepayment_pct": "40", "ordinary_prepayment_pct": "30"},
    )
    return case, offer


@pytest.fixture
def world(_world, people):
    return copy.deepcopy(_world)


def _items(person, prefix: str):
    return [item for item in work_items(dashboard_for(person)) if item.detail.startswith(prefix)]


def _awaiting(case, role: str):
    return [
        e
        for e in case_register(case)
        if e.blocking and e.rule.severity is Severity.NEEDS_ACCEPTANCE and role in e.awaiting
    ]


def _accept(person, case, offer, code: str, key: str, role: str, days: int):
    return finding_accept(
        actor=person,
        case=case,
        code=code,
        offer_id=offer.pk,
        key=key,
        role=role,
        reason="Weighed against the alternatives",
        expires_on=timezone.localdate() + timedelta(days=days),
    )


def test_each_finding_awaiting_a_role_i_hold_is_one_item(world, people):
    case, offer = world
    awaiting = _awaiting(case, "procurement_reviewer")
    assert {e.rule.code for e in awaiting} >= {SLA, PREMIUM}
    items = _items(people["priya"], "Accept or fix: ")
    assert sorted(item.detail for item in items) == sorted(
        f"Accept or fix: {e.finding.message}" for e in awaiting
    )
    assert {item.url for item in items} == {findings_url(case.pk)}
    sla = next(i for i in items if "SLA" in i.detail and str(offer.vendor) in i.title)
    assert sla.title == f"{case} — {offer.vendor}"
    # Finance owns the premium with procurement; the legal reviewer and the auditor own none.
    assert [i.detail for i in _items(people["fiona"], "Accept or fix: ")] == [
        f"Accept or fix: {e.finding.message}" for e in _awaiting(case, "finance_approver")
    ]
    assert _items(people["lena"], "Accept or fix: ") == []
    assert _items(people["aude"], "Accept or fix: ") == []


def test_the_inbox_reads_the_same_findings_as_the_register(world):
    case, _offer = world
    registered = [e for e in case_register(case) if not e.rule.code.startswith("gate.")]
    (read,) = area_registers([case], today=timezone.localdate())
    assert read.case.pk == case.pk

    def shape(entries):
        return [(e.finding.identity, e.finding.message, e.status, e.awaiting) for e in entries]

    assert shape(read.entries) == shape(registered) and registered


def test_a_joint_finding_waits_for_each_owner_and_once_for_each_person(world, people):
    case, offer = world
    premium = next(e for e in _awaiting(case, "finance_approver") if e.rule.code == PREMIUM)
    wanted = f"Accept or fix: {premium.finding.message}"
    assert wanted in [i.detail for i in _items(people["priya"], "Accept or fix: ")]
    _accept(people["priya"], case, offer, PREMIUM, "prepayment_pct", "procurement_reviewer", 90)
    # Procurement has accepted: neither procurement reviewer is asked again; finance still is.
    assert wanted not in [i.detail for i in _items(people["priya"], "Accept or fix: ")]
    assert wanted not in [i.detail for i in _items(people["pablo"], "Accept or fix: ")]
    assert wanted in [i.detail for i in _items(people["fiona"], "Accept or fix: ")]
    # The administrator holds every role but accepts no finding: never asked.
    assert _items(people["ada"], "Accept or fix: ") == []


def test_an_area_finding_that_blocks_is_an_item_of_its_owners_section(world, people):
    case, _offer = world
    blocking = [e for e in case_register(case) if e.rule.code.startswith("contracts.export_")]
    assert blocking and all(e.rule.severity is Severity.BLOCKS for e in blocking)
    legal = work_items(dashboard_for(people["lena"]))
    shown = [item for item in legal if item.detail.startswith("Blocks: ")]
    assert sorted(item.detail for item in shown) == sorted(
        f"Blocks: {e.finding.message}" for e in blocking
    )
    assert {item.tone for item in shown} == {"bad"}
    # Where the offer has a clause checklist, its form; where it has none, the offer's page,
    # where one is started (the checklist's form would only send the reader there).
    started = set(ClauseChecklist.objects.values_list("offer_id", flat=True))
    assert {item.url for item in shown} == {
        e.finding.fix_url
        if e.finding.offer_id in started
        else reverse("offers:detail", args=[e.finding.offer_id])
        for e in blocking
    }
    # The gates' own findings are not repeated: the section lists what they read.
    gates = [e.finding.message for e in case_register(case) if e.rule.code.startswith("gate.")]
    assert not any(item.detail.removeprefix("Blocks: ") in gates for item in legal)
    assert _items(people["tariq"], "Blocks: ") == []


def test_an_acceptance_running_out_is_an_item_for_whoever_gave_it(world, people):
    case, offer = world
    today = timezone.localdate()
    _accept(people["priya"], case, offer, SLA, "sla_availability_pct", "procurement_reviewer", 10)
    notice = [i for i in work_items(dashboard_for(people["priya"])) if i.due_on is not None]
    mine = [i for i in notice if i.detail.startswith("Your acceptance runs out: ")]
    assert len(mine) == 1 and str(offer.vendor) in mine[0].detail
    assert mine[0].due_on == today + timedelta(days=10) and mine[0].days_left == 10
    assert mine[0].url == findings_url(case.pk) and str(case) in mine[0].title
    # Accepted: nobody is asked to accept it any more; pablo gave no acceptance.
    sla = next(e for e in case_register(case) if e.rule.code == SLA)
    for name in ("priya", "pablo"):
        asked = [i.detail for i in _items(people[name], "Accept or fix: ")]
        assert f"Accept or fix: {sla.finding.message}" not in asked
    pablo = work_items(dashboard_for(people["pablo"]))
    assert not [i for i in pablo if i.detail.startswith("Your acceptance runs out: ")]


def test_an_acceptance_further_off_is_no_item(world, people):
    case, offer = world
    _accept(people["priya"], case, offer, SLA, "sla_availability_pct", "procurement_reviewer", 15)
    items = work_items(dashboard_for(people["priya"]))
    assert not [i for i in items if i.detail.startswith("Your acceptance runs out: ")]


def test_my_work_lists_the_findings_and_links_where_they_are_accepted(world, browser_as):
    case, offer = world
    client = browser_as("fiona")
    html = unescape(client.get(MY_WORK).content.decode())
    premium = next(e for e in _awaiting(case, "finance_approver") if e.rule.code == PREMIUM)
    # Under its case's heading, the offer and what to do, linked where it is accepted.
    assert f'<a href="/cases/{case.pk}/">{case}</a></h3>' in html
    assert (
        f'<a href="{findings_url(case.pk)}">{offer.vendor}: '
        f"Accept or fix: {premium.finding.message}</a>"
    ) in html
    page = client.get(findings_url(case.pk))
    assert page.status_code == 200
    assert premium.finding.message in unescape(page.content.decode())


def test_my_work_reads_a_fixed_number_of_queries_whatever_the_cases_with_findings(
    browser_as, priya
):
    def open_case():
        case = make_case(priya, availability_need_pct=Decimal("99.9"), exit_window_days=30)
        make_offer(priya, case)

    client = browser_as("priya")

    def counted() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as ctx:
            html = client.get(MY_WORK).content.decode()
        return len(ctx.captured_queries), html.count("Accept or fix: ")

    client.get(MY_WORK)
    _queries, before = counted()  # the module's own case
    open_case()
    one, shown = counted()
    for _ in range(3):
        open_case()
    per_case = shown - before
    assert per_case > 0 and counted() == (one, before + 4 * per_case)

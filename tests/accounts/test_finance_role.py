"""The finance approver (docs/roles.md#finance-and-the-commitments): reads every area of a
case but the workload sets, comments, reads and requests packets, changes no area's
record, and accepts the prepayment decisions it owns, each jointly with another role."""

import copy
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from apps.approvals.acceptances import finding_accept
from apps.approvals.findings import Status
from apps.approvals.selectors import case_register
from apps.cases.models import ProcurementCase
from apps.cases.services import case_update
from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_save
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case
from tests.test_permissions import API_CALLS, BROWSER_PAGES, EVERYONE

# What finance writes: its acceptances of the findings it owns, comments, packet requests.
FINANCE_WRITES = {
    "approvals.add_findingacceptance",
    "approvals.change_findingacceptance",
    "comments.add_comment",
    "packets.add_packetrequest",
}


def _granted(role: str) -> set[str]:
    group = Group.objects.prefetch_related("permissions__content_type").get(name=role)
    return {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}


def test_finance_reads_every_area_but_the_workload_sets_and_writes_only_its_decisions(db):
    finance, procurement = _granted(Role.FINANCE), _granted(Role.PROCUREMENT)
    writes = {name for name in finance if not name.split(".")[1].startswith("view_")}
    assert writes == FINANCE_WRITES
    # Every record procurement reads, finance reads, the workload sets' text aside.
    reads = {name for name in procurement if name.split(".")[1].startswith("view_")}
    assert {name.split(".")[0] for name in reads - finance} == {"workloads"}
    assert not any(name.startswith("workloads.") for name in finance)
    assert "approvals.decide_approval" not in finance and "audit.export_case" not in finance


@pytest.fixture(scope="module")
def _world(module_people):
    case, offer, _offers = make_ready_case(module_people, offers=1)
    return {"case": case, "offer": offer, "vendor": offer.vendor}


@pytest.fixture
def world(_world, db):
    """The ready case, built once for the module; each test's changes to it are undone."""
    return copy.deepcopy(_world)


# Besides the pages everyone opens: the portfolio across cases (spend against budget).
FINANCE_PAGES = {"cases:portfolio"}


def test_finance_opens_the_pages_everyone_opens_the_portfolio_and_no_other(browser_as, world):
    client = browser_as("fiona")
    wrong = []
    for name, kwargs, allowed in BROWSER_PAGES:
        expected = 200 if allowed == EVERYONE or name in FINANCE_PAGES else 403
        status = client.get(reverse(name, kwargs=kwargs(world)), follow=True).status_code
        if status != expected:
            wrong.append(f"{name}: {status}, expected {expected}")
    assert wrong == []


def test_finance_calls_the_endpoints_everyone_calls_and_no_other(api_as, world):
    api = api_as("fiona")
    wrong = []
    for number, (method, path, body, allowed, success) in enumerate(API_CALLS):
        expected = success if allowed == EVERYONE else 403
        response = getattr(api, method)(path(world), body(world) if body else None, format="json")
        if response.status_code != expected:
            wrong.append(f"{method} {number}: {response.status_code}, expected {expected}")
    assert wrong == []


def _premium(world, people, *, ordinary: str) -> None:
    """A contract asking 30 % in advance, against ``ordinary`` % from ordinary customers."""
    checklist_save(
        actor=people["lena"],
        checklist=ClauseChecklist.objects.get(offer=world["offer"]),
        items=[],
        reason="Prepayment read from the contract",
        contract_terms={"prepayment_pct": "30", "ordinary_prepayment_pct": ordinary},
    )


def _accept(people, world, username: str, role: str, code: str):
    return finding_accept(
        actor=people[username],
        case=ProcurementCase.objects.get(pk=world["case"].pk),
        code=code,
        offer_id=world["offer"].pk,
        key="prepayment_pct",
        role=role,
        reason="Within the year's commitment budget",
        expires_on=timezone.localdate() + timedelta(days=90),
    )


def _entry(world, code: str):
    case = ProcurementCase.objects.get(pk=world["case"].pk)
    return next(e for e in case_register(case) if e.rule.code == code)


@pytest.mark.parametrize(
    "ordinary,code,partner,partner_role",
    [
        ("22", "contracts.premium_in_range", "priya", Role.PROCUREMENT),
        ("15", "contracts.premium_above_range", "tariq", Role.TECH_LEAD),
    ],
)
def test_finance_accepts_a_prepayment_premium_jointly(
    people, world, ordinary, code, partner, partner_role
):
    _premium(world, people, ordinary=ordinary)
    _accept(people, world, "fiona", Role.FINANCE, code)
    entry = _entry(world, code)
    assert entry.status is Status.OPEN and entry.awaiting == (partner_role,)
    # Finance cannot speak for the other owner.
    with pytest.raises(ValidationError) as refused:
        _accept(people, world, "fiona", partner_role, code)
    assert "You do not hold the role" in str(refused.value)
    _accept(people, world, partner, partner_role, code)
    entry = _entry(world, code)
    assert entry.status is Status.ACCEPTED and not entry.blocking
    assert {a.role for a in entry.acceptances} == {Role.FINANCE, partner_role}


def test_finance_accepts_no_finding_it_does_not_own(people, world):
    case = case_update(  # the contract promises 99.99 %
        actor=people["priya"],
        case=ProcurementCase.objects.get(pk=world["case"].pk),
        fields={"availability_need_pct": Decimal("99.999")},
        reason="The service is now customer-facing",
    )
    with pytest.raises(ValidationError) as refused:
        finding_accept(
            actor=people["fiona"],
            case=case,
            code="contracts.sla_below_need",
            offer_id=world["offer"].pk,
            key="sla_availability_pct",
            role=Role.FINANCE,
            reason="Cheaper",
            expires_on=timezone.localdate(),
        )
    assert "Only Procurement reviewer may accept this finding." in str(refused.value)

"""The cockpit's "what is still missing" lists the findings register's open findings: each
with its message, its owners and the page where it is fixed, and an accepted one leaves
the list (docs/rules/findings.md#on-the-case-page)."""

import copy
import re
from datetime import timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.approvals.acceptances import finding_accept
from apps.approvals.findings import Severity, Status
from apps.approvals.selectors import case_register
from apps.cases.services import case_update
from apps.casework.registers import findings_url
from tests.approvals.factories import make_ready_case
from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ("priya", "lena", "tariq", "fiona", "aude", "ada")
SLA = "contracts.sla_below_need"


@pytest.fixture(scope="module")
def _world(module_people):
    """The ready case, its need above the contract's 99.99 % SLA: the first offer's SLA
    finding needs procurement's acceptance; the other offers block on their own gates."""
    case, offer, _offers = make_ready_case(module_people)
    case = case_update(
        actor=module_people["priya"],
        case=case,
        fields={"availability_need_pct": Decimal("99.999")},
        reason="The service runs the night shift",
    )
    return case, offer


@pytest.fixture
def world(_world, people):
    return copy.deepcopy(_world)


def _page(client, case) -> str:
    response = client.get(reverse("cases:detail", args=[case.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _findings(html: str) -> str:
    """The open findings of "What is still missing", as HTML."""
    start = html.index('id="open-findings"')
    return html[start : html.index("</ul>", start)]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_what_is_missing_lists_every_open_finding_with_its_owners_and_fix(world, browser_as):
    case, offer = world
    entries = [entry for entry in case_register(case) if entry.blocking]
    weights = {entry.rule.severity for entry in entries}
    assert weights == {Severity.BLOCKS, Severity.NEEDS_ACCEPTANCE}
    html = _findings(_page(browser_as("lena"), case))
    items = re.findall(r'<li class="bad">(.*?)</li>', html, re.S)
    assert len(items) == len(entries)
    for entry, item in zip(entries, items, strict=True):
        text = _text(item)
        assert entry.finding.message in text
        assert str(entry.rule.title) in text
        assert entry.rule.severity_label in text
        if entry.finding.fix_url:
            assert f'href="{entry.finding.fix_url}"' in item
    sla = next(e for e in entries if e.rule.code == SLA and e.finding.offer_id == offer.pk)
    item = _text(items[entries.index(sla)])
    assert f"{offer.vendor} — " in item
    assert "Awaits acceptance by: Procurement reviewer." in item
    # A finding that blocks names its owner; the legal reviewer may open the checklist.
    blocking = next(e for e in entries if e.rule.code == "gate.red_flags")
    item = items[entries.index(blocking)]
    assert "Owner: Legal reviewer" in _text(item)
    assert "Fix it</a>" in item


def test_a_finding_that_needs_acceptance_links_where_it_is_accepted(world, browser_as):
    case, _offer = world
    html = _findings(_page(browser_as("priya"), case))
    accept = f'<a href="{findings_url(case.pk)}">Accept it</a>'
    owned = [e for e in case_register(case) if e.blocking and e.awaiting]
    assert html.count(accept) == len(owned) > 0
    # The place it links to lists the finding.
    response = browser_as("priya").get(findings_url(case.pk))
    assert response.status_code == 200
    assert owned[0].finding.message in unescape(response.content.decode())


@pytest.mark.parametrize("username", ROLES)
def test_every_role_reads_the_same_open_findings(world, browser_as, username):
    case, _offer = world
    open_count = sum(1 for entry in case_register(case) if entry.blocking)
    html = _findings(_page(browser_as(username), case))
    assert len(re.findall(r'<li class="bad">', html)) == open_count


def test_who_has_what_to_do_counts_each_roles_open_findings(world, browser_as):
    case, _offer = world
    entries = [entry for entry in case_register(case) if entry.blocking]
    html = _page(browser_as("aude"), case)
    section = html[html.index("Who has what to do") :]
    for role in ("Procurement reviewer", "Legal reviewer", "Tech lead"):
        owned = sum(1 for e in entries if role in (e.awaiting_labels or e.rule.owner_labels))
        line = section[section.index(f"<dt>{role}</dt>") :].split("</dd>")[0]
        assert f'<a href="#open-findings">Open findings</a> ({owned})' in line


def test_an_accepted_finding_leaves_the_list(world, browser_as, people):
    case, offer = world
    client = browser_as("priya")
    message = next(
        e.finding.message
        for e in case_register(case)
        if e.rule.code == SLA and e.finding.offer_id == offer.pk
    )
    assert message in _text(_findings(_page(client, case)))
    finding_accept(
        actor=people["priya"],
        case=case,
        code=SLA,
        offer_id=offer.pk,
        key="sla_availability_pct",
        role="procurement_reviewer",
        reason="The night shift tolerates an hour's outage",
        expires_on=timezone.localdate() + timedelta(days=30),
    )
    # The stored standing follows the acceptance (a tracked write on the case).
    assert message not in _text(_findings(_page(client, case)))
    entry = next(e for e in case_register(case) if e.rule.code == SLA and e.acceptances)
    assert entry.status is Status.ACCEPTED


def test_the_cockpit_reads_a_fixed_number_of_queries_whatever_the_findings(
    browser_as, priya, settings
):
    settings.CASE_STANDING_STORED = False  # the page computed on every view
    case = make_case(priya, availability_need_pct=Decimal("99.9"), exit_window_days=30)
    make_offer(priya, case, spec=FULL_SPEC)
    client = browser_as("tariq")
    _page(client, case)

    def counted() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as ctx:
            html = _page(client, case)
        return len(ctx.captured_queries), _findings(html).count('<li class="bad">')

    few, shown = counted()
    for _ in range(3):
        make_offer(priya, case, spec=FULL_SPEC)
    many, more = counted()
    assert many == few and more > shown

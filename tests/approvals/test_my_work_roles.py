"""My work on the demo, role by role (docs/rules/my-work.md): what must be there, what must
not, before and after the approvable case is decided; each item's link lands on a page
with the form that mends it, for the person it is listed for."""

from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from apps.approvals.services import approval_decide, chain_step_decide
from apps.cases.models import ProcurementCase
from apps.casework.dashboard import dashboard_for
from apps.casework.demo import (
    BLOCKED_CASE_NAME,
    DEMO_CASE_NAME,
    FINDINGS_CASE_NAME,
    MIDWAY_CASE_NAME,
)
from apps.casework.inbox import work_items
from apps.offers.models import Offer

MY_WORK = reverse("approvals:dashboard")
DEMO_USERS = ("priya", "lena", "tariq", "fiona", "aude", "admin")


@pytest.fixture
def demo(demo_once, db):
    return demo_once


def person(name):
    return get_user_model().objects.get(username=name)


def case(name) -> ProcurementCase:
    return ProcurementCase.objects.get(name=name)


def offer(case_name, vendor_prefix) -> Offer:
    return Offer.objects.get(case__name=case_name, vendor__name__startswith=vendor_prefix)


def work(name):
    return work_items(dashboard_for(person(name)))


def keys(name) -> set[tuple[str, str]]:
    """(case, item key) of each item on the person's list."""
    return {(item.case_name, item.key) for item in work(name)}


def _approve_demo_case():
    """tariq approves Aurora; the demo's policy then asks legal (personal data is
    handled) and finance (more than 1,000,000 USD), in turn."""
    approvable = case(DEMO_CASE_NAME)
    approval_decide(
        actor=person("tariq"),
        case=approvable,
        decision="approved",
        comment="Aurora holds every gate.",
        offer=offer(DEMO_CASE_NAME, "Aurora"),
    )
    for step, name in ((1, "lena"), (2, "fiona")):
        chain_step_decide(
            actor=person(name), case=approvable, step=step, decision="approved", comment="Agreed"
        )
    assert case(DEMO_CASE_NAME).status == ProcurementCase.Status.APPROVED


def test_each_role_finds_its_own_work_on_the_demo_and_nothing_else(demo):
    aurora, borealis, cumulus = (
        offer(DEMO_CASE_NAME, v) for v in ("Aurora", "Borealis", "Cumulus")
    )
    midway_aurora = offer(MIDWAY_CASE_NAME, "Aurora")
    blocked = offer(BLOCKED_CASE_NAME, "Cumulus")
    findings = offer(FINDINGS_CASE_NAME, "Borealis")

    priya = keys("priya")
    # Her cases short of offers and scores, and the SLA only procurement accepts.
    assert {
        (FINDINGS_CASE_NAME, "offers:minimum"),
        (MIDWAY_CASE_NAME, f"offer:{midway_aurora.pk}:score"),
        (
            FINDINGS_CASE_NAME,
            f"finding:contracts.sla_below_need:{findings.pk}:sla_availability_pct",
        ),
        # The pending case's premium, accepted jointly with finance.
        (DEMO_CASE_NAME, f"finding:contracts.premium_in_range:{borealis.pk}:prepayment_pct"),
    } <= priya
    assert all(
        set(item.roles) & {"procurement_reviewer"} or item.personal for item in work("priya")
    )

    lena = keys("lena")
    assert {
        # Offers without a clause checklist, and the red flags of offers still weighed.
        (BLOCKED_CASE_NAME, f"offer:{blocked.pk}:checklist"),
        (MIDWAY_CASE_NAME, f"offer:{midway_aurora.pk}:checklist"),
        (
            FINDINGS_CASE_NAME,
            f"finding:contracts.export_window_short:{findings.pk}:data_export_days",
        ),
    } <= lena
    assert any(key.startswith("redflag:") for name, key in lena if name == DEMO_CASE_NAME)
    assert any(key.startswith("assessment:") for name, key in lena if name == MIDWAY_CASE_NAME)
    assert not any(key.startswith(("tokens:", "decision", "audit:")) for _n, key in lena)

    tariq = keys("tariq")
    assert {
        (DEMO_CASE_NAME, "decision"),
        # "Missing driver version": the declared spec's form, not "Add offer".
        (DEMO_CASE_NAME, f"offer:{cumulus.pk}:spec"),
        (MIDWAY_CASE_NAME, "matrix"),
        (MIDWAY_CASE_NAME, f"offer:{midway_aurora.pk}:spec"),
    } <= tariq
    spec = next(i for i in work("tariq") if i.key == f"offer:{cumulus.pk}:spec")
    assert spec.url == reverse("offers:spec", args=[cumulus.pk]) and "driver" in spec.detail
    # His harness tokens on the demo case: one reminder, not one per token.
    tokens = [i for i in work("tariq") if i.key.startswith("tokens:")]
    assert len(tokens) == 1 and tokens[0].case_name == DEMO_CASE_NAME and tokens[0].due_on
    # Nothing of acceptance before the decision.
    assert not any(key.startswith("acceptance:") for _n, key in tariq)
    assert (DEMO_CASE_NAME, f"offer:{aurora.pk}:spec") not in tariq

    assert keys("fiona") == {
        (DEMO_CASE_NAME, f"finding:contracts.premium_in_range:{borealis.pk}:prepayment_pct")
    }
    # The auditor's list holds audit work only: no tokens, budgets or findings.
    assert [(i.key, i.url) for i in work("aude")] == [("audit:chain", reverse("audit:chain"))]


def test_the_administrator_sees_every_roles_work_once_and_accepts_nothing(demo):
    admin = work("admin")
    counted = Counter((item.case_id, item.key) for item in admin)
    assert counted and max(counted.values()) == 1
    assert not [item for item in admin if item.accept_only or item.personal]
    # Every role's own work is there: procurement's, legal's, the tech lead's, the audit.
    for name in ("priya", "lena", "tariq", "aude"):
        theirs = {(i.case_id, i.key) for i in work(name) if not i.accept_only and not i.personal}
        assert theirs <= set(counted), name


def test_after_the_approval_the_losing_offers_close_and_the_acceptance_opens(demo):
    aurora, borealis, cumulus = (
        offer(DEMO_CASE_NAME, v) for v in ("Aurora", "Borealis", "Cumulus")
    )
    _approve_demo_case()
    losing = {borealis.pk, cumulus.pk}

    def about_losers(item) -> bool:
        if item.case_name != DEMO_CASE_NAME:
            return False
        parts = item.key.split(":")
        about = parts[1] if parts[0] == "offer" else parts[2] if parts[0] == "finding" else ""
        return about in {str(pk) for pk in losing} or item.subject in {
            str(borealis.vendor),
            str(cumulus.vendor),
        }

    for name in DEMO_USERS:
        assert not [i for i in work(name) if about_losers(i)], name
    lena = work("lena")
    assert not [i for i in lena if i.case_name == DEMO_CASE_NAME and i.key.startswith("redflag:")]
    tariq = keys("tariq")
    assert {(DEMO_CASE_NAME, "acceptance:run"), (DEMO_CASE_NAME, "acceptance:record")} <= tariq
    assert (DEMO_CASE_NAME, "decision") not in tariq
    run = next(i for i in work("tariq") if i.key == "acceptance:run")
    assert "Run the acceptance tests" in run.detail and run.subject == str(aurora.vendor)
    # The premium of a losing offer is nobody's to accept any more.
    assert not [i for i in work("fiona") if i.case_name == DEMO_CASE_NAME]
    assert len([i for i in work("tariq") if i.key.startswith("tokens:")]) == 1
    assert [i.key for i in work("aude")] == ["audit:chain"]


@pytest.mark.parametrize("name", DEMO_USERS)
def test_each_link_lands_on_the_form_that_mends_the_item(demo, name):
    client = Client()
    client.force_login(person(name))
    before = {item.url for item in work(name)}
    _approve_demo_case()
    after = {item.url for item in work(name)}
    assert before
    for url in before | after:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        assert '<form method="post"' in response.content.decode(), url


def test_the_page_groups_the_items_by_case(demo):
    client = Client()
    client.force_login(person("lena"))
    html = client.get(MY_WORK).content.decode()
    mine = html[html.index("Yours to do") : html.index("</section>")]
    headings = [case(n).pk for n in (MIDWAY_CASE_NAME, BLOCKED_CASE_NAME, DEMO_CASE_NAME)]
    for pk in headings:
        assert mine.count(f'<h3 class="work-case"><a href="/cases/{pk}/">') == 1

"""The case's findings page (docs/rules/findings.md): every finding grouped by offer with
where it stands; an owner accepts a finding there, for a role they hold and the finding
awaits, and who may withdraws an acceptance."""

import copy
import html
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from apps.accounts.twofactor import TwoFactorMiddleware
from apps.approvals.acceptances import finding_accept
from apps.approvals.models import FindingAcceptance
from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_save
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case

ROLES = ["priya", "lena", "tariq", "fiona", "aude", "ada"]
PREMIUM = "contracts.premium_in_range"


@pytest.fixture(scope="module")
def _world(module_people):
    people = module_people
    case, offer, offers = make_ready_case(people)
    checklist_save(
        actor=people["lena"],
        checklist=ClauseChecklist.objects.get(offer=offer),
        items=[],
        reason="Prepayment read from the contract",
        contract_terms={"prepayment_pct": "30", "ordinary_prepayment_pct": "20"},
    )
    return {"case": case, "offer": offer, "unready": offers[1]}


@pytest.fixture
def world(_world, people):
    """The ready case with a 50 % prepayment premium, built once for the module."""
    return copy.deepcopy(_world)


def _page(client, world) -> str:
    response = client.get(reverse("approvals:findings", args=[world["case"].pk]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _premium_row(page: str, world) -> str:
    anchor = f'id="finding-contracts-premium_in_range-{world["offer"].pk}-prepayment_pct"'
    start = page.index(anchor)
    return page[start : page.index("</article>", start)]


def _role_choices(row: str) -> list[str]:
    select = re.search(r'<select name="role"[^>]*>(.*?)</select>', row, re.S)
    return re.findall(r'<option value="([^"]+)"', select.group(1)) if select else []


def _accept(client, world, role, reason="Supply is scarce this year", days=90):
    return client.post(
        reverse("approvals:finding-accept", args=[world["case"].pk]),
        {
            "code": PREMIUM,
            "offer": world["offer"].pk,
            "key": "prepayment_pct",
            "role": role,
            "reason": reason,
            "expires_on": (timezone.localdate() + timedelta(days=days)).isoformat(),
        },
    )


def _withdraw_url(world, acceptance) -> str:
    return reverse("approvals:acceptance-withdraw", args=[world["case"].pk, acceptance.pk])


def _accepted_by(people, world, name, role) -> FindingAcceptance:
    return finding_accept(
        actor=people[name],
        case=world["case"],
        code=PREMIUM,
        offer_id=world["offer"].pk,
        key="prepayment_pct",
        role=role,
        reason="Supply is scarce this year",
        expires_on=timezone.localdate() + timedelta(days=30),
    )


# Which roles each persona is offered for the premium (procurement and finance own it).
OFFERED = {
    "priya": [Role.PROCUREMENT],
    "fiona": [Role.FINANCE],
    "lena": [],
    "tariq": [],
    "aude": [],
    "ada": [],
}


@pytest.mark.parametrize("name", ROLES)
def test_every_reader_sees_the_register_and_only_owners_get_the_form(browser_as, world, name):
    page = _page(browser_as(name), world)
    row = _premium_row(page, world)
    assert "Prepayment premium within the market range" in row
    assert "Needs acceptance" in row and "Open" in row
    assert "a premium of 50" in row
    assert "Procurement reviewer, Finance approver" in row  # owners, and awaiting
    assert "30–50 %" in row  # the source, in plain words
    assert "No open red flag" in row  # the gate it stands in
    checklist = reverse("contracts:checklist", args=[world["offer"].pk])
    assert f'href="{checklist}"' in row or "Fixed by: " in row
    assert _role_choices(row) == OFFERED[name]
    if OFFERED[name]:
        expiry = (timezone.localdate() + timedelta(days=90)).isoformat()
        assert f'name="expires_on" value="{expiry}"' in row
    # Grouped by offer: the ready offer's findings, and the others' blocking gates.
    assert "Passing spec verification" in page
    assert page.index(str(world["offer"])) < page.index(str(world["unready"]))


def test_anonymous_visitors_are_sent_to_sign_in(client, people, world):
    acceptance = _accepted_by(people, world, "priya", Role.PROCUREMENT)
    for url in (
        reverse("approvals:findings", args=[world["case"].pk]),
        reverse("approvals:finding-accept", args=[world["case"].pk]),
        _withdraw_url(world, acceptance),
    ):
        response = client.post(url, {"reason": "x"})
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    acceptance.refresh_from_db()
    assert acceptance.withdrawn_at is None


def test_a_person_holding_both_owning_roles_is_offered_both_then_neither(browser_as, people, world):
    people["pablo"].groups.add(Group.objects.get(name=Role.FINANCE))
    client = browser_as("pablo")
    assert _role_choices(_premium_row(_page(client, world), world)) == [
        Role.PROCUREMENT,
        Role.FINANCE,
    ]
    assert _accept(client, world, Role.PROCUREMENT).status_code == 302
    # A joint decision takes a different person for each owner.
    assert _role_choices(_premium_row(_page(client, world), world)) == []
    refused = _accept(client, world, Role.FINANCE)
    assert refused.status_code == 200
    assert "a different person for each owner" in html.unescape(refused.content.decode())
    assert FindingAcceptance.objects.filter(case=world["case"]).count() == 1


def test_owners_accept_in_the_browser_and_the_finding_is_accepted(browser_as, world):
    priya = browser_as("priya")
    accepted = _accept(priya, world, Role.PROCUREMENT)
    assert accepted.status_code == 302
    page = reverse("approvals:findings", args=[world["case"].pk])
    anchor = f"finding-contracts-premium_in_range-{world['offer'].pk}-prepayment_pct"
    assert accepted["Location"] == f"{page}#{anchor}"
    row = _premium_row(_page(priya, world), world)
    assert "Accepted by" in row and "(Procurement reviewer) on" in row
    assert "Supply is scarce this year" in row
    assert "Awaiting acceptance by" in row and _role_choices(row) == []

    fiona = browser_as("fiona")
    assert _accept(fiona, world, Role.FINANCE, reason="Within budget", days=30).status_code == 302
    row = _premium_row(_page(fiona, world), world)
    until = (timezone.localdate() + timedelta(days=30)).isoformat()
    assert f"(Finance approver) on {timezone.localdate().isoformat()}, until {until}" in row
    assert '<span class="badge ok">Accepted</span>' in row
    assert "Awaiting acceptance by" not in row
    stored = FindingAcceptance.objects.get(role=Role.FINANCE)
    assert stored.history.first().history_user.username == "fiona"


def test_a_refused_acceptance_shows_why_on_its_form_and_stores_nothing(browser_as, world):
    client = browser_as("priya")
    refused = _accept(client, world, Role.PROCUREMENT, reason="", days=400)
    assert refused.status_code == 200
    row = _premium_row(html.unescape(refused.content.decode()), world)
    assert "This field is required." in row
    assert "<details open>" in row
    assert not FindingAcceptance.objects.exists()
    late = _accept(client, world, Role.PROCUREMENT, days=400)
    assert "An acceptance runs at most 365 days" in html.unescape(late.content.decode())
    assert not FindingAcceptance.objects.exists()


def test_a_blocking_finding_has_no_form_and_a_forged_one_is_refused(browser_as, world):
    client = browser_as("tariq")
    page = _page(client, world)
    anchor = f'id="finding-gate-verification-{world["unready"].pk}-"'
    row = page[page.index(anchor) : page.index("</article>", page.index(anchor))]
    assert "Blocks" in row and _role_choices(row) == []
    refused = client.post(
        reverse("approvals:finding-accept", args=[world["case"].pk]),
        {
            "code": "gate.verification",
            "offer": world["unready"].pk,
            "key": "",
            "role": Role.TECH_LEAD,
            "reason": "Trust them",
            "expires_on": (timezone.localdate() + timedelta(days=10)).isoformat(),
        },
    )
    assert refused.status_code == 200
    assert "This finding blocks: nobody can accept it." in html.unescape(refused.content.decode())
    assert not FindingAcceptance.objects.exists()


@pytest.mark.parametrize("name", ["aude"])
def test_an_auditor_cannot_accept_or_withdraw(browser_as, people, world, name):
    acceptance = _accepted_by(people, world, "priya", Role.PROCUREMENT)
    client = browser_as(name)
    assert _accept(client, world, Role.PROCUREMENT).status_code == 403
    assert client.post(_withdraw_url(world, acceptance), {"reason": "x"}).status_code == 403
    assert FindingAcceptance.objects.filter(withdrawn_at__isnull=True).count() == 1


# Who sees a withdraw form for priya's acceptance, and who may use it.
WITHDRAWERS = {"priya": True, "pablo": True, "fiona": False, "lena": False, "tariq": False}
WITHDRAWERS |= {"ada": False, "aude": False}


@pytest.mark.parametrize("name", sorted(WITHDRAWERS))
def test_who_accepted_or_another_of_the_role_withdraws(browser_as, people, world, name):
    acceptance = _accepted_by(people, world, "priya", Role.PROCUREMENT)
    client = browser_as(name)
    url = _withdraw_url(world, acceptance)
    row = _premium_row(_page(client, world), world)
    assert (f'action="{url}"' in row) is WITHDRAWERS[name]
    response = client.post(url, {"reason": "The vendor lowered the prepayment"})
    acceptance.refresh_from_db()
    if WITHDRAWERS[name]:
        assert response.status_code == 302
        assert acceptance.withdrawn_by == people[name]
        row = _premium_row(_page(client, world), world)
        assert "Accepted by" not in row and Role.PROCUREMENT in _role_choices(row)
    else:
        assert response.status_code == 403
        assert acceptance.withdrawn_at is None


def test_withdrawing_needs_a_reason_and_happens_once(browser_as, people, world):
    acceptance = _accepted_by(people, world, "priya", Role.PROCUREMENT)
    client = browser_as("priya")
    url = _withdraw_url(world, acceptance)
    no_reason = client.post(url, {"reason": ""})
    assert no_reason.status_code == 200
    assert "This field is required." in _premium_row(no_reason.content.decode(), world)
    acceptance.refresh_from_db()
    assert acceptance.withdrawn_at is None
    assert client.post(url, {"reason": "Renegotiated"}).status_code == 302
    again = client.post(url, {"reason": "Twice"})
    assert again.status_code == 409
    assert "This acceptance is already withdrawn." in again.content.decode()
    rows = acceptance.history.order_by("history_id")
    assert [r.history_type for r in rows] == ["+", "~"]
    assert rows.last().history_change_reason.endswith(": Renegotiated")


def test_accepting_in_the_browser_needs_the_second_factor_where_required(
    browser_as, people, world, settings
):
    middleware = f"{TwoFactorMiddleware.__module__}.{TwoFactorMiddleware.__name__}"
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != middleware]
    settings.TWO_FACTOR_REQUIRED_ROLES = [Role.PROCUREMENT]
    acceptance = _accepted_by(people, world, "priya", Role.PROCUREMENT)
    client = browser_as("priya")
    refused = _accept(client, world, Role.FINANCE)
    assert refused.status_code == 403
    assert "requires two-factor sign-in" in refused.content.decode()
    withdraw = client.post(_withdraw_url(world, acceptance), {"reason": "No"})
    assert withdraw.status_code == 403
    acceptance.refresh_from_db()
    assert acceptance.withdrawn_at is None
    assert _page(client, world)  # reading needs no second factor
    # Finance is not held to procurement's requirement.
    assert _accept(browser_as("fiona"), world, Role.FINANCE).status_code == 302


def test_the_approval_page_and_the_cockpit_link_the_findings(browser_as, world):
    client = browser_as("aude")
    url = reverse("approvals:findings", args=[world["case"].pk])
    approval = client.get(reverse("approvals:case", args=[world["case"].pk]))
    assert f'href="{url}"' in approval.content.decode()
    cockpit = client.get(reverse("cases:detail", args=[world["case"].pk]))
    assert f'href="{url}"' in cockpit.content.decode()

"""The findings register through the REST API (docs/rules/findings.md): who reads it, who
accepts a finding and who withdraws an acceptance; a finding that needs acceptance holds
the approval up until every owner accepted it, and again when an acceptance is withdrawn,
its facts change or it expires."""

import copy
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from apps.approvals.acceptances import finding_accept, record_expired_acceptances
from apps.approvals.models import Approval, FindingAcceptance
from apps.approvals.services import case_submit_for_approval
from apps.approvals.tasks import record_expired_acceptances_task
from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_save
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case

ROLES = ["priya", "lena", "tariq", "fiona", "aude", "ada"]
PREMIUM = "contracts.premium_in_range"
# The offer asks 30 % in advance against 20 % from ordinary customers: a 50 % premium,
# inside the market range, for procurement and finance to accept jointly.
PREMIUM_TERMS = {"prepayment_pct": "30", "ordinary_prepayment_pct": "20"}


@pytest.fixture(scope="module")
def _world(module_people):
    people = module_people
    case, offer, offers = make_ready_case(people)
    checklist_save(
        actor=people["lena"],
        checklist=ClauseChecklist.objects.get(offer=offer),
        items=[],
        reason="Prepayment read from the contract",
        contract_terms=PREMIUM_TERMS,
    )
    case = case_submit_for_approval(actor=people["priya"], case=case)
    return {"case": case, "offer": offer, "unready": offers[1]}


@pytest.fixture
def world(_world, people):
    """The submitted case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_world)


def _in(days: int) -> str:
    return (timezone.localdate() + timedelta(days=days)).isoformat()


def _findings(api, case) -> list[dict]:
    response = api.get(f"/api/v1/cases/{case.pk}/findings/")
    assert response.status_code == 200, response.content
    return response.json()


def _premium(api, world) -> dict:
    return next(
        f
        for f in _findings(api, world["case"])
        if f["code"] == PREMIUM and f["offer"] == world["offer"].pk
    )


def _accept(api, world, role, *, reason="Supply is scarce this year", expires_on=None, **more):
    body = {
        "code": PREMIUM,
        "offer": world["offer"].pk,
        "key": "prepayment_pct",
        "role": role,
        "reason": reason,
        "expires_on": expires_on or _in(90),
        **more,
    }
    return api.post(f"/api/v1/cases/{world['case'].pk}/findings/accept/", body, format="json")


def _withdraw(api, acceptance_pk, reason="The vendor lowered the prepayment"):
    return api.post(
        f"/api/v1/finding-acceptances/{acceptance_pk}/withdraw/", {"reason": reason}, format="json"
    )


def _approve(api, world):
    body = {"offer": world["offer"].pk, "decision": "approved", "comment": "Premium accepted"}
    return api.post(f"/api/v1/cases/{world['case'].pk}/decision/", body, format="json")


def _accepted_by_both(people, world):
    for name, role in (("priya", Role.PROCUREMENT), ("fiona", Role.FINANCE)):
        finding_accept(
            actor=people[name],
            case=world["case"],
            code=PREMIUM,
            offer_id=world["offer"].pk,
            key="prepayment_pct",
            role=role,
            reason="Supply is scarce this year",
            expires_on=timezone.localdate() + timedelta(days=30),
        )


# --- who may do what -------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_every_reader_of_approvals_reads_the_register_and_the_acceptances(api_as, world, role):
    api = api_as(role)
    premium = _premium(api, world)
    assert premium["severity"] == "needs_acceptance" and premium["status"] == "open"
    assert premium["blocking"] is True
    assert premium["owners"] == [Role.PROCUREMENT, Role.FINANCE]
    assert premium["awaiting"] == [Role.PROCUREMENT, Role.FINANCE]
    assert premium["owner_labels"] == ["Procurement reviewer", "Finance approver"]
    assert premium["vendor"] == world["offer"].vendor.name
    assert premium["gate"] == "red_flags" and premium["acceptances"] == []
    assert "a premium of 50" in premium["message"]
    assert "30–50 %" in premium["source"]
    assert premium["fix_url"] == reverse("contracts:checklist", args=[world["offer"].pk])
    listed = api.get(f"/api/v1/finding-acceptances/?case={world['case'].pk}")
    assert listed.status_code == 200 and listed.json()["count"] == 0


def test_anonymous_visitors_read_and_write_nothing(client, people, world):
    case = world["case"]
    _accepted_by_both(people, world)
    acceptance = FindingAcceptance.objects.filter(case=case).first()
    for method, path in (
        ("get", f"/api/v1/cases/{case.pk}/findings/"),
        ("get", "/api/v1/finding-acceptances/"),
        ("get", f"/api/v1/finding-acceptances/{acceptance.pk}/"),
        ("post", f"/api/v1/cases/{case.pk}/findings/accept/"),
        ("post", f"/api/v1/finding-acceptances/{acceptance.pk}/withdraw/"),
    ):
        response = getattr(client, method)(path, content_type="application/json")
        assert response.status_code == 401, path
    assert FindingAcceptance.objects.filter(case=case, withdrawn_at__isnull=True).count() == 2


# Each persona accepts the premium as procurement (fiona: as finance, which she holds).
ACCEPT_OUTCOMES = {
    "priya": (Role.PROCUREMENT, 201),
    "fiona": (Role.FINANCE, 201),
    "lena": (Role.PROCUREMENT, 400),  # she does not hold the role
    "tariq": (Role.PROCUREMENT, 400),
    "ada": (Role.PROCUREMENT, 400),  # the administrator owns no finding
    "aude": (Role.PROCUREMENT, 403),  # the auditor accepts nothing
}


@pytest.mark.parametrize("name", ROLES)
def test_only_a_holder_of_an_owning_role_accepts(api_as, people, world, name):
    role, expected = ACCEPT_OUTCOMES[name]
    response = _accept(api_as(name), world, role)
    assert response.status_code == expected, response.content
    stored = FindingAcceptance.objects.filter(case=world["case"])
    if expected == 201:
        body = response.json()
        assert body["accepted_by"] == name and body["role"] == role
        assert body["code"] == PREMIUM and body["reason"] == "Supply is scarce this year"
        assert body["withdrawn"] is False and body["expired"] is False
        assert stored.get().accepted_by == people[name]
    else:
        assert not stored.exists()
    if expected == 400:
        assert "You do not hold the role Procurement reviewer." in response.json()["role"]


# Who may withdraw priya's acceptance as procurement reviewer: she, or another holder of
# the role (pablo); nobody else.
WITHDRAWERS = {"priya": 200, "pablo": 200, "fiona": 403, "lena": 403, "tariq": 403, "aude": 403}
WITHDRAWERS["ada"] = 403


@pytest.mark.parametrize("name", sorted(WITHDRAWERS))
def test_who_accepted_or_another_of_the_role_withdraws(api_as, people, world, name):
    created = _accept(api_as("priya"), world, Role.PROCUREMENT)
    assert created.status_code == 201
    pk = created.json()["id"]
    response = _withdraw(api_as(name), pk)
    assert response.status_code == WITHDRAWERS[name], response.content
    acceptance = FindingAcceptance.objects.get(pk=pk)
    if WITHDRAWERS[name] == 200:
        assert response.json()["withdrawn"] is True
        assert response.json()["withdrawn_by"] == name
        assert acceptance.withdrawn_by == people[name]
    else:
        assert acceptance.withdrawn_at is None


# --- the finding's life ------------------------------------------------------------


def test_accepted_by_both_owners_the_offer_is_approved_and_withdrawing_reopens_it(
    api_as, people, world
):
    priya, fiona, tariq = api_as("priya"), api_as("fiona"), api_as("tariq")
    refused = _approve(tariq, world)
    assert refused.status_code == 400
    assert any("a premium of 50" in reason for reason in refused.json()["offer"])

    assert _accept(priya, world, Role.PROCUREMENT).status_code == 201
    half = _premium(tariq, world)
    assert half["status"] == "open" and half["awaiting"] == [Role.FINANCE]
    assert [a["accepted_by"] for a in half["acceptances"]] == ["priya"]
    assert _approve(tariq, world).status_code == 400  # finance has not accepted yet

    finance = _accept(fiona, world, Role.FINANCE, reason="Within budget", expires_on=_in(30))
    assert finance.status_code == 201
    accepted = _premium(tariq, world)
    assert accepted["status"] == "accepted" and accepted["blocking"] is False
    assert {(a["role"], a["accepted_by"], a["expires_on"]) for a in accepted["acceptances"]} == {
        (Role.PROCUREMENT, "priya", _in(90)),
        (Role.FINANCE, "fiona", _in(30)),
    }
    gates = tariq.get(f"/api/v1/cases/{world['case'].pk}/gates/").json()
    entry = next(o for o in gates["offers"] if o["offer"] == world["offer"].pk)
    assert entry["all_held"] is True

    # Finance withdraws: open again, the approval refused again.
    withdrawn = _withdraw(fiona, finance.json()["id"], reason="The budget was cut")
    assert withdrawn.status_code == 200
    reopened = _premium(tariq, world)
    assert reopened["status"] == "open" and reopened["awaiting"] == [Role.FINANCE]
    assert _approve(tariq, world).status_code == 400
    # A second withdrawal of the same acceptance is a conflict, and changes nothing.
    again = _withdraw(fiona, finance.json()["id"], reason="Twice")
    assert again.status_code == 409
    assert again.json()["acceptance"] == ["This acceptance is already withdrawn."]

    assert _accept(fiona, world, Role.FINANCE, reason="Budget restored").status_code == 201
    approved = _approve(tariq, world)
    assert approved.status_code == 201, approved.content
    assert Approval.objects.get(case=world["case"]).decision == "approved"

    # Each acceptance and the withdrawal is a row of the history, with who and why.
    rows = FindingAcceptance.history.filter(case_id=world["case"].pk).order_by("history_id")
    assert [(r.history_type, r.history_user.username) for r in rows] == [
        ("+", "priya"),
        ("+", "fiona"),
        ("~", "fiona"),
        ("+", "fiona"),
    ]
    assert rows[1].history_change_reason.startswith("Finding accepted as Finance approver until")
    assert rows[1].history_change_reason.endswith("— Within budget")
    assert rows[2].history_change_reason == (
        "Acceptance withdrawn; the finding is open again: The budget was cut"
    )


def test_an_acceptance_lapses_when_the_premium_moves(api_as, people, world):
    _accepted_by_both(people, world)
    tariq = api_as("tariq")
    assert _premium(tariq, world)["status"] == "accepted"
    # Ordinary customers now prepay 22 %: a premium of about 36 %, still in the range,
    # but not what the owners accepted.
    checklist_save(
        actor=people["lena"],
        checklist=ClauseChecklist.objects.get(offer=world["offer"]),
        items=[],
        reason="Ordinary terms corrected",
        contract_terms={"ordinary_prepayment_pct": "22"},
    )
    moved = _premium(tariq, world)
    assert moved["status"] == "open" and moved["acceptances"] == []
    assert moved["awaiting"] == [Role.PROCUREMENT, Role.FINANCE]
    assert "a premium of 36" in moved["message"]
    assert _approve(tariq, world).status_code == 400
    # The acceptances stay on record, neither withdrawn nor expired.
    listed = api_as("aude").get(f"/api/v1/finding-acceptances/?case={world['case'].pk}").json()
    assert listed["count"] == 2
    assert not any(a["withdrawn"] or a["expired"] for a in listed["results"])


def test_an_acceptance_holds_through_its_expiry_day_and_not_after(
    api_as, people, world, monkeypatch
):
    priya, fiona, tariq = api_as("priya"), api_as("fiona"), api_as("tariq")
    today = timezone.localdate()
    assert _accept(priya, world, Role.PROCUREMENT, expires_on=today.isoformat()).status_code == 201
    assert _accept(fiona, world, Role.FINANCE).status_code == 201
    assert _premium(tariq, world)["status"] == "accepted"

    # The next day: priya's acceptance ran out, the finding is open again.
    tomorrow = timezone.now() + timedelta(days=1)
    monkeypatch.setattr(timezone, "now", lambda: tomorrow)
    expired = _premium(tariq, world)
    assert expired["status"] == "expired" and expired["blocking"] is True
    assert expired["awaiting"] == [Role.PROCUREMENT]
    assert [a["accepted_by"] for a in expired["acceptances"]] == ["fiona"]
    assert _approve(tariq, world).status_code == 400
    listed = api_as("aude").get(f"/api/v1/finding-acceptances/?case={world['case'].pk}").json()
    assert {a["accepted_by"]: a["expired"] for a in listed["results"]} == {
        "priya": True,
        "fiona": False,
    }

    # The daily task leaves the moment on record, once (the clock says tomorrow).
    assert record_expired_acceptances_task.apply().get() == 1
    assert record_expired_acceptances(today=today + timedelta(days=1)) == 0
    row = FindingAcceptance.history.filter(accepted_by=people["priya"]).first()
    assert row.history_type == "~" and row.history_user is None
    assert row.history_change_reason == (
        f"Acceptance expired on {today.isoformat()}; the finding is open again"
    )
    # Accepted again, it holds again.
    assert _accept(priya, world, Role.PROCUREMENT, reason="Renewed").status_code == 201
    assert _premium(tariq, world)["status"] == "accepted"


def test_expired_acceptances_are_recorded_daily(settings):
    [entry] = [
        e
        for e in settings.CELERY_BEAT_SCHEDULE.values()
        if e["task"] == "apps.approvals.tasks.record_expired_acceptances_task"
    ]
    assert entry["schedule"].hour == {0}


def test_one_person_cannot_accept_a_joint_finding_for_both_owners(api_as, people, world):
    pablo = people["pablo"]  # a procurement reviewer who is also a finance approver
    pablo.groups.add(Group.objects.get(name=Role.FINANCE))
    api = api_as("pablo")
    assert _accept(api, world, Role.PROCUREMENT).status_code == 201
    refused = _accept(api, world, Role.FINANCE)
    assert refused.status_code == 400
    assert "a different person for each owner" in refused.json()["role"][0]
    assert FindingAcceptance.objects.filter(case=world["case"]).count() == 1
    assert _premium(api, world)["awaiting"] == [Role.FINANCE]


def test_a_finding_is_accepted_once_per_role(api_as, people, world):
    assert _accept(api_as("priya"), world, Role.PROCUREMENT).status_code == 201
    again = _accept(api_as("pablo"), world, Role.PROCUREMENT)
    assert again.status_code == 400
    assert again.json()["role"] == ["The Procurement reviewer has already accepted it."]


def test_a_blocking_finding_cannot_be_accepted(api_as, world):
    unready = world["unready"]
    body = {
        "code": "gate.verification",
        "offer": unready.pk,
        "role": Role.TECH_LEAD,
        "reason": "We trust the vendor",
        "expires_on": _in(30),
    }
    tariq = api_as("tariq")
    url = f"/api/v1/cases/{world['case'].pk}/findings/accept/"
    refused = tariq.post(url, body, format="json")
    assert refused.status_code == 400
    assert refused.json()["code"] == [
        "This finding blocks: nobody can accept it. Fix what it names."
    ]
    gate = next(
        f
        for f in _findings(tariq, world["case"])
        if f["code"] == "gate.verification" and f["offer"] == unready.pk
    )
    assert gate["severity"] == "blocks" and gate["status"] == "open" and gate["awaiting"] == []
    assert not FindingAcceptance.objects.exists()


@pytest.mark.parametrize(
    "change,field,message",
    [
        ({"reason": "  "}, "reason", "This field may not be blank."),
        ({"expires_on": "2001-01-01"}, "expires_on", "The expiry date 2001-01-01 is in the past."),
        # Days from today, read when the test runs (a run may pass midnight).
        ({"expires_on": 366}, "expires_on", "An acceptance runs at most 365 days"),
        ({"expires_on": "soon"}, "expires_on", "Date has wrong format."),
        ({"role": "chief"}, "role", '"chief" is not a valid choice.'),
        ({"role": Role.LEGAL}, "role", "Only Procurement reviewer, Finance approver may"),
        ({"code": "contracts.nothing"}, "code", "No such finding is open on this case."),
        ({"offer": None}, "code", "No such finding is open on this case."),
    ],
)
def test_bad_input_is_refused_by_field_and_nothing_is_stored(api_as, world, change, field, message):
    if isinstance(change.get("expires_on"), int):
        change = {**change, "expires_on": _in(change["expires_on"])}
    body = {
        "code": PREMIUM,
        "offer": world["offer"].pk,
        "key": "prepayment_pct",
        "role": Role.PROCUREMENT,
        "reason": "Fine",
        "expires_on": _in(90),
        **change,
    }
    name = "lena" if body["role"] == Role.LEGAL else "priya"
    refused = api_as(name).post(
        f"/api/v1/cases/{world['case'].pk}/findings/accept/", body, format="json"
    )
    assert refused.status_code == 400
    assert any(message in text for text in refused.json()[field]), refused.json()
    assert not FindingAcceptance.objects.exists()


def test_a_case_nobody_can_see_is_not_found(api_as):
    assert api_as("aude").get("/api/v1/cases/999999/findings/").status_code == 404
    response = _withdraw(api_as("priya"), 999999)
    assert response.status_code == 404


def test_accepting_and_withdrawing_need_the_second_factor_where_required(
    api_as, people, world, settings
):
    """As for a red-flag waiver: a personal token is not a second factor."""
    settings.TWO_FACTOR_REQUIRED_ROLES = [Role.PROCUREMENT]
    refused = _accept(api_as("priya"), world, Role.PROCUREMENT)
    assert refused.status_code == 403
    assert "requires two-factor sign-in" in refused.json()["detail"]
    assert not FindingAcceptance.objects.exists()
    _accepted_by_both(people, world)
    acceptance = FindingAcceptance.objects.get(role=Role.PROCUREMENT)
    assert _withdraw(api_as("priya"), acceptance.pk).status_code == 403
    acceptance.refresh_from_db()
    assert acceptance.withdrawn_at is None
    # Finance is not held to procurement's requirement; reading stays open to the token.
    assert _premium(api_as("priya"), world)["status"] == "accepted"

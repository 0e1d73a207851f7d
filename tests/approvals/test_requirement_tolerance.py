"""A shortfall within the requirement spec's tolerance, end to end through the API.

docs/rules/sizing.md#requirement-spec: an offer short of a numeric figure by at most the
tolerance the spec states needs the tech lead's acceptance (a finding of the register,
``sizing.requirement_within_tolerance``) instead of blocking. Accepted, the demand-fit gate
holds; the acceptance holds for that tolerance only; at 0 % the same shortfall blocks.
"""

import copy
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.approvals.models import FindingAcceptance
from apps.core.roles import Role
from tests.accounts.test_two_factor import code_for, enrol, sign_in, verify
from tests.approvals.factories import make_ready_case

WITHIN = "sizing.requirement_within_tolerance"
SHORT = "sizing.requirement_short"
# The ready offer has 64 cards: against 67, 3 short (4.5 %).
SPEC = {"card_count": 67, "tolerance_pct": 10}


@pytest.fixture(scope="module")
def _ready(module_people):
    case, offer, _offers = make_ready_case(module_people, offers=1)
    return case, offer


@pytest.fixture
def ready(_ready, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_ready)


def _spec(api, case, body):
    url = f"/api/v1/cases/{case.pk}/requirement-spec/"
    current = api.get(url)
    if current.status_code == 200:
        body = {**body, "version": current.json()["version"], "change_reason": "Re-read"}
    return api.put(url, body, format="json")


def _card_count(api, case, offer) -> dict:
    """The register's finding about the offer's card count (exactly one)."""
    response = api.get(f"/api/v1/cases/{case.pk}/findings/")
    assert response.status_code == 200, response.content
    (found,) = [
        f for f in response.json() if f["offer"] == offer.pk and f["code"].startswith("sizing.")
    ]
    assert found["key"] == "card_count"
    return found


def _demand_fit(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return next(g for g in entry["gates"] if g["key"] == "demand_fit")


def _accept(api, case, offer):
    body = {
        "code": WITHIN,
        "offer": offer.pk,
        "key": "card_count",
        "role": Role.TECH_LEAD,
        "reason": "Three cards fewer still serve the target at peak",
        "expires_on": (timezone.localdate() + timedelta(days=90)).isoformat(),
    }
    return api.post(f"/api/v1/cases/{case.pk}/findings/accept/", body, format="json")


def test_within_tolerance_needs_acceptance_and_blocks_again_at_no_tolerance(
    api_as, people, ready, settings
):
    case, offer = ready
    tech, auditor = api_as("tariq"), api_as("aude")
    assert _demand_fit(auditor, case, offer)["held"] is True
    assert _spec(tech, case, SPEC).status_code == 201

    # Short by 4.5 % at a tolerance of 10 %: the tech lead's to accept, open until then.
    found = _card_count(auditor, case, offer)
    assert found["code"] == WITHIN
    assert (found["severity"], found["status"], found["blocking"]) == (
        "needs_acceptance",
        "open",
        True,
    )
    assert found["owners"] == [Role.TECH_LEAD] and found["gate"] == "demand_fit"
    assert "3 cards short of the 67 cards required (4.5 %)" in found["message"]
    assert "within the spec's 10 % tolerance" in found["message"]
    assert _demand_fit(auditor, case, offer)["held"] is False

    # The organisation asks the tech lead for a second factor: a token is not one.
    settings.TWO_FACTOR_REQUIRED_ROLES = [Role.TECH_LEAD]
    refused = _accept(tech, case, offer)
    assert refused.status_code == 403 and "two-factor" in refused.json()["detail"]
    assert not FindingAcceptance.objects.exists()
    device = enrol(people["tariq"])
    browser = APIClient()  # signed in with a password and a code: a session
    sign_in(browser, "tariq")
    verify(browser, code_for(device))
    accepted = _accept(browser, case, offer)
    assert accepted.status_code == 201, accepted.content
    settings.TWO_FACTOR_REQUIRED_ROLES = []

    found = _card_count(auditor, case, offer)
    assert (found["status"], found["blocking"]) == ("accepted", False)
    assert _demand_fit(auditor, case, offer)["held"] is True

    # The acceptance was given at 10 %: at 20 % the same figures are judged again.
    assert _spec(tech, case, {**SPEC, "tolerance_pct": 20}).status_code == 200
    found = _card_count(auditor, case, offer)
    assert (found["code"], found["status"]) == (WITHIN, "open")
    assert _demand_fit(auditor, case, offer)["held"] is False

    # No tolerance: the same 3 cards short block, and nobody can accept that.
    assert _spec(tech, case, {**SPEC, "tolerance_pct": 0}).status_code == 200
    found = _card_count(auditor, case, offer)
    assert (found["code"], found["severity"], found["blocking"]) == (SHORT, "blocks", True)
    assert found["awaiting"] == []
    gate = _demand_fit(auditor, case, offer)
    assert gate["held"] is False

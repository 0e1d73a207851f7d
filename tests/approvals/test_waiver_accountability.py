"""Waivers are accountable, end to end through HTTP: approvable → blocked → approvable.

A waiver expires (by default 90 days after it is granted): from the day after its
expiry date the item is an open red flag again. On an item the organisation's template
marks high-severity, a waiver counts only once a second legal reviewer confirms it. The
approval gate, the case page and the packet section name the item with the same reason.
"""

from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from apps.approvals.services import case_submit_for_approval
from apps.contracts import packet as contracts_packet
from apps.contracts.models import ChecklistTemplate, RedFlagWaiver
from tests.approvals.factories import make_ready_case
from tests.contracts.factories import make_legal, template_rows
from tests.pages import whole_case

WAIVERS = "/api/v1/red-flag-waivers/"


def _gates(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return {g["key"]: g for g in entry["gates"]}


def _set_status(api, offer, key: str, status: str):
    checklist = api.get(f"/api/v1/clause-checklists/?offer={offer.pk}").json()["results"][0]
    item = next(i for i in checklist["items"] if i["key"] == key)
    response = api.patch(
        f"/api/v1/clause-checklists/{checklist['id']}/",
        {
            "items": [{"id": item["id"], "status": status}],
            "change_reason": "Second reading of the contract",
            "version": checklist["version"],
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    return item["id"]


def _packet_html(case) -> str:
    section = contracts_packet.packet_section(case)
    return render_to_string(section.template, {**section.context, "section": section})


def _case_page(browser, case) -> str:
    response = whole_case(browser, case.pk)
    assert response.status_code == 200
    return response.content.decode()


def _decide(api, case, offer):
    body = {"offer": offer.pk, "decision": "approved", "comment": "Go"}
    return api.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")


@pytest.fixture
def tomorrow(monkeypatch):
    """Move the organisation's calendar on by one day (instants stay as they are)."""
    real = timezone.localdate

    def advance():
        def localdate(value=None, timezone=None):
            if value is None:
                return real(None, timezone) + timedelta(days=1)
            return real(value, timezone)

        monkeypatch.setattr("django.utils.timezone.localdate", localdate)

    return advance


def test_an_expired_waiver_blocks_until_it_is_renewed(
    api_as, browser_as, people, tomorrow, settings
):
    settings.CASE_STANDING_STORED = False
    case, offer, _offers = make_ready_case(people)
    legal, tech = api_as("lena"), api_as("tariq")
    assert all(g["held"] for g in _gates(tech, case, offer).values())

    item_id = _set_status(legal, offer, "sla", "missing")
    gate = _gates(tech, case, offer)["red_flags"]
    assert gate["held"] is False and "1. Service level agreement (SLA)" in gate["reason"]

    today = timezone.localdate()
    granted = legal.post(
        WAIVERS,
        {"item": item_id, "reason": "Credits suffice", "expires_on": today.isoformat()},
        format="json",
    )
    assert granted.status_code == 201, granted.content
    assert granted.json()["expires_on"] == today.isoformat()
    # Expiring today: still in force today.
    assert _gates(tech, case, offer)["red_flags"]["held"] is True

    tomorrow()
    label = f"1. Service level agreement (SLA) (the waiver expired on {today.isoformat()})"
    gate = _gates(tech, case, offer)["red_flags"]
    assert gate["held"] is False
    assert gate["reason"] == f"Open red flags: {label}."
    assert label in _case_page(browser_as("tariq"), case)
    assert label in _packet_html(case)
    listed = tech.get(f"/api/v1/cases/{case.pk}/clause-red-flags/").json()
    assert next(e for e in listed if e["offer"] == offer.pk)["open_red_flag_labels"] == [label]

    case_submit_for_approval(actor=people["priya"], case=case)
    refused = _decide(tech, case, offer)
    assert refused.status_code == 400 and label in str(refused.json())

    # A waiver with a date in the past is refused; the renewal takes the default 90 days.
    past = legal.post(
        WAIVERS,
        {"item": item_id, "reason": "Renewed", "expires_on": today.isoformat()},
        format="json",
    )
    assert past.status_code == 400 and "is in the past" in str(past.json())
    renewed = legal.post(WAIVERS, {"item": item_id, "reason": "Renewed by legal"}, format="json")
    assert renewed.status_code == 201, renewed.content
    assert renewed.json()["expires_on"] == (today + timedelta(days=91)).isoformat()
    assert all(g["held"] for g in _gates(tech, case, offer).values())
    assert label not in _case_page(browser_as("tariq"), case)
    assert _decide(tech, case, offer).status_code == 201


def test_a_high_severity_waiver_blocks_until_a_second_legal_reviewer_confirms_it(
    api_as, browser_as, people, settings
):
    settings.CASE_STANDING_STORED = False
    leo = people["leo"] = make_legal("leo")
    legal, tech = api_as("lena"), api_as("tariq")
    published = legal.post(
        "/api/v1/checklist-templates/",
        {
            "note": "Card lock is high-severity",
            "items": template_rows(high_severity={"hardware_lock"}),
        },
        format="json",
    )
    assert published.status_code == 201, published.content
    assert ChecklistTemplate.objects.get(number=3).items.get(key="hardware_lock").high_severity
    case, offer, _offers = make_ready_case(people)
    assert all(g["held"] for g in _gates(tech, case, offer).values())

    item_id = _set_status(legal, offer, "hardware_lock", "needs_negotiation")
    waived = legal.post(
        WAIVERS, {"item": item_id, "reason": "Substitution only with notice"}, format="json"
    )
    assert waived.status_code == 201, waived.content
    waiver_id = waived.json()["id"]

    label = "3. Card model and count locked (the waiver awaits a second legal confirmation)"
    gate = _gates(tech, case, offer)["red_flags"]
    assert gate["held"] is False and gate["reason"] == f"Open red flags: {label}."
    assert label in _case_page(browser_as("tariq"), case)
    assert label in _packet_html(case)

    # The granter cannot confirm their own waiver; other roles may not confirm at all.
    own = legal.post(f"{WAIVERS}{waiver_id}/confirm/", {"note": "Fine by me"}, format="json")
    assert own.status_code == 400 and "You granted this waiver" in str(own.json())
    for role in ("priya", "tariq", "aude"):
        refused = api_as(role).post(f"{WAIVERS}{waiver_id}/confirm/", {"note": "x"}, format="json")
        assert refused.status_code == 403
    empty = browser_as("leo").post(
        reverse("contracts:waiver-confirm", args=[waiver_id]), {"note": "  "}
    )
    assert empty.status_code == 200 and "This field is required" in empty.content.decode()
    assert _gates(tech, case, offer)["red_flags"]["held"] is False

    # The second legal reviewer confirms on the page: the waiver counts.
    page = browser_as("leo").get(reverse("contracts:waiver-confirm", args=[waiver_id]))
    assert page.status_code == 200 and "Substitution only with notice" in page.content.decode()
    confirmed = browser_as("leo").post(
        reverse("contracts:waiver-confirm", args=[waiver_id]),
        {"note": "Read the substitution clause; notice is enough for us"},
    )
    assert confirmed.status_code == 302
    waiver = RedFlagWaiver.objects.get(pk=waiver_id)
    assert waiver.confirmed_by == leo and waiver.confirmed_at is not None
    assert waiver.history.first().history_user == leo
    assert all(g["held"] for g in _gates(tech, case, offer).values())
    assert label not in _case_page(browser_as("tariq"), case)
    html = _packet_html(case)
    assert label not in html and "confirmed by Leo" in html

    again = api_as("ada").post(f"{WAIVERS}{waiver_id}/confirm/", {"note": "x"}, format="json")
    assert again.status_code == 400 and "already confirmed" in str(again.json())
    case_submit_for_approval(actor=people["priya"], case=case)
    assert _decide(tech, case, offer).status_code == 201


def test_a_confirmation_through_the_api_and_a_withdrawal(api_as, people):
    people["leo"] = make_legal("leo")
    legal, second, tech = api_as("lena"), api_as("leo"), api_as("tariq")
    rows = template_rows(high_severity={"sla"})
    legal.post("/api/v1/checklist-templates/", {"note": "SLA", "items": rows}, format="json")
    case, offer, _offers = make_ready_case(people)
    item_id = _set_status(legal, offer, "sla", "missing")
    waiver_id = legal.post(WAIVERS, {"item": item_id, "reason": "Credits"}, format="json").json()[
        "id"
    ]
    confirmed = second.post(f"{WAIVERS}{waiver_id}/confirm/", {"note": "Agreed"}, format="json")
    assert confirmed.status_code == 200, confirmed.content
    assert confirmed.json()["confirmed_by"] == "leo"
    assert _gates(tech, case, offer)["red_flags"]["held"] is True

    # Withdrawn: open again, and a withdrawn waiver can no longer be confirmed or withdrawn.
    withdrawn = second.post(
        f"{WAIVERS}{waiver_id}/withdraw/", {"reason": "Vendor changed its SLA"}, format="json"
    )
    assert withdrawn.status_code == 200, withdrawn.content
    assert "Withdrawn by Leo: Vendor changed its SLA" in withdrawn.json()["lapse_note"]
    gate = _gates(tech, case, offer)["red_flags"]
    assert gate["held"] is False
    assert gate["reason"] == "Open red flags: 1. Service level agreement (SLA)."
    twice = legal.post(f"{WAIVERS}{waiver_id}/withdraw/", {"reason": "Again"}, format="json")
    assert twice.status_code == 400 and "nothing to withdraw" in str(twice.json())
    late = second.post(f"{WAIVERS}{waiver_id}/confirm/", {"note": "x"}, format="json")
    assert late.status_code == 400

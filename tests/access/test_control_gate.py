"""Access controls gate approval end to end, through the API and the pages.

A ready case is approvable; a control moved back from "in place", an emptied
evidence note, or a risk acceptance past its end date blocks it, and the gate,
the case page and the packet section give the same reason; fixing it (or a
tech lead accepting the risk until a date) makes the case approvable again.
"""

from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import escape

from apps.access.packet import packet_section
from apps.approvals.services import case_submit_for_approval
from tests.approvals.factories import make_ready_case
from tests.pages import whole_case

EGRESS = "Egress allow-list: model service port, object storage, image registry only"
ROTATION = "Keys rotated quarterly"


@pytest.fixture
def ready(people, settings):
    # The clock moves days ahead below; the signed-in session must outlive that.
    settings.SESSION_COOKIE_AGE = 365 * 24 * 3600
    case, offer, _offers = make_ready_case(people)
    case_submit_for_approval(actor=people["priya"], case=case)
    return case, offer


def matrix_url(case) -> str:
    return f"/api/v1/cases/{case.pk}/access-matrix/"


def gate(api, case, offer) -> dict:
    data = api.get(f"/api/v1/cases/{case.pk}/gates/").json()
    entry = next(o for o in data["offers"] if o["offer"] == offer.pk)
    return next(g for g in entry["gates"] if g["key"] == "access_matrix")


def set_control(api, case, key: str, **changes):
    """Re-send the matrix as read, with one control changed (as a client would)."""
    current = api.get(matrix_url(case)).json()
    controls = [
        {"key": c["key"], "status": c["status"], "evidence": c["evidence"], **changes}
        if c["key"] == key
        else {"key": c["key"], "status": c["status"], "evidence": c["evidence"]}
        for c in current["controls"]
    ]
    body = {
        "roles": current["roles"],
        "permissions": current["permissions"],
        "grants": current["grants"],
        "controls": controls,
        "version": current["version"],
        "change_reason": f"Control {key} re-assessed",
    }
    response = api.put(matrix_url(case), body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def accept_risk(api, case, key: str, *, reason: str, expires_on):
    control = next(c for c in api.get(matrix_url(case)).json()["controls"] if c["key"] == key)
    return api.post(
        f"{matrix_url(case)}controls/{key}/risk-acceptance/",
        {"reason": reason, "expires_on": expires_on.isoformat(), "version": control["version"]},
        format="json",
    )


def case_page(browser, case) -> str:
    response = whole_case(browser, case.pk)
    assert response.status_code == 200
    return response.content.decode()


def packet_html(case) -> str:
    section = packet_section(case)
    return render_to_string(section.template, {**section.context, "section": section})


def decide(api, case, offer):
    body = {"offer": offer.pk, "decision": "approved", "comment": "Controls checked"}
    return api.post(f"/api/v1/cases/{case.pk}/decision/", body, format="json")


def assert_blocked_everywhere(api, browser, case, offer, reason: str):
    shown = gate(api, case, offer)
    assert shown["held"] is False
    assert reason in shown["reason"]
    assert shown["fix_url"] == f"/cases/{case.pk}/access-matrix/#controls"
    assert escape(reason) in case_page(browser, case)
    assert escape(reason) in packet_html(case)
    refused = decide(api, case, offer)
    assert refused.status_code == 400 and reason in str(refused.json())


def move_clock(monkeypatch, days: int):
    later = timezone.now() + timedelta(days=days)
    monkeypatch.setattr(timezone, "now", lambda: later)


def test_a_control_moved_back_from_in_place_blocks_until_a_tech_lead_accepts_the_risk(
    api_as, browser_as, ready, monkeypatch
):
    case, offer = ready
    tech, browser = api_as("tariq"), browser_as("aude")
    assert gate(tech, case, offer)["held"] is True

    # The egress allow-list turns out to cover only part of the subnets. (The entry
    # point's MFA needs legal's acceptance as well: tests/approvals/test_more_findings.py.)
    set_control(tech, case, "egress_allow_list", status="partial")
    reason = f"{EGRESS} — not in place (Partial)"
    assert_blocked_everywhere(tech, browser, case, offer, reason)

    # The tech lead accepts the risk until tomorrow, with a reason.
    tomorrow = timezone.localdate() + timedelta(days=1)
    why = "The vendor's firewall blocks the other subnets until the cut-over"
    accepted = accept_risk(tech, case, "egress_allow_list", reason=why, expires_on=tomorrow)
    assert accepted.status_code == 200, accepted.content
    acceptance = f"{EGRESS} — risk accepted by Tariq until {tomorrow.isoformat()}: {why}"
    shown = gate(tech, case, offer)
    assert shown["held"] is True and shown["waivers"] == [acceptance]
    assert escape(acceptance) in case_page(browser, case)
    assert escape(acceptance) in packet_html(case)

    # Tomorrow, the acceptance's last day: it still holds.
    move_clock(monkeypatch, 1)
    assert gate(tech, case, offer)["held"] is True

    # The day after, it has expired: the control is open again.
    move_clock(monkeypatch, 1)
    expired = f"{reason}; its risk acceptance expired on {tomorrow.isoformat()}"
    assert_blocked_everywhere(tech, browser, case, offer, expired)
    lapsed = f"{EGRESS} — risk acceptance by Tariq expired on {tomorrow.isoformat()}: {why}"
    assert escape(lapsed) in case_page(browser, case)
    assert escape(lapsed) in packet_html(case)

    # The control is put in place with its evidence: approvable again.
    set_control(
        tech, case, "egress_allow_list", status="in_place", evidence="Allow-list on every subnet"
    )
    assert gate(tech, case, offer)["held"] is True
    assert decide(tech, case, offer).status_code == 201


def test_an_emptied_evidence_note_blocks_and_its_return_unblocks(api_as, browser_as, ready):
    case, offer = ready
    tech, browser = api_as("tariq"), browser_as("priya")
    set_control(tech, case, "key_rotation", evidence="")
    reason = f"{ROTATION} — in place but without an evidence note"
    assert_blocked_everywhere(tech, browser, case, offer, reason)
    set_control(tech, case, "key_rotation", evidence="Rotation job run 2026-03-31, SEC-430")
    assert gate(tech, case, offer)["held"] is True
    assert decide(tech, case, offer).status_code == 201


def test_a_period_out_of_step_blocks_and_each_control_is_named(api_as, browser_as, ready):
    case, offer = ready
    tech, browser = api_as("tariq"), browser_as("lena")
    current = tech.get(matrix_url(case)).json()
    body = {
        **{k: current[k] for k in ("roles", "permissions", "grants")},
        "controls": [
            {"key": "egress_allow_list", "status": "missing", "evidence": ""},
        ],
        "periods": {"key_rotation_days": 180},
        "version": current["version"],
        "change_reason": "Rotation moved to twice a year",
    }
    assert tech.put(matrix_url(case), body, format="json").status_code == 200
    shown = gate(tech, case, offer)
    assert shown["held"] is False
    egress = (
        "Egress allow-list: model service port, object storage, image registry only"
        " — not in place (Missing)"
    )
    rotation = (
        f"{ROTATION} — keys are rotated every 180 days; quarterly rotation means at most 90 days"
    )
    assert f"{egress}; {rotation}" in shown["reason"]
    for reason in (egress, rotation):
        assert escape(reason) in case_page(browser, case)
        assert escape(reason) in packet_html(case)
    body = {**body, "periods": {"key_rotation_days": 90}, "controls": [], "version": None}
    body["version"] = tech.get(matrix_url(case)).json()["version"]
    assert tech.put(matrix_url(case), body, format="json").status_code == 200
    shown = gate(tech, case, offer)
    assert rotation not in shown["reason"] and egress in shown["reason"]

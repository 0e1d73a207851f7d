"""The access-control rules on plain data: in place with evidence, or a risk accepted in time.

Boundaries: an acceptance ending today still holds, one that ended yesterday is
open again; an emptied evidence note and a status moved back from "in place"
reopen the control; each period is a whole number within its bounds.
"""

from dataclasses import replace
from datetime import date, datetime, timedelta

import pytest

from apps.access.rules import (
    CONTROL_ABSENT,
    CONTROL_NO_EVIDENCE,
    CONTROL_NO_PERIOD,
    CONTROL_NOT_IN_PLACE,
    CONTROL_ROTATION_TOO_LONG,
    ControlData,
    ControlPeriods,
    control_gap,
    controls_state,
    entry_mfa_acceptance,
    period_errors,
    risk_acceptance_current,
    risk_acceptance_errors,
)

TODAY = date(2026, 6, 1)
YESTERDAY = TODAY - timedelta(days=1)
TOMORROW = TODAY + timedelta(days=1)
PERIODS = ControlPeriods(key_rotation_days=90, credential_lifetime_hours=1, log_retention_days=365)

MFA = ControlData(
    key="mfa_entry",
    title="Single entry with MFA",
    status="in_place",
    status_label="In place",
    evidence="Bastion with WebAuthn, ticket SEC-412",
)
ROTATION = replace(MFA, key="key_rotation", title="Keys rotated quarterly")
CREDENTIALS = replace(MFA, key="short_lived_credentials", title="Short-lived credentials")
AUDIT = replace(MFA, key="audit_and_recording", title="Access audit and recording")


def _accepted(control, expires_on, reason="Compensated by the vendor's VPN until the bastion"):
    return replace(
        control, risk_reason=reason, risk_expires_on=expires_on, risk_accepted_by="Tariq Haddad"
    )


def _missing(control):
    return replace(control, status="missing", status_label="Missing")


# (case, control, periods, today, expected problem or None when the control holds)
GAPS = [
    ("in place with evidence", MFA, PERIODS, TODAY, None),
    ("evidence note emptied", replace(MFA, evidence=""), PERIODS, TODAY, CONTROL_NO_EVIDENCE),
    ("evidence note blank", replace(MFA, evidence="  \n"), PERIODS, TODAY, CONTROL_NO_EVIDENCE),
    ("missing", _missing(MFA), PERIODS, TODAY, CONTROL_NOT_IN_PLACE),
    (
        "moved back to partial",
        replace(MFA, status="partial", status_label="Partial"),
        PERIODS,
        TODAY,
        CONTROL_NOT_IN_PLACE,
    ),
    (
        "not applicable is no substitute",
        replace(MFA, status="not_applicable", status_label="Not applicable"),
        PERIODS,
        TODAY,
        CONTROL_NOT_IN_PLACE,
    ),
    ("rotation every 90 days", ROTATION, PERIODS, TODAY, None),
    (
        "rotation every 91 days",
        ROTATION,
        replace(PERIODS, key_rotation_days=91),
        TODAY,
        CONTROL_ROTATION_TOO_LONG,
    ),
    (
        "rotation interval not recorded",
        ROTATION,
        replace(PERIODS, key_rotation_days=None),
        TODAY,
        CONTROL_NO_PERIOD,
    ),
    (
        "credential lifetime not recorded",
        CREDENTIALS,
        replace(PERIODS, credential_lifetime_hours=None),
        TODAY,
        CONTROL_NO_PERIOD,
    ),
    (
        "log retention not recorded",
        AUDIT,
        replace(PERIODS, log_retention_days=None),
        TODAY,
        CONTROL_NO_PERIOD,
    ),
    (
        "a period only matters to its own control",
        MFA,
        ControlPeriods(),
        TODAY,
        None,
    ),
    ("missing, accepted until today", _accepted(_missing(MFA), TODAY), PERIODS, TODAY, None),
    ("missing, accepted until tomorrow", _accepted(_missing(MFA), TOMORROW), PERIODS, TODAY, None),
    (
        "missing, acceptance ended yesterday",
        _accepted(_missing(MFA), YESTERDAY),
        PERIODS,
        TODAY,
        CONTROL_NOT_IN_PLACE,
    ),
    (
        "an acceptance without a reason is no acceptance",
        _accepted(_missing(MFA), TOMORROW, reason="  "),
        PERIODS,
        TODAY,
        CONTROL_NOT_IN_PLACE,
    ),
    (
        "no evidence, accepted",
        _accepted(replace(MFA, evidence=""), TOMORROW),
        PERIODS,
        TODAY,
        None,
    ),
    (
        "slow rotation, accepted",
        _accepted(ROTATION, TODAY),
        replace(PERIODS, key_rotation_days=180),
        TODAY,
        None,
    ),
]


@pytest.mark.parametrize(
    "control,periods,today,problem", [g[1:] for g in GAPS], ids=[g[0] for g in GAPS]
)
def test_control_gap(control, periods, today, problem):
    gap = control_gap(control, periods, today)
    assert (gap.problem if gap else None) == problem


def test_each_gap_names_the_control_and_why():
    messages = {
        "missing": control_gap(_missing(MFA), PERIODS, TODAY).message,
        "emptied": control_gap(replace(MFA, evidence=""), PERIODS, TODAY).message,
        "expired": control_gap(_accepted(_missing(MFA), YESTERDAY), PERIODS, TODAY).message,
        "slow": control_gap(ROTATION, replace(PERIODS, key_rotation_days=180), TODAY).message,
        "unrecorded": control_gap(AUDIT, ControlPeriods(), TODAY).message,
    }
    assert messages == {
        "missing": "Single entry with MFA — not in place (Missing)",
        "emptied": "Single entry with MFA — in place but without an evidence note",
        "expired": (
            "Single entry with MFA — not in place (Missing); "
            "its risk acceptance expired on 2026-05-31"
        ),
        "slow": (
            "Keys rotated quarterly — keys are rotated every 180 days; "
            "quarterly rotation means at most 90 days"
        ),
        "unrecorded": (
            "Access audit and recording — in place but its log retention (days) is not recorded"
        ),
    }
    expired = control_gap(_accepted(_missing(MFA), YESTERDAY), PERIODS, TODAY)
    assert expired.acceptance_expired_on == YESTERDAY


@pytest.mark.parametrize(
    "expires_on,today,current",
    [
        (TODAY, TODAY, True),
        (TOMORROW, TODAY, True),
        (YESTERDAY, TODAY, False),
        (None, TODAY, False),
    ],
)
def test_an_acceptance_holds_through_its_last_day(expires_on, today, current):
    assert risk_acceptance_current(expires_on, today) is current


def test_controls_state_lists_gaps_absent_controls_and_every_acceptance():
    required = (("mfa_entry", "Single entry with MFA"), ("egress_allow_list", "Egress allow-list"))
    controls = [
        _accepted(_missing(MFA), YESTERDAY),
        _accepted(replace(ROTATION, evidence=""), TOMORROW),
        _accepted(AUDIT, TOMORROW),  # in place as asked: nothing rests on this acceptance
    ]
    state = controls_state(controls, PERIODS, TODAY, required=required)
    assert [(g.key, g.problem) for g in state.gaps] == [
        ("mfa_entry", CONTROL_NOT_IN_PLACE),
        ("egress_allow_list", CONTROL_ABSENT),
    ]
    assert state.gaps[1].message == "Egress allow-list — not recorded in the matrix"
    assert not state.holds
    assert [(a.key, a.expired, a.relied_on) for a in state.acceptances] == [
        ("mfa_entry", True, True),
        ("key_rotation", False, True),
        ("audit_and_recording", False, False),
    ]
    assert state.acceptances[0].message == (
        "Single entry with MFA — risk acceptance by Tariq Haddad expired on 2026-05-31: "
        "Compensated by the vendor's VPN until the bastion"
    )
    assert state.acceptances[1].message == (
        "Keys rotated quarterly — risk accepted by Tariq Haddad until 2026-06-02: "
        "Compensated by the vendor's VPN until the bastion"
    )
    assert controls_state([MFA], PERIODS, TODAY, required=required[:1]).holds


def test_every_default_control_is_required():
    state = controls_state([], PERIODS, TODAY)
    assert [g.key for g in state.gaps] == [
        "mfa_entry",
        "short_lived_credentials",
        "secrets_in_kms",
        "egress_allow_list",
        "audit_and_recording",
        "key_rotation",
        "revocation_on_leaving",
    ]


# (periods given, fields refused)
PERIODS_INPUT = [
    ({"key_rotation_days": 1, "credential_lifetime_hours": 1, "log_retention_days": 1}, set()),
    (
        {"key_rotation_days": 365, "credential_lifetime_hours": 168, "log_retention_days": 3650},
        set(),
    ),
    ({"key_rotation_days": None, "log_retention_days": None}, set()),
    ({"key_rotation_days": 0}, {"key_rotation_days"}),
    ({"key_rotation_days": -90}, {"key_rotation_days"}),
    ({"key_rotation_days": 366}, {"key_rotation_days"}),
    ({"credential_lifetime_hours": 169}, {"credential_lifetime_hours"}),
    ({"log_retention_days": 3651}, {"log_retention_days"}),
    ({"log_retention_days": 0}, {"log_retention_days"}),
    ({"key_rotation_days": "90"}, {"key_rotation_days"}),
    ({"key_rotation_days": 90.5}, {"key_rotation_days"}),
    ({"key_rotation_days": True}, {"key_rotation_days"}),
    ({"password_rotation_days": 30}, {"password_rotation_days"}),
]


@pytest.mark.parametrize("periods,refused", PERIODS_INPUT)
def test_period_bounds(periods, refused):
    assert set(period_errors(periods)) == refused


# (control, reason, expires_on, refused fields)
ACCEPTANCES = [
    (_missing(MFA), "Vendor VPN meanwhile", TOMORROW, set()),
    (_missing(MFA), "Vendor VPN meanwhile", TODAY + timedelta(days=365), set()),
    (_missing(MFA), "Vendor VPN meanwhile", TODAY + timedelta(days=366), {"expires_on"}),
    (_missing(MFA), "Vendor VPN meanwhile", TODAY, {"expires_on"}),
    (_missing(MFA), "Vendor VPN meanwhile", YESTERDAY, {"expires_on"}),
    (_missing(MFA), "Vendor VPN meanwhile", None, {"expires_on"}),
    (_missing(MFA), "Vendor VPN meanwhile", "2026-07-01", {"expires_on"}),
    (_missing(MFA), "Vendor VPN meanwhile", datetime(2026, 7, 1), {"expires_on"}),
    (_missing(MFA), "   ", TOMORROW, {"reason"}),
    (replace(MFA, evidence=""), "Evidence follows", TOMORROW, set()),
    (MFA, "Belt and braces", TOMORROW, {"control"}),
]


@pytest.mark.parametrize("control,reason,expires_on,refused", ACCEPTANCES)
def test_what_a_risk_acceptance_needs(control, reason, expires_on, refused):
    errors = risk_acceptance_errors(
        control=control, periods=PERIODS, reason=reason, expires_on=expires_on, today=TODAY
    )
    assert set(errors) == refused


# The entry point's MFA on the tech lead's acceptance alone: legal must accept it too
# (docs/rules/access.md#access-controls). (case, controls, raised)
ENTRY_MFA = [
    ("in place", [MFA], False),
    ("missing, not accepted: a gap of the gate instead", [_missing(MFA)], False),
    ("missing, accepted until today", [_accepted(_missing(MFA), TODAY)], True),
    (
        "missing, accepted until yesterday: a gap again",
        [_accepted(_missing(MFA), YESTERDAY)],
        False,
    ),
    ("in place without evidence, accepted", [_accepted(replace(MFA, evidence=""), TOMORROW)], True),
    ("in place, an acceptance left over", [_accepted(MFA, TOMORROW)], False),
    ("another control accepted", [MFA, _accepted(_missing(ROTATION), TOMORROW)], False),
    ("no MFA control at all", [ROTATION], False),
]


@pytest.mark.parametrize(
    "controls,raised", [c[1:] for c in ENTRY_MFA], ids=[c[0] for c in ENTRY_MFA]
)
def test_the_entry_points_mfa_on_a_risk_acceptance_alone(controls, raised):
    found = entry_mfa_acceptance(controls, PERIODS, TODAY)
    assert (found is not None) == raised
    if found is not None:
        assert "Tariq Haddad" in found.message and "legal must accept" in found.message


def test_legal_accepts_the_tech_leads_terms_as_they_stand():
    """The facts name the control's status and the acceptance: another expiry, reason or
    status is another decision for legal."""
    base = _accepted(_missing(MFA), TOMORROW)
    first = entry_mfa_acceptance([base], PERIODS, TODAY)
    assert first is not None
    for changed in (
        replace(base, risk_expires_on=TOMORROW + timedelta(days=30)),
        replace(base, risk_reason="Another reason"),
        replace(base, status="partial", status_label="Partial"),
        replace(base, risk_accepted_by="Someone Else"),
    ):
        again = entry_mfa_acceptance([changed], PERIODS, TODAY)
        assert again is not None and again.facts != first.facts

"""Each gate of docs/rules/approvals.md, held and not held, on plain data (no database)."""

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from apps.approvals.gates import (
    AssessmentFacts,
    ChecklistFacts,
    DemandFitFacts,
    GateInputs,
    MatrixFacts,
    OfferMinimumFacts,
    SpecFacts,
    VerificationFacts,
    evaluate_gates,
    open_gates,
)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)

HELD = GateInputs(
    now=NOW,
    max_age_days=30,
    spec=SpecFacts(confirmed=True, url="/offers/1/spec/"),
    offer_minimum=OfferMinimumFacts(count=3, required=3),
    checklist=ChecklistFacts(exists=True),
    assessment=AssessmentFacts(
        exists=True, signed_off=True, review_by=date(2026, 8, 1), exit_answered=True
    ),
    matrix=MatrixFacts(exists=True, reviewed=True, review_by=date(2026, 8, 1)),
    verification=VerificationFacts(
        exists=True,
        verdict="verified",
        verdict_label="Verified",
        verdict_passing=True,
        measured_at=NOW - timedelta(days=2),
    ),
)


def _gate(inputs, key):
    return next(g for g in evaluate_gates(inputs) if g.key == key)


def test_every_gate_holds_on_a_complete_offer():
    gates = evaluate_gates(HELD)
    assert [g.key for g in gates] == [
        "declared_spec",
        "offer_minimum",
        "red_flags",
        "assessment",
        "access_matrix",
        "verification",
        "endpoint_security",
        "exit_readiness",
        "hardware_compliance",
        "demand_fit",
    ]
    assert open_gates(gates) == []
    assert _gate(HELD, "declared_spec").fix_url == "/offers/1/spec/"


# (gate key, change to the held inputs, words the reason must contain)
NOT_HELD = [
    ("declared_spec", {"spec": SpecFacts(False, ("driver version",))}, "driver version"),
    ("offer_minimum", {"offer_minimum": OfferMinimumFacts(2, 3)}, "2 of 3"),
    ("red_flags", {"checklist": ChecklistFacts(exists=False)}, "No clause checklist"),
    (
        "red_flags",
        {"checklist": ChecklistFacts(True, red_flags=("5. Deletion of data",))},
        "5. Deletion of data",
    ),
    (
        "red_flags",
        {"checklist": ChecklistFacts(True, not_reviewed=("9. Prepayment",))},
        "Not reviewed yet: 9. Prepayment",
    ),
    ("assessment", {"assessment": AssessmentFacts(exists=False)}, "No data-export assessment"),
    ("assessment", {"assessment": AssessmentFacts(True, signed_off=False)}, "not signed off"),
    (
        "assessment",
        {
            "assessment": AssessmentFacts(
                True, signed_off=True, expired=True, review_by=date(2026, 5, 1)
            )
        },
        "2026-05-01",
    ),
    ("access_matrix", {"matrix": MatrixFacts(exists=False)}, "No access matrix"),
    ("access_matrix", {"matrix": MatrixFacts(True, reviewed=False)}, "not reviewed"),
    (
        "access_matrix",
        {"matrix": MatrixFacts(True, reviewed=True, violations=("Audit role writes data",))},
        "Audit role writes data",
    ),
    (
        "access_matrix",
        {"matrix": MatrixFacts(True, reviewed=True, expired=True, review_by=date(2026, 5, 1))},
        "expired on 2026-05-01",
    ),
    ("verification", {"verification": VerificationFacts(exists=False)}, "No spec verification"),
    (
        "verification",
        {"verification": VerificationFacts(True, "failed", "Failed", False, NOW)},
        "did not pass (Failed)",
    ),
    (
        "verification",
        {
            "verification": VerificationFacts(
                True, "verified", "Verified", True, NOW - timedelta(days=31)
            )
        },
        "31 days old (limit 30)",
    ),
    (
        "verification",
        {
            "verification": VerificationFacts(
                True, "verified", "Verified", True, NOW, blocked=("Bundle 1a2b was run elsewhere",)
            )
        },
        "cannot be confirmed: Bundle 1a2b was run elsewhere",
    ),
    (
        "verification",
        {
            "verification": VerificationFacts(
                True, "failed", "Failed", False, NOW, blocked=("Bundle 1a2b was run elsewhere",)
            )
        },
        "cannot be confirmed: Bundle 1a2b was run elsewhere",
    ),
    (
        "exit_readiness",
        {
            "assessment": AssessmentFacts(
                True,
                signed_off=True,
                exit_gaps=("Can all data be exported in full? (answered 'no')",),
            )
        },
        "must be 'yes' with its evidence: Can all data be exported in full? (answered 'no')",
    ),
    ("exit_readiness", {"assessment": AssessmentFacts(exists=False)}, "No assessment"),
    (
        "hardware_compliance",
        {
            "assessment": AssessmentFacts(
                True,
                signed_off=True,
                hardware_gaps=("Are the hardware's export-control status ... (not answered)",),
            )
        },
        "cannot be skipped or waived (export-control law)",
    ),
    ("hardware_compliance", {"assessment": AssessmentFacts(exists=False)}, "No assessment"),
    (
        "endpoint_security",
        {
            "verification": replace(
                HELD.verification,
                security_failed=("Request without a token is refused (answered HTTP 200)",),
            )
        },
        "Failed: Request without a token is refused (answered HTTP 200).",
    ),
    (
        "endpoint_security",
        {
            "verification": replace(
                HELD.verification,
                security_missing=("Requests over the rate limit are refused (Not run)",),
            )
        },
        "Not measured: Requests over the rate limit are refused (Not run).",
    ),
    (
        "demand_fit",
        {
            "demand_fit": DemandFitFacts(
                exists=True, meets=False, shortfalls=("Needs 9 whole nodes of 8 cards.",)
            )
        },
        "Cannot meet the compute demand: Needs 9 whole nodes of 8 cards.",
    ),
    (
        "demand_fit",
        {"demand_fit": DemandFitFacts(exists=True, meets=False, error="unknown preset")},
        "cannot be sized: unknown preset",
    ),
]


@pytest.mark.parametrize(
    "key,change,words", NOT_HELD, ids=[f"{c[0]}-{i}" for i, c in enumerate(NOT_HELD)]
)
def test_each_gate_not_held_says_why(key, change, words):
    inputs = replace(HELD, **change)
    gate = _gate(inputs, key)
    assert gate.held is False
    assert words in gate.reason
    others = [g for g in evaluate_gates(inputs) if g.key != key]
    assessment_gates = ("assessment", "exit_readiness", "hardware_compliance")
    # Without a verification, its endpoint probes are missing too.
    shared = (
        ("endpoint_security",) if change.get("verification") == VerificationFacts(False) else ()
    )
    assert all(g.held for g in others if g.key not in assessment_gates + shared)


def test_the_endpoint_gate_names_the_probe_not_run_but_holds():
    verification = replace(HELD.verification, security_not_run=("Token without the permission",))
    gate = _gate(replace(HELD, verification=verification), "endpoint_security")
    assert gate.held
    assert "Every required probe of the endpoint passed." in gate.reason
    assert "Not run: Token without the permission." in gate.reason


def test_the_demand_fit_holds_without_a_demand_and_when_met():
    assert "No compute demand saved" in _gate(HELD, "demand_fit").reason
    met = replace(HELD, demand_fit=DemandFitFacts(exists=True, meets=True))
    assert _gate(met, "demand_fit").held


def test_fewer_than_three_offers_hold_with_a_waiver_and_show_it():
    inputs = replace(
        HELD, offer_minimum=OfferMinimumFacts(2, 3, waiver="Only two vendors hold licences")
    )
    gate = _gate(inputs, "offer_minimum")
    assert gate.held
    assert gate.waivers == ("Only two vendors hold licences",)
    assert "waived" in gate.reason


def test_waived_red_flags_hold_and_are_listed():
    inputs = replace(
        HELD, checklist=ChecklistFacts(True, waived=("3. Card model locked: accepted (lena)",))
    )
    gate = _gate(inputs, "red_flags")
    assert gate.held
    assert gate.waivers == ("3. Card model locked: accepted (lena)",)


def test_verification_exactly_at_the_age_limit_still_holds():
    edge = replace(HELD.verification, measured_at=NOW - timedelta(days=30))
    assert _gate(replace(HELD, verification=edge), "verification").held
    over = replace(HELD.verification, measured_at=NOW - timedelta(days=30, seconds=1))
    assert not _gate(replace(HELD, verification=over), "verification").held


def test_a_findings_verdict_passes_when_the_evidence_app_says_so():
    findings = replace(HELD.verification, verdict="findings", verdict_label="Findings")
    assert _gate(replace(HELD, verification=findings), "verification").held

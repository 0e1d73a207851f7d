"""The contract-term checks, one table per check, on plain values."""

from decimal import Decimal as D

import pytest

from apps.contracts import terms
from apps.contracts.terms import CaseNeeds, Check, Severity, TermValues

BILLING = frozenset({"per_second", "per_hour", "per_month", "reserved"})


def checks(values: TermValues, needs: CaseNeeds = CaseNeeds()) -> dict[Check, Severity]:
    return {f.check: f.severity for f in terms.findings(values, needs)}


@pytest.mark.parametrize(
    "export_days,exit_days,expected",
    [
        (30, 45, {Check.EXPORT_WINDOW_SHORT: Severity.BAD}),  # shorter than the exit plan
        (44, 45, {Check.EXPORT_WINDOW_SHORT: Severity.BAD}),
        (0, 1, {Check.EXPORT_WINDOW_SHORT: Severity.BAD}),
        (45, 45, {}),  # exactly the exit plan is enough
        (90, 45, {}),
        (None, 45, {Check.EXPORT_WINDOW_NOT_STATED: Severity.WARN}),
        (10, None, {}),  # the case states no exit window: nothing to check against
        (None, None, {}),
    ],
)
def test_export_window_against_the_exit_plan(export_days, exit_days, expected):
    found = checks(TermValues(data_export_days=export_days), CaseNeeds(exit_window_days=exit_days))
    assert found == expected


def test_export_window_finding_names_both_numbers():
    (finding,) = terms.findings(TermValues(data_export_days=30), CaseNeeds(exit_window_days=45))
    assert finding.term == "data_export_days"
    assert "30 days" in finding.message and "45 days" in finding.message
    assert "hard requirement" in finding.message


@pytest.mark.parametrize(
    "sla,need,expected",
    [
        (D("99.5"), D("99.9"), {Check.SLA_BELOW_NEED: Severity.BAD}),
        (D("99.89"), D("99.9"), {Check.SLA_BELOW_NEED: Severity.BAD}),
        (D("99.9"), D("99.9"), {}),
        (D("99.99"), D("99.9"), {}),
        (None, D("99.9"), {Check.SLA_NOT_STATED: Severity.WARN}),
        (D("95"), None, {}),
    ],
)
def test_sla_against_the_availability_need(sla, need, expected):
    found = checks(TermValues(sla_availability_pct=sla), CaseNeeds(availability_need_pct=need))
    assert found == expected


@pytest.mark.parametrize(
    "ratio,ordinary,premium,expected",
    [
        (D("40"), D("40"), D("0"), {}),
        (D("50"), D("40"), D("0.25"), {}),  # below the reported range
        (D("52"), D("40"), D("0.3"), {Check.PREMIUM_IN_RANGE: Severity.WARN}),  # its low end
        (D("60"), D("40"), D("0.5"), {Check.PREMIUM_IN_RANGE: Severity.WARN}),  # its high end
        (D("61"), D("40"), D("0.525"), {Check.PREMIUM_ABOVE_RANGE: Severity.BAD}),
        (D("100"), D("30"), D("2.333333"), {Check.PREMIUM_ABOVE_RANGE: Severity.BAD}),
        (D("20"), D("40"), D("-0.5"), {}),  # asks less than of ordinary customers
        (D("50"), D("0"), None, {}),  # ordinary customers prepay nothing: no ratio
        (D("50"), None, None, {}),
        (None, D("40"), None, {}),
    ],
)
def test_prepayment_premium_against_the_reported_range(ratio, ordinary, premium, expected):
    values = TermValues(prepayment_pct=ratio, ordinary_prepayment_pct=ordinary)
    computed = terms.prepayment_premium(values)
    if premium is None:
        assert computed is None
    else:
        assert computed.quantize(D("0.000001")) == premium.quantize(D("0.000001"))
    assert checks(values) == expected


def test_premium_outside_the_range_says_so_with_the_numbers():
    values = TermValues(prepayment_pct=D("80"), ordinary_prepayment_pct=D("40"))
    (finding,) = terms.findings(values, CaseNeeds())
    assert finding.check is Check.PREMIUM_ABOVE_RANGE
    assert "100 %" in finding.message and "30 %–50 %" in finding.message
    assert "finance and risk" in finding.message


@pytest.mark.parametrize(
    "image_format,penalty,expected",
    [
        ("oci", None, {}),
        ("vm_disk", D("0"), {}),
        ("proprietary", None, {Check.IMAGE_NOT_PORTABLE: Severity.BAD}),
        ("none", None, {Check.IMAGE_NOT_PORTABLE: Severity.BAD}),
        ("", D("15"), {Check.EXIT_PENALTY: Severity.WARN}),
        ("", D("20"), {Check.EXIT_PENALTY: Severity.WARN}),
        ("", D("20.5"), {Check.EXIT_PENALTY_HIGH: Severity.WARN}),
        (
            "none",
            D("5"),
            {Check.IMAGE_NOT_PORTABLE: Severity.BAD, Check.EXIT_PENALTY: Severity.WARN},
        ),
    ],
)
def test_exit_terms(image_format, penalty, expected):
    assert checks(TermValues(image_format=image_format, exit_penalty_pct=penalty)) == expected


@pytest.mark.parametrize(
    "contract,offer,expected",
    [
        ("per_hour", "per_second", {Check.BILLING_DIFFERS: Severity.WARN}),
        ("per_hour", "per_hour", {}),
        ("per_hour", "", {}),
        ("", "per_hour", {}),
    ],
)
def test_billing_basis_against_the_offer(contract, offer, expected):
    assert (
        checks(TermValues(billing_basis=contract), CaseNeeds(offer_billing_basis=offer)) == expected
    )


@pytest.mark.parametrize(
    "contract,offer_ratio,expected",
    [
        (D("30"), D("0.3"), {}),
        (D("30"), D("0.3000"), {}),
        (D("30"), D("0.25"), {Check.PREPAYMENT_DIFFERS: Severity.WARN}),
        (D("30"), None, {}),
        (None, D("0.25"), {}),
    ],
)
def test_prepayment_against_the_offer(contract, offer_ratio, expected):
    found = checks(
        TermValues(prepayment_pct=contract), CaseNeeds(offer_prepayment_ratio=offer_ratio)
    )
    assert found == expected


def test_findings_put_failures_before_decisions():
    values = TermValues(data_export_days=10, exit_penalty_pct=D("10"), image_format="none")
    found = terms.findings(values, CaseNeeds(exit_window_days=30))
    assert [f.severity for f in found] == [Severity.BAD, Severity.BAD, Severity.WARN]


@pytest.mark.parametrize(
    "raw,bad",
    [
        ({"sla_availability_pct": D("100.1")}, "sla_availability_pct"),
        ({"sla_availability_pct": -1}, "sla_availability_pct"),
        ({"sla_availability_pct": "abc"}, "sla_availability_pct"),
        ({"sla_availability_pct": "NaN"}, "sla_availability_pct"),
        ({"exit_penalty_pct": True}, "exit_penalty_pct"),
        ({"maintenance_notice_hours": -1}, "maintenance_notice_hours"),
        ({"data_deletion_days": 1.5}, "data_deletion_days"),
        ({"data_export_days": "30"}, "data_export_days"),
        ({"image_format": "tarball"}, "image_format"),
        ({"billing_basis": "per_fortnight"}, "billing_basis"),
        ({"penalty": 3}, "penalty"),
    ],
)
def test_term_errors_name_the_bad_term(raw, bad):
    assert set(terms.term_errors(raw, billing_choices=BILLING)) == {bad}


@pytest.mark.parametrize(
    "raw",
    [
        {"sla_availability_pct": D("0"), "exit_penalty_pct": D("100")},
        {"maintenance_notice_hours": 0, "data_deletion_days": 30, "data_export_days": 0},
        {"image_format": "oci", "billing_basis": "per_second"},
        {"sla_availability_pct": None, "image_format": "", "data_export_days": None},
    ],
)
def test_term_errors_accept_the_limits_and_blanks(raw):
    assert terms.term_errors(raw, billing_choices=BILLING) == {}


def test_every_term_stands_beside_a_default_template_item():
    keys = {
        "sla",
        "planned_maintenance",
        "data_deletion",
        "termination_exit",
        "prepayment",
        "billing_basis",
    }
    assert {term.item_key for term in terms.TERMS} == keys

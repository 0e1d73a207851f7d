"""Accountable waivers, table-tested on plain data: expiry, second legal confirmation,
withdrawal and the reason. (Evidence files are judged by the project's upload policy.)"""

from datetime import date, timedelta

import pytest

from apps.contracts.rules import (
    WAIVER_DAYS,
    BlockKind,
    ItemState,
    Verdict,
    WaiverIssue,
    WaiverState,
    blocking_items,
    confirm_error,
    default_expiry,
    flag_label,
    item_verdict,
    summarise,
    waive_error,
    waiver_expired,
    waiver_grant_errors,
    waiver_issue,
    withdraw_error,
)

TODAY = date(2026, 5, 10)
YESTERDAY = TODAY - timedelta(days=1)
TOMORROW = TODAY + timedelta(days=1)
GRANTER, SECOND = 7, 8


def waiver(*, expires_on=TOMORROW, confirmed=False, lapsed=False, status="missing", by=GRANTER):
    return WaiverState(
        status, lapsed=lapsed, expires_on=expires_on, confirmed=confirmed, waived_by=by
    )


def item(*waivers, status="missing", high=False, key="sla"):
    return ItemState(3, key, "Hardware lock", status, True, tuple(waivers), 42, high_severity=high)


def test_the_default_expiry_is_ninety_days_after_the_grant():
    assert WAIVER_DAYS == 90
    assert default_expiry(date(2026, 1, 1)) == date(2026, 4, 1)


# (expires_on, today, expired): in force up to and including its expiry date.
EXPIRY = [
    (TODAY, TODAY, False),  # expiring today: still in force today
    (YESTERDAY, TODAY, True),  # expired yesterday: open again
    (TOMORROW, TODAY, False),
    (None, TODAY, False),  # no expiry date on plain data
    (None, None, False),
]


@pytest.mark.parametrize("expires_on,today,expired", EXPIRY)
def test_waiver_expired(expires_on, today, expired):
    assert waiver_expired(expires_on, today) is expired


def test_an_expiry_date_is_never_judged_without_today():
    with pytest.raises(ValueError):
        waiver_expired(TODAY, None)


# (item, verdict today, issue): what a waiver at the item's status does for it.
VERDICTS = [
    (item(waiver(expires_on=TODAY)), Verdict.WAIVED, None),
    (item(waiver(expires_on=YESTERDAY)), Verdict.RED_FLAG, (WaiverIssue.EXPIRED, YESTERDAY)),
    # Renewed after expiry: the new waiver clears it.
    (item(waiver(expires_on=YESTERDAY), waiver(expires_on=TOMORROW)), Verdict.WAIVED, None),
    # Of several expired waivers, the latest expiry is named.
    (
        item(waiver(expires_on=YESTERDAY - timedelta(days=30)), waiver(expires_on=YESTERDAY)),
        Verdict.RED_FLAG,
        (WaiverIssue.EXPIRED, YESTERDAY),
    ),
    # High severity: unconfirmed counts for nothing; confirmed counts.
    (item(waiver(), high=True), Verdict.RED_FLAG, (WaiverIssue.UNCONFIRMED, None)),
    (item(waiver(confirmed=True), high=True), Verdict.WAIVED, None),
    (item(waiver(), high=False), Verdict.WAIVED, None),
    # Confirmed but expired: expired.
    (
        item(waiver(confirmed=True, expires_on=YESTERDAY), high=True),
        Verdict.RED_FLAG,
        (WaiverIssue.EXPIRED, YESTERDAY),
    ),
    # A renewal awaiting confirmation is named before the expired waiver it replaces.
    (
        item(waiver(confirmed=True, expires_on=YESTERDAY), waiver(), high=True),
        Verdict.RED_FLAG,
        (WaiverIssue.UNCONFIRMED, None),
    ),
    # Withdrawn (lapsed): no waiver, no issue; an expired withdrawn waiver is not named.
    (item(waiver(lapsed=True)), Verdict.RED_FLAG, None),
    (item(waiver(lapsed=True, expires_on=YESTERDAY)), Verdict.RED_FLAG, None),
    (item(waiver(lapsed=True, confirmed=True), high=True), Verdict.RED_FLAG, None),
    # Status moved to the other red status: the waiver is bound to the one it waived.
    (item(waiver(status="needs_negotiation")), Verdict.RED_FLAG, None),
    # Status moved back to acceptable: nothing to waive, an expired waiver changes nothing.
    (item(waiver(expires_on=YESTERDAY), status="acceptable"), Verdict.ACCEPTABLE, None),
    (item(), Verdict.RED_FLAG, None),
]


@pytest.mark.parametrize("state,verdict,issue", VERDICTS)
def test_verdict_and_waiver_issue(state, verdict, issue):
    assert item_verdict(state, today=TODAY) is verdict
    assert waiver_issue(state, today=TODAY) == issue


def test_blocking_items_carry_the_waiver_issue_and_the_label_says_it():
    expired = item(waiver(expires_on=YESTERDAY))
    pending = ItemState(4, "quota", "Quota", "missing", True, (waiver(),), 43, high_severity=True)
    plain = ItemState(5, "billing", "Billing basis", "needs_negotiation", True, (), 44)
    flags = blocking_items([expired, pending, plain], today=TODAY)
    assert [(f.kind, f.waiver_issue) for f in flags] == [
        (BlockKind.RED_FLAG, WaiverIssue.EXPIRED),
        (BlockKind.RED_FLAG, WaiverIssue.UNCONFIRMED),
        (BlockKind.RED_FLAG, None),
    ]
    assert [flag_label(f) for f in flags] == [
        "3. Hardware lock (the waiver expired on 2026-05-09)",
        "4. Quota (the waiver awaits a second legal confirmation)",
        "5. Billing basis",
    ]
    summary = summarise([expired, pending, plain], today=TODAY)
    assert not summary.clear and len(summary.open_red_flags) == 3


# (item, fragment of why it cannot be waived now, or None)
WAIVE = [
    (item(), None),
    (item(waiver(expires_on=YESTERDAY)), None),  # renewal after expiry
    (item(waiver(expires_on=TODAY)), "already waived"),
    (item(waiver(), high=True), "awaiting a second legal confirmation"),
    (item(waiver(lapsed=True), high=True), None),  # withdrawn: may be waived again
    (item(key="authorization_documents"), "cannot be waived: export-control law"),
    (item(key="authorization_documents", high=True), "cannot be waived: export-control law"),
]


@pytest.mark.parametrize("state,fragment", WAIVE)
def test_waive_error(state, fragment):
    message = waive_error(state, today=TODAY)
    assert (message is None) if fragment is None else (fragment in message)


# (reason, expires_on, the fields refused)
GRANTS = [
    ("Credits suffice", None, set()),
    ("Credits suffice", TODAY, set()),  # today is not in the past
    ("Credits suffice", YESTERDAY, {"expires_on"}),
    ("", None, {"reason"}),
    ("   \n ", TOMORROW, {"reason"}),  # an emptied reason is no reason
    ("", YESTERDAY, {"reason", "expires_on"}),
]


@pytest.mark.parametrize("reason,expires_on,refused", GRANTS)
def test_waiver_grant_errors(reason, expires_on, refused):
    errors = waiver_grant_errors(reason=reason, expires_on=expires_on, today=TODAY)
    assert set(errors) == refused
    if "expires_on" in errors:
        assert "2026-05-09 is in the past" in errors["expires_on"]


# (item, waiver, actor, note, fragment or None)
CONFIRMS = [
    (item(high=True), waiver(), SECOND, "Read the letter", None),
    (item(high=True), waiver(expires_on=TODAY), SECOND, "Read it", None),  # expiring today
    (item(high=True), waiver(), GRANTER, "Mine", "You granted this waiver"),
    (item(high=True), waiver(), SECOND, "  ", "Say why you confirm"),
    (item(high=True), waiver(), SECOND, "", "Say why you confirm"),
    (item(high=True), waiver(lapsed=True), SECOND, "Late", "no longer in force"),
    (item(high=True), waiver(expires_on=YESTERDAY), SECOND, "Late", "expired on 2026-05-09"),
    (item(high=True), waiver(confirmed=True), SECOND, "Again", "already confirmed"),
    (item(high=False), waiver(), SECOND, "Why not", "is not high-severity"),
    (
        item(high=True, status="needs_negotiation"),
        waiver(),
        SECOND,
        "Status moved",
        "no longer in force",
    ),
]


@pytest.mark.parametrize("state,given,actor,note,fragment", CONFIRMS)
def test_confirm_error(state, given, actor, note, fragment):
    message = confirm_error(state, given, actor_id=actor, note=note, today=TODAY)
    assert (message is None) if fragment is None else (fragment in message), message


@pytest.mark.parametrize(
    "given,reason,fragment",
    [
        (waiver(), "The vendor fixed the clause", None),
        (waiver(expires_on=YESTERDAY), "Tidy up", None),
        (waiver(lapsed=True), "Again", "nothing to withdraw"),
        (waiver(), " ", "Say why the waiver is withdrawn"),
    ],
)
def test_withdraw_error(given, reason, fragment):
    message = withdraw_error(given, reason=reason)
    assert (message is None) if fragment is None else (fragment in message)

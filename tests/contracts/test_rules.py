"""The red-flag rules of docs/rules/contracts.md, table-tested on plain data."""

import pytest

from apps.contracts.rules import (
    BlockKind,
    ItemState,
    Verdict,
    WaiverState,
    blocking_items,
    item_verdict,
    status_error,
    summarise,
    waive_error,
)


def state(status, *, waivers=(), required=True, number=1, key="sla"):
    return ItemState(number, key, key.title(), status, required, tuple(waivers))


MISSING_WAIVER = WaiverState("missing")
NEGOTIATION_WAIVER = WaiverState("needs_negotiation")
LAPSED = WaiverState("missing", lapsed=True)

# (status, waivers, verdict) — docs/rules/contracts.md: missing or unacceptable items are red flags.
VERDICTS = [
    ("", (), Verdict.NOT_REVIEWED),
    ("acceptable", (), Verdict.ACCEPTABLE),
    ("not_applicable", (), Verdict.NOT_APPLICABLE),
    ("missing", (), Verdict.RED_FLAG),
    ("needs_negotiation", (), Verdict.RED_FLAG),
    ("missing", (MISSING_WAIVER,), Verdict.WAIVED),
    ("needs_negotiation", (NEGOTIATION_WAIVER,), Verdict.WAIVED),
    # A waiver is bound to the status it waived: a different red status is a new risk.
    ("needs_negotiation", (MISSING_WAIVER,), Verdict.RED_FLAG),
    ("missing", (NEGOTIATION_WAIVER,), Verdict.RED_FLAG),
    # A lapsed waiver never revives, even when the status returns to the one waived.
    ("missing", (LAPSED,), Verdict.RED_FLAG),
    ("missing", (LAPSED, MISSING_WAIVER), Verdict.WAIVED),
    # A waiver left on an item that is now fine changes nothing.
    ("acceptable", (MISSING_WAIVER,), Verdict.ACCEPTABLE),
    ("", (MISSING_WAIVER,), Verdict.NOT_REVIEWED),
]


@pytest.mark.parametrize("status,waivers,verdict", VERDICTS)
def test_item_verdict(status, waivers, verdict):
    assert item_verdict(state(status, waivers=waivers)) is verdict


def test_blocking_items_lists_red_flags_then_unreviewed_in_item_order():
    items = [
        state("", number=3, key="c"),
        state("missing", number=2, key="b"),
        state("acceptable", number=1, key="a"),
        state("needs_negotiation", number=4, key="d", waivers=[NEGOTIATION_WAIVER]),
        state("needs_negotiation", number=5, key="e"),
    ]
    flags = blocking_items(items)
    assert [(f.key, f.kind) for f in flags] == [
        ("b", BlockKind.RED_FLAG),
        ("e", BlockKind.RED_FLAG),
        ("c", BlockKind.NOT_REVIEWED),
    ]


def test_summary_of_a_clear_checklist():
    items = [
        state("acceptable", key="a", number=1),
        state("not_applicable", key="b", number=2, required=False),
        state("missing", key="c", number=3, waivers=[MISSING_WAIVER]),
    ]
    summary = summarise(items)
    assert summary.clear
    assert (summary.total, summary.reviewed) == (3, 3)
    assert [i.key for i in summary.waived] == ["c"]


def test_an_unreviewed_item_alone_keeps_the_checklist_from_being_clear():
    summary = summarise([state("acceptable", key="a"), state("", key="b", number=2)])
    assert not summary.clear
    assert summary.open_red_flags == ()
    assert [f.key for f in summary.not_reviewed] == ["b"]


@pytest.mark.parametrize(
    "status,required,fragment",
    [
        ("acceptable", True, None),
        ("", True, None),
        ("not_applicable", False, None),
        ("not_applicable", True, "required"),
        ("bogus", False, "'bogus' is not a status"),
        ("Acceptable", True, "is not a status"),
    ],
)
def test_status_error(status, required, fragment):
    message = status_error(status, required=required)
    if fragment is None:
        assert message is None
    else:
        assert fragment in message


@pytest.mark.parametrize(
    "status,waivers,fragment",
    [
        ("missing", (), None),
        ("needs_negotiation", (LAPSED,), None),
        ("acceptable", (), "is not a red flag (status: acceptable)"),
        ("not_applicable", (), "is not a red flag"),
        ("", (), "status: not reviewed"),
        ("missing", (MISSING_WAIVER,), "already waived"),
    ],
)
def test_waive_error(status, waivers, fragment):
    message = waive_error(state(status, waivers=waivers))
    if fragment is None:
        assert message is None
    else:
        assert fragment in message

"""The decision aid as a checked step, on plain data: contradictory answers on data
leaving the country, and the status of the mechanism the aid names.

Personal Information Protection Law of the PRC, Art. 38–40: personal information
goes abroad only through a security assessment, a filed standard contract or a
certification.
"""

from datetime import date

import pytest

from apps.assessments.rules import (
    Answer,
    Mechanism,
    MechanismStatus,
    PrcAid,
    StatedStatus,
    export_contradiction,
    mechanism_check,
    mechanism_status_errors,
    stated_fields,
)

TODAY = date(2026, 6, 1)
SA = Mechanism.SECURITY_ASSESSMENT
SCC = Mechanism.STANDARD_CONTRACT_OR_CERTIFICATION
DONE, IN_PROGRESS, NOT_NEEDED = (
    MechanismStatus.DONE,
    MechanismStatus.IN_PROGRESS,
    MechanismStatus.NOT_NEEDED,
)


def aid(mechanism: str) -> PrcAid:
    return PrcAid(mechanism, "because", None, (), "cn-2024-03-22")


# --- Contradiction --------------------------------------------------------------------

LEAVES = "“Must raw training or inference data be sent abroad?” answered 'Yes'"
PI = "“Does the training or inference data contain personal information?” answered 'Yes'"
NOT_DONE = "“Has the required data-export assessment been completed?” answered 'No'"
NOT_ANSWERED = "“Has the required data-export assessment been completed?” not answered"
IMPORTANT = "“Does it contain important data (as notified or published by the authorities)?”"


@pytest.mark.parametrize(
    "given,named",
    [
        # Personal information, assessment not completed, raw data must leave: contradiction.
        (
            dict(
                raw_data_leaves="yes", personal_information="yes", export_assessment_completed="no"
            ),
            [LEAVES, PI, NOT_DONE],
        ),
        (
            dict(raw_data_leaves="yes", important_data="yes", export_assessment_completed="no"),
            [LEAVES, IMPORTANT, NOT_DONE],
        ),
        # The assessment question left blank still leaves the data-stays constraint.
        (dict(raw_data_leaves="yes", personal_information="yes"), [LEAVES, PI, NOT_ANSWERED]),
        # Consistent: raw data stays; or the assessment is completed; or nothing sensitive.
        (
            dict(
                raw_data_leaves="no", personal_information="yes", export_assessment_completed="no"
            ),
            None,
        ),
        (
            dict(
                raw_data_leaves="yes", personal_information="yes", export_assessment_completed="yes"
            ),
            None,
        ),
        (
            dict(
                raw_data_leaves="yes",
                personal_information="no",
                important_data="no",
                export_assessment_completed="no",
            ),
            None,
        ),
        # Not yet answered whether raw data leaves: no contradiction (yet).
        (dict(personal_information="yes", export_assessment_completed="no"), None),
    ],
)
def test_export_contradiction_names_both_answers(given, named):
    text = export_contradiction({k: Answer(v) for k, v in given.items()})
    if named is None:
        assert text == ""
        return
    for words in named:
        assert words in text
    assert text.index(LEAVES) < text.index("the constraints say raw data may not leave")
    assert "Personal Information Protection Law of the PRC, Art. 38–40" in text
    assert "DESIGN" not in text and "seed" not in text


# --- The approval rule on the recorded status ------------------------------------------


@pytest.mark.parametrize(
    "mechanism,stated,held,words",
    [
        # No mechanism named: nothing to state, nothing said.
        (Mechanism.EXEMPT, StatedStatus(), True, ""),
        (Mechanism.UNDETERMINED, StatedStatus(), True, ""),
        # A status left from an earlier mechanism does not matter once none is named.
        (Mechanism.EXEMPT, StatedStatus(IN_PROGRESS, TODAY, None, SA), True, ""),
        # Named, nothing stated.
        (SA, StatedStatus(), False, "status not stated"),
        (SA, StatedStatus("withdrawn", None, None, SA), False, "status not stated"),
        # Done with a reference, or not needed: approval holds.
        (SA, StatedStatus(DONE, None, "CAC-2026-0042", SA), True, "done, reference CAC-2026-0042"),
        (SCC, StatedStatus(NOT_NEEDED, None, None, SCC), True, "not needed"),
        # Reference emptied: done no longer counts.
        (SCC, StatedStatus(DONE, None, "", SCC), False, "no reference"),
        (SCC, StatedStatus(DONE, None, "   ", SCC), False, "no reference"),
        (SCC, StatedStatus(DONE, None, None, SCC), False, "no reference"),
        # In progress waits, with its date; the date today is not yet passed.
        (
            SA,
            StatedStatus(IN_PROGRESS, date(2026, 9, 1), None, SA),
            False,
            "expected by 2026-09-01",
        ),
        (SA, StatedStatus(IN_PROGRESS, TODAY, None, SA), False, "expected by 2026-06-01;"),
        (SA, StatedStatus(IN_PROGRESS, date(2026, 5, 31), None, SA), False, "a date now passed"),
        (SA, StatedStatus(IN_PROGRESS, None, None, SA), False, "no expected date"),
        # The answers now call for another mechanism: the recorded status no longer applies.
        (SA, StatedStatus(DONE, None, "SCC-filing-7", SCC), False, "no longer call for"),
        (SCC, StatedStatus(NOT_NEEDED, None, None, SA), False, "state this mechanism's status"),
        (SA, StatedStatus(DONE, None, "X-1", None), False, "no longer call for"),
    ],
)
def test_mechanism_check(mechanism, stated, held, words):
    check = mechanism_check(aid(mechanism), stated, today=TODAY)
    assert check.held is held
    assert words in check.text
    if check.named and not held:
        assert "Personal Information Protection Law of the PRC, Art. 38–40" in check.text
    if mechanism == SA and check.text:
        assert check.text.startswith("Security assessment (declared via the provincial CAC)")
        if not held:
            assert "Measures for the Security Assessment of Outbound Data Transfers" in check.text
    if mechanism == SCC and not held:
        assert "Standard Contract" in check.text


def test_status_moved_back_from_done_to_in_progress_blocks_again():
    done = StatedStatus(DONE, None, "CAC-2026-0042", SA)
    back = StatedStatus(IN_PROGRESS, date(2026, 7, 1), "CAC-2026-0042", SA)
    assert mechanism_check(aid(SA), done, today=TODAY).held
    moved = mechanism_check(aid(SA), back, today=TODAY)
    assert not moved.held and "in progress, expected by 2026-07-01" in moved.text


def test_a_status_applies_only_to_the_mechanism_it_was_stated_for():
    stated = StatedStatus(DONE, None, "CAC-1", SA)
    assert mechanism_check(aid(SA), stated, today=TODAY).applies
    assert not mechanism_check(aid(SCC), stated, today=TODAY).applies
    assert not mechanism_check(aid(Mechanism.EXEMPT), stated, today=TODAY).applies


# --- What a sign-off must state -----------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism,status,expected_on,reference,errors",
    [
        (SA, None, None, None, {"mechanism_status": "State the status of"}),
        (SA, "", None, None, {"mechanism_status": "State the status of"}),
        (SA, "maybe", None, None, {"mechanism_status": "'maybe' is not a status"}),
        (SA, NOT_NEEDED, None, None, {}),
        (SA, IN_PROGRESS, None, None, {"mechanism_expected_on": "give the date"}),
        (SA, IN_PROGRESS, date(2026, 5, 31), None, {"mechanism_expected_on": "has passed"}),
        (SA, IN_PROGRESS, TODAY, None, {}),
        (SCC, IN_PROGRESS, date(2026, 12, 31), None, {}),
        (SCC, DONE, None, None, {"mechanism_reference": "give its reference"}),
        (SCC, DONE, None, "  ", {"mechanism_reference": "give its reference"}),
        (SCC, DONE, None, "SCC filing 2026-110", {}),
        (Mechanism.EXEMPT, None, None, None, {}),
        (Mechanism.EXEMPT, DONE, None, "x", {"mechanism_status": "names no mechanism"}),
        (Mechanism.UNDETERMINED, None, None, None, {}),
    ],
)
def test_mechanism_status_errors(mechanism, status, expected_on, reference, errors):
    found = mechanism_status_errors(
        mechanism, status=status, expected_on=expected_on, reference=reference, today=TODAY
    )
    assert set(found) == set(errors)
    for field, words in errors.items():
        assert words in found[field]


@pytest.mark.parametrize(
    "mechanism,status,expected_on,reference,recorded",
    [
        (SA, IN_PROGRESS, TODAY, " CAC-acc-1 ", (IN_PROGRESS, TODAY, "CAC-acc-1", SA)),
        (SA, DONE, TODAY, "CAC-1", (DONE, None, "CAC-1", SA)),  # a done one keeps no date
        (SCC, NOT_NEEDED, None, "", (NOT_NEEDED, None, None, SCC)),  # NULL, never ""
        (Mechanism.EXEMPT, None, None, None, (None, None, None, None)),
    ],
)
def test_stated_fields_are_null_where_nothing_applies(
    mechanism, status, expected_on, reference, recorded
):
    fields = stated_fields(mechanism, status=status, expected_on=expected_on, reference=reference)
    assert (
        fields["mechanism_status"],
        fields["mechanism_expected_on"],
        fields["mechanism_reference"],
        fields["mechanism_stated_for"],
    ) == recorded

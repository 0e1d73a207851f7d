"""The change-history chapter summarises, and prints key changes in full.

Its size follows the case: per record type and per person, counts and the
first and last change; every status change, decision, waiver and sign-off in
full; the rest of the history only as attached files.
"""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.access.services import control_risk_accept
from apps.audit import history_summary
from apps.audit.history_summary import summarise_history, watched_fields
from apps.audit.sources import case_history_sources, case_sources
from apps.cases.services import case_evaluation_start, case_offer_minimum_waive, case_update
from apps.contracts.services import red_flag_waive
from apps.packets.document import packet_document
from apps.packets.signing import get_signer
from apps.scorecards.services import scorecard_save
from tests.access.factories import make_matrix
from tests.assessments.factories import make_assessment
from tests.contracts.factories import item, make_checklist, set_statuses
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.django_db

# Field names that hold a status, a decision, a waiver or a sign-off.
KEY_FIELD = re.compile(r"status|state|outcome|verdict|decision|waive|sign|accept|review(ed)?_")
# Fields that match the pattern but are neither, each with the reason.
NOT_KEY_FIELDS = {
    "assessments.dataexportassessment": {"review_by"},  # a due date, not a review done
    "access.accessmatrix": {"review_by"},
    "contracts.checklistitem": {"reviewed_at"},  # set with the status, which is printed
    # The packet's own signature, by the organisation's key, not a person's sign-off.
    "packets.auditpacket": {
        "signed_at",
        "signer_subject",
        "signer_certificate_sha256",
        "signer_certificate_pem",
    },
}


def test_every_status_decision_waiver_and_sign_off_field_is_printed_in_full():
    """A tracked model growing such a field must be declared in ``apps.audit.history_summary``."""
    missing = {}
    for source in case_sources():
        columns = {f.attname for f in source.history_model._meta.concrete_fields}
        candidates = (
            {name for name in columns if KEY_FIELD.search(name) and not name.startswith("history_")}
            - NOT_KEY_FIELDS.get(source.key, set())
            - history_summary.NOT_PRINTED
        )
        left_out = candidates - set(watched_fields(source))
        if left_out:
            missing[source.key] = sorted(left_out)
    assert not missing, f"declare these in apps.audit.history_summary: {missing}"


def test_whole_records_print_every_field_but_machine_state():
    for key in history_summary.WHOLE_RECORDS:
        source = next(s for s in case_sources() if s.key == key)
        printed = watched_fields(source)
        assert "bound_state" not in printed
        assert printed, key


def _case_with_key_changes(priya, lena, tariq):
    case = make_case(priya, name="Summarised case")
    offer = make_offer(priya, case, spec=FULL_SPEC)
    case_evaluation_start(actor=priya, case=case)  # a status change: draft → evaluating
    case = case_offer_minimum_waive(actor=priya, case=case, reason="Only one vendor can host it")
    checklist = make_checklist(lena, offer=offer)
    set_statuses(lena, checklist, {"sla": "missing"}, reason="Draft contract read")
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Service credits suffice")
    make_assessment(lena, case, signed=True)
    matrix = make_matrix(tariq, case)
    control_risk_accept(
        actor=tariq,
        control=matrix.controls.order_by("position").first(),
        reason="Single sign-on arrives next quarter",
        expires_on=timezone.localdate() + timedelta(days=30),
    )
    for round_number in range(3):  # edits that are neither: counted, not printed
        scorecard_save(
            actor=priya,
            offer=offer,
            scores={"pricing": {"score": round_number + 2, "comment": f"round {round_number}"}},
        )
        case = case_update(
            actor=priya,
            case=case,
            fields={"requirements": f"Requirements, draft {round_number}"},
            reason="Requirements edited",
        )
    return case, offer


def _summary(case):
    return summarise_history(case_history_sources(case))


def test_the_summary_counts_per_record_type_and_person(priya, lena, tariq):
    case, _offer = _case_with_key_changes(priya, lena, tariq)
    summary = _summary(case)

    by_key = {t.key: t for t in summary.by_type}
    procurement_case = by_key["cases.procurementcase"]
    history = case.history.all()
    assert procurement_case.changes == history.count()
    assert (procurement_case.created, procurement_case.deleted) == (1, 0)
    assert procurement_case.first == min(h.history_date for h in history)
    assert procurement_case.last == max(h.history_date for h in history)
    assert by_key["scorecards.scoreentry"].changes >= 3
    assert summary.changes == sum(t.changes for t in summary.by_type)

    people = {p.name: p for p in summary.by_person}
    priya_row = next(p for name, p in people.items() if "(priya)" in name)
    lena_row = next(p for name, p in people.items() if "(lena)" in name)
    assert priya_row.changes + lena_row.changes <= summary.changes
    assert "contracts.redflagwaiver" in lena_row.record_types
    assert "cases.procurementcase" not in lena_row.record_types


def test_status_changes_decisions_waivers_and_sign_offs_are_printed_in_full(priya, lena, tariq):
    case, _offer = _case_with_key_changes(priya, lena, tariq)
    summary = _summary(case)

    statuses = [
        (c.record_type, c.changes[0].field, c.changes[0].old, c.changes[0].new)
        for c in summary.status_changes
    ]
    assert ("procurement case", "status", "Draft", "Evaluating") in statuses
    assert any(
        record == "checklist item" and new == "Missing" for record, _f, _old, new in statuses
    ), statuses
    assert all(c.kind in ("status", "decision") for c in summary.status_changes)

    waivers = summary.waivers_and_sign_offs
    offer_minimum = next(c for c in waivers if c.record_type == "procurement case")
    assert offer_minimum.kind == "waiver"
    assert offer_minimum.changes[0].new == "Only one vendor can host it"
    assert "(priya)" in offer_minimum.who
    red_flag = next(c for c in waivers if c.record_type == "red-flag waiver")
    fields = {f.field: f.new for f in red_flag.changes}
    assert fields["reason for the waiver"] == "Service credits suffice"
    assert "(lena)" in fields["waived by"]
    accepted = next(c for c in waivers if c.record_type == "access control")
    assert accepted.kind == "waiver"
    fields = {f.field: f.new for f in accepted.changes}
    assert fields["why the risk is accepted"] == "Single sign-on arrives next quarter"
    assert "(tariq)" in fields["risk accepted by"]
    sign_off = next(c for c in waivers if c.record_type == "data-export assessment")
    assert sign_off.kind == "sign-off"
    assert {"signed off by", "signed off at"} <= {f.field for f in sign_off.changes}

    # Edits that are neither appear in the counts only; each list reads oldest first.
    printed = summary.status_changes + waivers
    assert not any("Requirements, draft" in f.new for c in printed for f in c.changes)
    for changes in (summary.status_changes, waivers):
        assert [c.when for c in changes] == sorted(c.when for c in changes)


def test_the_chapter_prints_the_summary_and_says_how_to_check_the_attachments(priya, lena, tariq):
    case, _offer = _case_with_key_changes(priya, lena, tariq)
    document = packet_document(
        case,
        number="DIL-2026-000007",
        requested_by=priya,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )
    section = next(s for s in document.sections if s.template == "audit/packet_history.html")
    html = render_to_string(section.template, {**section.context, "section": section})
    for heading in (
        "By record type",
        "By person",
        "Status changes and decisions",
        "Waivers and sign-offs",
        "The full history, attached",
    ):
        assert heading in html
    assert "Only one vendor can host it" in html and "Service credits suffice" in html
    assert "Draft" in html and "Evaluating" in html
    assert "Requirements, draft 1" not in html  # only in the attached files
    assert "pdfdetach -saveall" in html and "sha256sum" in html
    # The chapter names the files; their digests are at the front, written once they are.
    whole = document.html
    for attachment in document.attachments:
        assert attachment.name in whole and attachment.sha256 in whole
        assert attachment.sha256 not in html
        if attachment.name != "manifest.json":
            assert attachment.name in html
    assert {a.name for a in document.attachments} >= {
        "history-cases.procurementcase.csv",
        "history-cases.procurementcase.json",
        "history-contracts.redflagwaiver.json",
        "manifest.json",
    }


def _gathering_queries(case, priya) -> int:
    with CaptureQueriesContext(connection) as queries:
        packet_document(
            case,
            number="DIL-2026-000008",
            requested_by=priya,
            packet_signer=get_signer(),
            generated_at=timezone.now(),
        )
    return len(queries)


def test_gathering_takes_as_many_queries_whatever_the_length_of_the_history(priya, lena, tariq):
    case, offer = _case_with_key_changes(priya, lena, tariq)
    before = _gathering_queries(case, priya)
    for round_number in range(8):
        scorecard_save(
            actor=priya,
            offer=offer,
            scores={"pricing": {"score": round_number % 5 + 1, "comment": f"again {round_number}"}},
        )
        case_update(
            actor=priya,
            case=case,
            fields={"requirements": f"More requirements {round_number}"},
            reason="Requirements edited",
        )
    assert _gathering_queries(case, priya) == before

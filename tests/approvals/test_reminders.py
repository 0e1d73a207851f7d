"""Reminders 30, 7 and 1 days ahead (and overdue reviews), sent once; the dashboard."""

import copy
from datetime import date, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.approvals.models import Reminder
from apps.approvals.packet import packet_section
from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.casework.reminders import add_months, reminder_threshold
from apps.casework.tasks import send_reminders_task
from apps.core.services import tracked_update
from apps.evidence.services import harness_token_create
from tests.approvals.factories import make_reminder_world
from tests.factories import make_case, make_offer


@pytest.mark.parametrize(
    "days_left,overdue,expected",
    [
        (45, True, None),
        (31, True, None),
        (30, True, 30),
        (8, True, 30),
        (7, True, 7),
        (2, True, 7),
        (1, True, 1),
        (0, True, 1),
        (-1, True, 0),
        (-1, False, None),
    ],
)
def test_reminder_threshold(days_left, overdue, expected):
    assert reminder_threshold(days_left, remind_overdue=overdue) == expected


@pytest.mark.parametrize(
    "day,months,expected",
    [
        (date(2026, 1, 31), 1, date(2026, 2, 28)),
        (date(2026, 3, 15), 12, date(2027, 3, 15)),
        (date(2026, 11, 30), 3, date(2027, 2, 28)),
    ],
)
def test_add_months(day, months, expected):
    assert add_months(day, months) == expected


@pytest.fixture(scope="module")
def _world(module_people):
    return make_reminder_world(module_people)


@pytest.fixture
def world(_world, people):
    """The ready case, built once for the module; each test gets its own copy."""
    return copy.deepcopy(_world)


def test_reminders_go_to_the_owners_once_per_threshold(world, people, mailoutbox):
    case, _offer = world
    today = timezone.localdate()
    assessment = case.data_export_assessments.get()
    tracked_update(
        assessment,
        actor=people["lena"],
        reason="Review due soon",
        fields={"review_by": today + timedelta(days=5)},
    )
    tracked_update(
        case.access_matrix,
        actor=people["tariq"],
        reason="Review overdue",
        fields={"review_by": today - timedelta(days=2)},
    )
    harness_token_create(actor=people["tariq"], case=case, ttl_hours=20, label="rack 3")
    assert send_reminders_task() == 3 + 1  # assessment 7 d, matrix overdue, 2 tokens ≤ 1 d
    kinds = {(r.kind, r.threshold) for r in Reminder.objects.all()}
    assert ("assessment_review", 7) in kinds
    assert ("matrix_review", 0) in kinds
    assert ("token_expiry", 1) in kinds
    to = {tuple(m.to) for m in mailoutbox}
    assert ("lena@diligence.example",) in to and ("tariq@diligence.example",) in to
    overdue = next(m for m in mailoutbox if m.subject.startswith("Overdue"))
    assert "access matrix" in overdue.subject
    sent = len(mailoutbox)
    assert send_reminders_task() == 0
    assert len(mailoutbox) == sent
    row = Reminder.objects.filter(kind="matrix_review").get().history.first()
    assert row.history_change_reason == "Overdue"


def test_contract_renewal_is_computed_from_the_approved_term(world, people, mailoutbox):
    case, offer = world
    case = case_submit_for_approval(actor=people["priya"], case=case)
    approval = approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Go"
    )
    # Approved eleven months and a half ago: a 12-month term renews in about two weeks.
    tracked_update(
        approval,
        actor=people["tariq"],
        reason="Backdated for the test",
        fields={"decided_at": timezone.now() - timedelta(days=350)},
    )
    send_reminders_task()
    renewal = Reminder.objects.get(kind="contract_renewal")
    assert renewal.threshold == 30 and renewal.object_pk == approval.pk
    mail = next(m for m in mailoutbox if "renews" in m.subject)
    assert set(mail.to) == {"priya@diligence.example", "tariq@diligence.example"}


def test_dashboard_shows_each_role_what_waits_for_them(world, people, browser_as):
    case, offer = world
    case_submit_for_approval(actor=people["priya"], case=case)
    tracked_update(
        case.access_matrix,
        actor=people["tariq"],
        reason="Review overdue",
        fields={"review_by": timezone.localdate() - timedelta(days=2)},
    )
    url = reverse("approvals:dashboard")
    tariq = browser_as("tariq").get(url).content.decode()
    assert "Pending approval" in tariq and "Access-matrix review expired" in tariq
    assert "Coming due" in tariq and str(case.access_matrix) in tariq
    lena = browser_as("lena").get(url).content.decode()
    # The offers compared beside the ready one have no clause checklist yet: legal's.
    assert "No clause checklist yet: start it" in lena
    assert "Pending approval: approve one offer" not in lena
    aude = browser_as("aude").get(url).content.decode()
    assert "Recent decisions" in aude and "Cases by state" in aude
    second = make_case(people["priya"], name="Second case")
    make_offer(people["priya"], second)
    priya = browser_as("priya").get(url).content.decode()
    assert "Second case" in priya and "Not scored yet: score the offer" in priya
    assert "1 of 3 offers: add an offer or record a waiver" in priya


def test_packet_section_carries_decisions_waivers_and_staleness(world, people):
    case, offer = world
    case = case_submit_for_approval(actor=people["priya"], case=case)
    approval_decide(
        actor=people["tariq"], case=case, offer=offer, decision="approved", comment="Go ahead"
    )
    tracked_update(offer, actor=people["priya"], reason="Price raised", fields={"notes": "+5 %"})
    section = packet_section(case)
    overview = section.context["overview"]
    assert overview.stale and overview.current.comment == "Go ahead"
    from django.template.loader import render_to_string

    html = render_to_string(section.template, {**section.context, "section": section})
    assert "Stale approval" in html and "Price raised" in html and "Go ahead" in html
    assert [qs.model.__name__ for qs in section.history_querysets] == [
        "HistoricalApproval",
        "HistoricalFindingAcceptance",
        "HistoricalApprovalChain",
        "HistoricalChainDecision",
    ]

"""The schedule of vendor reassessments, on a frozen clock (docs/rules/reassessment.md): a
vendor whose review cycle falls due on day D is started on D, once; lapsed 30 days later
it stands as a finding on each open case with an offer from the vendor (not on a closed
one); completed, the finding goes and the next falls due one cycle later."""

from datetime import timedelta

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from apps.acceptance.models import AcceptanceSignOff
from apps.approvals.selectors import case_register
from apps.cases.models import ProcurementCase
from apps.casework import reassessments
from apps.casework.models import Reassessment, ReassessmentState
from apps.casework.tasks import run_reassessments_task
from apps.core.models import Notification
from apps.core.roles import Role
from apps.core.services import tracked_create
from apps.core.signals import verification_recorded
from apps.evidence.models import HarnessToken, SpecVerification
from apps.portal.models import VendorInvitation
from apps.vendors.reassessment import REASSESSMENT_LAPSED, add_months
from tests.acceptance.factories import make_evidence, make_plan
from tests.casework.factories import at, vendor_in_use, with_emails
from tests.portal.review_factories import make_proposal


def _freeze(monkeypatch, moment) -> None:
    monkeypatch.setattr(timezone, "now", lambda: moment)


def _run(capture) -> int:
    with capture(execute=True):
        return run_reassessments_task()


def _lapsed_on(case) -> list:
    fresh = ProcurementCase.objects.get(pk=case.pk)
    return [e for e in case_register(fresh) if e.rule.code == REASSESSMENT_LAPSED]


def _page_says_lapsed(client, case) -> bool:
    page = client.get(reverse("cases:detail", args=[case.pk])).content.decode()
    return "was not completed" in page


def test_the_schedule_starts_the_reassessment_on_its_due_day_once_and_it_lapses_then_completes(
    people, monkeypatch, django_capture_on_commit_callbacks, client
):
    people = with_emails(people)
    world = vendor_in_use(people)
    day = world.due_on
    invitations = VendorInvitation.objects.filter(offer=world.offer)
    tokens = HarnessToken.objects.filter(offer=world.offer)
    invitations_before, tokens_before = invitations.count(), tokens.count()

    # The day before: nothing.
    _freeze(monkeypatch, at(day - timedelta(days=1)))
    assert [d.due_on for d in reassessments.schedule()] == [day]
    assert _run(django_capture_on_commit_callbacks) == 0
    assert not Reassessment.objects.exists()
    assert invitations.count() == invitations_before and tokens.count() == tokens_before

    # On the day: one reassessment, one new invitation, one harness token.
    mail.outbox.clear()
    _freeze(monkeypatch, at(day))
    assert _run(django_capture_on_commit_callbacks) == 1
    started = Reassessment.objects.get()
    assert started.due_on == day and started.vendor == world.vendor and started.offer == world.offer
    assert (started.tier, started.cycle_months, started.sections) == ("medium", 6, ["spec"])
    assert invitations.count() == invitations_before + 1
    assert tokens.count() == tokens_before + 1
    assert started.invitation == invitations.first()
    assert started.invitation.email == "li.wei@vendor.example"
    assert started.harness_token.created_by == people["tariq"]
    assert started.harness_token.expires_at == at(day) + timedelta(days=30)
    # The portal link to the vendor's contact; the run command, with its token, to the tech
    # lead who approved the offer.
    sent = {tuple(message.to): message for message in mail.outbox}
    assert ("li.wei@vendor.example",) in sent
    run = sent[("tariq@example.org",)].body
    assert "diligence-harness.pyz run --case" in run and started.harness_token.prefix in run
    told = Notification.objects.filter(event="reassessment_started")
    assert {n.recipient.username for n in told} == {"pablo", "priya"}
    assert reassessments.state_of(started) == ReassessmentState.STARTED
    assert reassessments.schedule() == []  # open: none other is due

    # Run again the same day, and the next: nothing more.
    assert _run(django_capture_on_commit_callbacks) == 0
    _freeze(monkeypatch, at(day + timedelta(days=1), 15))
    assert _run(django_capture_on_commit_callbacks) == 0
    assert Reassessment.objects.count() == 1
    assert invitations.count() == invitations_before + 1
    assert tokens.count() == tokens_before + 1

    # Day 29 after the start: still within the grace, no finding.
    _freeze(monkeypatch, at(day + timedelta(days=29)))
    assert _lapsed_on(world.case) == []

    # Day 30, with no write and before the schedule runs: the finding stands, on each open
    # case with an offer from the vendor, and not on the closed one.
    _freeze(monkeypatch, at(day + timedelta(days=30), 0))
    for case in (world.case, world.open_case):
        (entry,) = _lapsed_on(case)
        assert entry.rule.severity == "needs_acceptance"
        assert set(entry.rule.owners) == {Role.PROCUREMENT, Role.TECH_LEAD}
        assert "review cycle" in str(entry.rule.source)
    assert _lapsed_on(world.closed_case) == []

    # D+31: the schedule records the lapse once and tells the owners.
    _freeze(monkeypatch, at(day + timedelta(days=31)))
    assert _run(django_capture_on_commit_callbacks) == 1
    started.refresh_from_db()
    assert started.lapsed_at == at(day + timedelta(days=31))
    assert reassessments.state_of(started) == ReassessmentState.LAPSED
    lapse_told = Notification.objects.filter(event="reassessment_lapsed")
    assert {n.case_id for n in lapse_told} == {world.case.pk, world.open_case.pk}
    assert _run(django_capture_on_commit_callbacks) == 0
    assert len(_lapsed_on(world.case)) == 1 and len(_lapsed_on(world.open_case)) == 1
    # The other open case's page, stored after the lapse, shows it too.
    client.force_login(people["priya"])
    assert _page_says_lapsed(client, world.open_case)

    # A passing run alone does not complete it: the vendor has not answered the portal.
    make_evidence(people["tariq"], world.offer)
    assert _run(django_capture_on_commit_callbacks) == 0
    # The vendor answers the same section through the new invitation: it completes.
    make_proposal(started.invitation, "spec", "cards_per_node", "8")
    assert _run(django_capture_on_commit_callbacks) == 1
    started.refresh_from_db()
    assert started.completed_at == at(day + timedelta(days=31))
    assert started.verification.verdict == "verified"
    assert _lapsed_on(world.case) == [] and _lapsed_on(world.open_case) == []
    # Completed through the offer's case, it is gone from the other case's stored page too.
    assert not _page_says_lapsed(client, world.open_case)
    # The next falls due one cycle after it completed.
    (due,) = reassessments.schedule()
    assert due.due_on == add_months(day + timedelta(days=31), 6)


def test_a_verification_that_failed_does_not_complete_it(
    people, monkeypatch, django_capture_on_commit_callbacks
):
    people = with_emails(people)
    world = vendor_in_use(people)
    _freeze(monkeypatch, at(world.due_on))
    _run(django_capture_on_commit_callbacks)
    started = Reassessment.objects.get()
    make_proposal(started.invitation, "spec", "cards_per_node", "8")
    make_evidence(people["tariq"], world.offer, verdict="failed", checks_status="fail")
    assert _run(django_capture_on_commit_callbacks) == 0
    started.refresh_from_db()
    assert started.completed_at is None


def test_a_vendor_never_invited_is_started_without_an_invitation(
    people, monkeypatch, django_capture_on_commit_callbacks
):
    """No contact to send the portal to: the token is still issued and the owners are told to
    invite the vendor's contact."""
    people = with_emails(people)
    world = vendor_in_use(people)
    VendorInvitation.objects.filter(offer=world.offer).update(offer=world.open_case.offers.get())
    _freeze(monkeypatch, at(world.due_on))
    assert _run(django_capture_on_commit_callbacks) == 1
    started = Reassessment.objects.get()
    assert started.invitation is None and started.harness_token is not None
    told = Notification.objects.get(event="reassessment_started", recipient=people["pablo"])
    assert "never invited" in told.summary


def test_the_first_is_due_a_cycle_after_the_acceptance_sign_off_where_there_is_one(people):
    world = vendor_in_use(people, cycle_months=12)
    signed_at = world.offer.approvals.get().decided_at + timedelta(days=40)
    tracked_create(
        AcceptanceSignOff,
        actor=people["tariq"],
        reason="Signed off",
        plan=make_plan(people["tariq"], world.offer),
        signed_by=people["tariq"],
        signed_at=signed_at,
        comment="Accepted",
    )
    (due,) = reassessments.schedule()
    assert due.due_on == add_months(timezone.localdate(signed_at), 12)


@pytest.mark.parametrize("cycle", [1, 36])
def test_the_vendors_own_cycle_sets_the_due_day(people, cycle):
    world = vendor_in_use(people, cycle_months=cycle)
    approved_on = timezone.localdate(world.offer.approvals.get().decided_at)
    (due,) = reassessments.schedule()
    assert due.due_on == add_months(approved_on, cycle)


def test_a_verification_recorded_completes_it_without_waiting_for_the_schedule(
    people, monkeypatch, django_capture_on_commit_callbacks
):
    people = with_emails(people)
    world = vendor_in_use(people)
    _freeze(monkeypatch, at(world.due_on))
    _run(django_capture_on_commit_callbacks)
    started = Reassessment.objects.get()
    make_proposal(started.invitation, "spec", "cards_per_node", "8")
    with django_capture_on_commit_callbacks(execute=True):
        verification = make_evidence(people["tariq"], world.offer)
        verification_recorded.send(sender=SpecVerification, offer_id=world.offer.pk)
    started.refresh_from_db()
    assert started.verification == verification and started.completed_at is not None

"""Who hears of a decision and of a finding accepted or open again
(docs/notifications.md#who-is-told).

priya owns and submits the ready case; tariq decides it, and tomas, a second tech lead,
is an approver who hears of it. The offer's 50 % prepayment premium is a finding
procurement and finance own: pablo (procurement) and fiona (finance) hear of it.
"""

import copy
import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from apps.approvals.acceptances import (
    finding_accept,
    finding_acceptance_withdraw,
    record_expired_acceptances,
)
from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_save
from apps.core.models import Notification, NotificationEvent, Webhook
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case
from tests.webhook_receiver import Receiver, signature_verifies

SITE = "https://diligence.example.org"
PREMIUM = "contracts.premium_in_range"


@pytest.fixture(scope="module")
def _world(module_people):
    people = dict(module_people)
    tomas = get_user_model().objects.create_user(username="tomas", password="pw")
    tomas.groups.add(Group.objects.get(name=Role.TECH_LEAD))
    people["tomas"] = tomas
    for name, person in people.items():
        person.email = f"{name}@example.org"
        person.save(update_fields=["email"])
    case, offer, _offers = make_ready_case(people)
    checklist_save(
        actor=people["lena"],
        checklist=ClauseChecklist.objects.get(offer=offer),
        items=[],
        reason="Prepayment read from the contract",
        contract_terms={"prepayment_pct": "30", "ordinary_prepayment_pct": "20"},
    )
    case = case_submit_for_approval(actor=people["priya"], case=case)
    return {"people": people, "case": case, "offer": offer}


@pytest.fixture
def world(_world, people, settings):
    settings.SITE_URL = SITE
    return copy.deepcopy(_world)


def _told(event) -> list[str]:
    return sorted(
        Notification.objects.filter(event=event).values_list("recipient__username", flat=True)
    )


def _accept(world, name="priya", role=Role.PROCUREMENT):
    return finding_accept(
        actor=world["people"][name],
        case=world["case"],
        code=PREMIUM,
        offer_id=world["offer"].pk,
        key="prepayment_pct",
        role=role,
        reason="Supply is scarce this year",
        expires_on=timezone.localdate() + timedelta(days=30),
    )


def test_a_rejection_tells_the_owner_and_the_other_approvers(
    world, django_capture_on_commit_callbacks
):
    people, case = world["people"], world["case"]
    with django_capture_on_commit_callbacks(execute=True):
        approval_decide(actor=people["tariq"], case=case, decision="rejected", comment="Too dear")
    assert _told(NotificationEvent.DECISION) == ["priya", "tomas"]
    link = f"{SITE}{reverse('approvals:case', args=[case.pk])}"
    assert {m.to[0] for m in mail.outbox} == {"priya@example.org", "tomas@example.org"}
    for message in mail.outbox:
        assert f"Tariq rejected {case.name}: Too dear" in message.body
        assert link in message.body


def test_an_approval_is_posted_to_a_webhook_that_subscribes_to_decisions(
    world, django_capture_on_commit_callbacks
):
    people, case, offer = world["people"], world["case"], world["offer"]
    _accept(world)
    _accept(world, "fiona", Role.FINANCE)
    receiver = Receiver(200).start()
    try:
        webhook = Webhook.objects.create(name="Chat", url=receiver.url, events=["decision"])
        with django_capture_on_commit_callbacks(execute=True):
            approval_decide(
                actor=people["tariq"],
                case=case,
                offer=offer,
                decision="approved",
                comment="Every gate holds",
            )
    finally:
        receiver.stop()
    [received] = receiver.received
    assert signature_verifies(webhook.secret, received)
    body = json.loads(received.body)
    assert body["event"] == "decision"
    assert body["text"].startswith(f"Tariq approved {offer.vendor.name}'s offer on {case.name}")
    assert body["url"] == f"{SITE}{reverse('approvals:case', args=[case.pk])}"


def test_an_acceptance_tells_the_owner_and_the_finding_s_other_owners(
    world, django_capture_on_commit_callbacks
):
    case = world["case"]
    with django_capture_on_commit_callbacks(execute=True):
        _accept(world, "fiona", Role.FINANCE)
    # priya owns the case; pablo and priya hold procurement, fiona (who accepted) finance.
    assert _told(NotificationEvent.FINDING_ACCEPTED) == ["pablo", "priya"]
    message = next(m for m in mail.outbox if m.to == ["pablo@example.org"])
    assert "Fiona accepted a finding on" in message.body and "Finance approver" in message.body
    assert f"{SITE}{reverse('approvals:findings', args=[case.pk])}" in message.body


def test_a_withdrawal_tells_that_the_finding_is_open_again(
    world, django_capture_on_commit_callbacks
):
    acceptance = _accept(world)
    with django_capture_on_commit_callbacks(execute=True):
        finding_acceptance_withdraw(
            actor=world["people"]["priya"], acceptance=acceptance, reason="Terms changed"
        )
    assert _told(NotificationEvent.FINDING_OPENED) == ["pablo"]  # priya withdrew it herself
    [message] = mail.outbox
    assert "Priya withdrew the acceptance of a finding" in message.body
    assert "it is open again" in message.body


def test_an_acceptance_that_runs_out_tells_the_owner_and_its_role(
    world, django_capture_on_commit_callbacks
):
    _accept(world)
    later = timezone.localdate() + timedelta(days=31)
    with django_capture_on_commit_callbacks(execute=True):
        assert record_expired_acceptances(today=later) == 1
    assert _told(NotificationEvent.FINDING_OPENED) == ["pablo", "priya"]
    assert all("ran out on" in m.body for m in mail.outbox)

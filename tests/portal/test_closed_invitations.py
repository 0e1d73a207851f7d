"""What a vendor sent through an invitation later revoked or expired is never accepted
(docs/rules/portal.md#closed-invitations).

Revoking an invitation closes what it brought that no reviewer settled, each answer and
document with the revocation's reason in its history. An answer or a document of an
expired invitation may still be rejected, never accepted, edited or questioned: the page
says why (409), and the record keeps what it held. The review page shows, beside each
answer and document, whether its invitation is open, expired or revoked, and since when.
"""

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.contracts.models import ClauseChecklist, ContractTerms
from apps.contracts.services import checklist_save
from apps.core import formats
from apps.core.services import tracked_update
from apps.offers.models import Offer
from apps.portal.models import DocumentStatus, ProposalStatus, VendorInvitation
from apps.portal.services.invitations import invitation_revoke
from tests.portal.factories import make_invitation, make_offer_with_checklist
from tests.portal.review_factories import make_document, make_proposal

pytestmark = pytest.mark.django_db

# What the outside test changed through a revoked invitation: each claim, who reviews it,
# the record's value and the vendor's.
CLAIMS = {
    "deletion": ("exit", "data_deletion_days", "lena", 14, "7"),
    "prepayment": ("commercial", "prepayment_ratio", "priya", Decimal("0.3"), "0.9"),
    "memory": ("spec", "memory_per_card_gib", "tariq", None, "141"),
}


def _held(offer, claim: str):
    """What the offer's records hold for ``claim`` now."""
    if claim == "data_deletion_days":
        return ContractTerms.objects.get(checklist__offer=offer).data_deletion_days
    if claim == "prepayment_ratio":
        return Offer.objects.get(pk=offer.pk).prepayment_ratio
    return Offer.objects.get(pk=offer.pk).declared_spec.memory_per_card_gib


@pytest.fixture
def world(priya, lena):
    offer = make_offer_with_checklist(priya, prepayment_ratio=Decimal("0.3"))
    checklist_save(
        actor=lena,
        checklist=ClauseChecklist.objects.get(offer=offer),
        items=[],
        reason="As negotiated",
        contract_terms={"data_deletion_days": 14},
    )
    invitation, _secret = make_invitation(priya, offer)
    mail.outbox.clear()
    return {"offer": offer, "invitation": invitation}


def _expire(invitation, priya) -> VendorInvitation:
    return tracked_update(
        invitation,
        actor=priya,
        reason="Test: lapsed",
        fields={"expires_at": timezone.now() - timedelta(hours=1)},
    )


def _revoke(client, invitation, reason="The contact left the vendor"):
    url = reverse("portal:invitation-revoke", args=[invitation.offer_id, invitation.pk])
    return client.post(url, {"reason": reason})


def _decide(client, proposal, **data):
    url = reverse("portal:proposal-decide", args=[proposal.invitation.offer_id, proposal.pk])
    return client.post(url, {"version": proposal.version, "note": "", "value": "", **data})


def _decide_document(client, document, **data):
    url = reverse("portal:document-decide", args=[document.invitation.offer_id, document.pk])
    return client.post(url, {"note": "", **data})


def _answers(client, offer) -> str:
    page = client.get(reverse("portal:answers", args=[offer.pk]))
    assert page.status_code == 200
    return page.text


def _reasons(record) -> list[str]:
    return [row.history_change_reason for row in record.history.order_by("history_id")]


# --- Revoked -----------------------------------------------------------------------------


def test_revoking_closes_what_no_reviewer_settled_each_with_the_reason(
    browser_as, world, priya, tariq
):
    invitation = world["invitation"]
    pending = make_proposal(invitation, "exit", "data_deletion_days", "7")
    questioned = make_proposal(invitation, "commercial", "prepayment_ratio", "0.9")
    questioned = tracked_update(
        questioned, actor=priya, reason="Test: questioned", fields={"status": "questioned"}
    )
    accepted = make_proposal(invitation, "spec", "cards_per_node", "8")
    assert _decide(browser_as("tariq"), accepted, decision="accept").status_code == 302
    document = make_document(invitation)

    procurement = browser_as("priya")
    response = _revoke(procurement, invitation)
    assert response.status_code == 302
    told = procurement.get(response.url).text
    assert "documents it brought that were still awaiting review are closed" in told

    closed = "Closed with its invitation, revoked by Priya: The contact left the vendor"
    for record in (pending, questioned, document):
        record.refresh_from_db()
        assert record.status == "closed"
        assert record.reviewed_by == priya and record.reviewed_at is not None
        assert record.review_note == "The contact left the vendor"
        assert _reasons(record)[-1] == closed
    accepted.refresh_from_db()
    assert accepted.status == ProposalStatus.ACCEPTED and accepted.reviewed_by == tariq
    assert closed not in _reasons(accepted)

    # The closing shows on the page, beside the revoked invitation, and in the offer's
    # history, and the answers can no longer be decided.
    page = _answers(browser_as("aude"), world["offer"])
    assert page.count("Closed with its invitation") == 3
    assert "Invitation revoked" in page
    assert "Record the decision" not in _answers(browser_as("lena"), world["offer"])


@pytest.mark.parametrize("name", CLAIMS)
def test_an_answer_of_a_revoked_invitation_is_not_accepted(browser_as, world, name):
    section, claim, reviewer, held, value = CLAIMS[name]
    proposal = make_proposal(world["invitation"], section, claim, value)
    assert _revoke(browser_as("priya"), world["invitation"]).status_code == 302
    # From the page as it was before the revocation: the answer changed since.
    response = _decide(browser_as(reviewer), proposal, decision="accept")
    assert response.status_code == 409
    proposal.refresh_from_db()
    for decision in ("accept", "edit", "reject"):
        response = _decide(
            browser_as(reviewer), proposal, decision=decision, value=value, note="Fine"
        )
        assert response.status_code == 409
        assert "already decided (Closed with its invitation)" in response.text
    assert _held(world["offer"], claim) == held


@pytest.mark.parametrize("name", CLAIMS)
def test_an_answer_left_open_under_a_revoked_invitation_is_refused(browser_as, world, priya, name):
    # Revoked before its answers were closed with it: still only to be rejected.
    section, claim, reviewer, held, value = CLAIMS[name]
    proposal = make_proposal(world["invitation"], section, claim, value)
    revoked = tracked_update(
        world["invitation"],
        actor=priya,
        reason="Revoked",
        fields={"revoked_at": timezone.now(), "revoked_by": priya},
    )
    response = _decide(browser_as(reviewer), proposal, decision="accept")
    assert response.status_code == 409
    assert (
        f"This answer came through an invitation revoked on "
        f"{formats.datetime(revoked.revoked_at)}: it can no longer be accepted" in response.text
    )
    assert _held(world["offer"], claim) == held
    assert (
        _decide(browser_as(reviewer), proposal, decision="reject", note="Revoked").status_code
        == 302
    )
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED


@pytest.mark.parametrize("who", ("lena", "tariq", "fiona", "aude"))
def test_only_procurement_revokes_and_closes(browser_as, world, who):
    proposal = make_proposal(world["invitation"], "exit", "data_deletion_days", "7")
    assert _revoke(browser_as(who), world["invitation"]).status_code == 403
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING
    assert VendorInvitation.objects.get(pk=world["invitation"].pk).revoked_at is None


def test_the_administrator_revokes_and_closes(browser_as, world):
    proposal = make_proposal(world["invitation"], "exit", "data_deletion_days", "7")
    assert _revoke(browser_as("ada"), world["invitation"]).status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.CLOSED


def test_a_document_of_a_revoked_invitation_is_not_accepted(browser_as, world):
    document = make_document(world["invitation"])
    assert _revoke(browser_as("priya"), world["invitation"]).status_code == 302
    for who in ("priya", "lena", "tariq"):
        response = _decide_document(browser_as(who), document, decision="accept")
        assert response.status_code == 409
        assert "already decided (Closed with its invitation)" in response.text
    document.refresh_from_db()
    assert document.status == DocumentStatus.CLOSED


def test_revoking_twice_is_refused_and_closes_nothing_more(browser_as, world):
    make_proposal(world["invitation"], "exit", "data_deletion_days", "7")
    assert _revoke(browser_as("priya"), world["invitation"]).status_code == 302
    assert _revoke(browser_as("priya"), world["invitation"], reason="Again").status_code == 409


# --- Expired -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLAIMS)
def test_an_answer_of_an_expired_invitation_is_only_rejected(browser_as, world, priya, name):
    section, claim, reviewer, held, value = CLAIMS[name]
    proposal = make_proposal(world["invitation"], section, claim, value)
    expired = _expire(world["invitation"], priya)
    refusal = (
        f"This answer came through an invitation that expired on "
        f"{formats.datetime(expired.expires_at)}: it can no longer be accepted or questioned"
    )
    for decision, note in (("accept", ""), ("edit", ""), ("question", "Still true?")):
        response = _decide(
            browser_as(reviewer), proposal, decision=decision, value=value, note=note
        )
        assert response.status_code == 409, decision
        assert refusal in response.text
        proposal.refresh_from_db()
        assert proposal.status == ProposalStatus.PENDING
    assert _held(world["offer"], claim) == held
    assert len(mail.outbox) == 0  # no question went to a contact who can no longer answer

    response = _decide(browser_as(reviewer), proposal, decision="reject", note="Too late")
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED


@pytest.mark.parametrize(("name", "wrong"), [("deletion", "priya"), ("prepayment", "lena")])
def test_an_answer_of_an_expired_invitation_is_still_its_section_s_to_decide(
    browser_as, world, priya, name, wrong
):
    section, claim, _reviewer, _held_value, value = CLAIMS[name]
    proposal = make_proposal(world["invitation"], section, claim, value)
    _expire(world["invitation"], priya)
    assert _decide(browser_as(wrong), proposal, decision="reject", note="No").status_code == 403
    assert _decide(browser_as("aude"), proposal, decision="reject", note="No").status_code == 403


def test_a_document_of_an_expired_invitation_is_only_rejected(browser_as, world, priya):
    document = make_document(world["invitation"])
    expired = _expire(world["invitation"], priya)
    response = _decide_document(browser_as("tariq"), document, decision="accept")
    assert response.status_code == 409
    assert (
        f"This document came through an invitation that expired on "
        f"{formats.datetime(expired.expires_at)}: it can no longer be accepted" in response.text
    )
    document.refresh_from_db()
    assert document.status == DocumentStatus.PENDING
    assert (
        _decide_document(browser_as("aude"), document, decision="reject", note="x").status_code
        == 403
    )
    response = _decide_document(browser_as("tariq"), document, decision="reject", note="Too late")
    assert response.status_code == 302
    document.refresh_from_db()
    assert document.status == DocumentStatus.REJECTED


# --- The review page -----------------------------------------------------------------------


def test_the_review_page_shows_each_answer_s_invitation_and_since_when(browser_as, world, priya):
    offer = world["offer"]
    open_one = world["invitation"]
    expired, _s = make_invitation(priya, offer, email="late@vendor.example")
    revoked, _s = make_invitation(priya, offer, email="gone@vendor.example")
    answers = {
        "open": make_proposal(open_one, "exit", "data_deletion_days", "7"),
        "expired": make_proposal(expired, "exit", "data_deletion_days", "10"),
        "revoked": make_proposal(revoked, "exit", "data_deletion_days", "3"),
    }
    documents = {
        "open": make_document(open_one),
        "expired": make_document(expired, name="late.pdf"),
        "revoked": make_document(revoked, name="gone.pdf"),
    }
    expired = _expire(expired, priya)
    revoked = invitation_revoke(actor=priya, invitation=revoked, reason="Wrong contact")
    until = formats.datetime(open_one.expires_at)
    shown = {
        "open": f'Invitation open</span> <small class="muted">until {until}',
        "expired": f"Invitation expired</span> <small>on {formats.datetime(expired.expires_at)}",
        "revoked": f"Invitation revoked</span> <small>on {formats.datetime(revoked.revoked_at)}",
    }
    for who in ("priya", "lena", "tariq", "fiona", "aude", "ada"):
        page = _answers(browser_as(who), offer)
        for state, proposal in answers.items():
            row = page.split(f'id="proposal-{proposal.pk}"', 1)[1].split("</tr>", 1)[0]
            assert shown[state] in row, (who, state)
        for state, document in documents.items():
            row = page.split(f'id="document-{document.pk}"', 1)[1].split("</tr>", 1)[0]
            assert shown[state] in row, (who, state)

    # The legal reviewer may only reject the expired invitation's answer and document;
    # the open one's may be decided in full; the revoked one's are closed.
    page = _answers(browser_as("lena"), offer)
    rows = {
        state: page.split(f'id="proposal-{proposal.pk}"', 1)[1].split("</tr>", 1)[0]
        for state, proposal in answers.items()
    }
    assert 'value="accept"' in rows["open"]
    assert 'value="accept"' not in rows["expired"]
    assert 'value="reject"' in rows["expired"]
    assert "can only be rejected" in rows["expired"]
    assert "<form" not in rows["revoked"] and "Closed with its invitation" in rows["revoked"]
    document_rows = {
        state: page.split(f'id="document-{document.pk}"', 1)[1].split("</tr>", 1)[0]
        for state, document in documents.items()
    }
    assert 'value="accept"' in document_rows["open"]
    assert 'value="accept"' not in document_rows["expired"]
    assert "<form" not in document_rows["revoked"]


# --- At the same time ----------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_revocation_racing_an_acceptance_leaves_one_story(people):
    # Either the answer was accepted before the invitation was revoked (and stays
    # accepted), or it was closed with it and the acceptance is refused: never both,
    # never a 500.
    world = {}
    offer = make_offer_with_checklist(people["priya"])
    world["invitation"], _secret = make_invitation(people["priya"], offer)
    proposal = make_proposal(world["invitation"], "exit", "data_deletion_days", "7")
    barrier, responses = threading.Barrier(2), {}

    def run(who: str, send) -> None:
        client = Client()
        client.force_login(people[who])
        try:
            barrier.wait(timeout=30)
            responses[who] = send(client)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=("priya", lambda c: _revoke(c, world["invitation"]))),
        threading.Thread(
            target=run, args=("lena", lambda c: _decide(c, proposal, decision="accept"))
        ),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert responses["priya"].status_code == 302
    assert responses["lena"].status_code in (302, 409)
    proposal.refresh_from_db()
    terms = ContractTerms.objects.filter(checklist__offer=offer).first()
    held = terms.data_deletion_days if terms else None
    if responses["lena"].status_code == 302:
        assert proposal.status == ProposalStatus.ACCEPTED and held == 7
    else:
        assert proposal.status == ProposalStatus.CLOSED and held is None

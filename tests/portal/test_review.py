"""The review of a vendor's answers: each section decided by its own role, written into
the record with both names in its history, and refused whole when anything is wrong."""

from decimal import Decimal

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.contracts.models import ChecklistItem, ContractTerms
from apps.core.services import StateConflict
from apps.offers.models import DeclaredSpec, Offer
from apps.portal.models import DocumentStatus, ProposalStatus
from apps.portal.services import review
from tests.factories import make_case, make_offer
from tests.portal.factories import make_invitation, make_offer_with_checklist
from tests.portal.review_factories import make_document, make_proposal
from tests.stored import replace_stored

pytestmark = pytest.mark.django_db

VENDOR = "Submitted by the vendor (Li Wei, li.wei@vendor.example)"


@pytest.fixture
def world(priya, lena):
    offer = make_offer_with_checklist(priya)
    invitation, _secret = make_invitation(priya, offer)
    mail.outbox.clear()
    return {"offer": offer, "invitation": invitation}


def _decide(client, proposal, **data):
    url = reverse("portal:proposal-decide", args=[proposal.invitation.offer_id, proposal.pk])
    return client.post(url, {"version": proposal.version, "note": "", "value": "", **data})


def _latest_reason(record) -> str:
    return record.history.order_by("-history_id").first().history_change_reason


def _item(offer) -> ChecklistItem:
    return ChecklistItem.objects.filter(checklist__offer=offer).order_by("number").first()


@pytest.mark.parametrize("who", ("priya", "lena", "tariq", "aude", "ada"))
def test_every_role_reads_the_vendor_answers(browser_as, world, who):
    item = _item(world["offer"])
    make_proposal(world["invitation"], "spec", "memory_per_card_gib", "141")
    make_proposal(
        world["invitation"], "clause", item.key, "We keep logs 2 years", clause_reference="7.2"
    )
    make_document(world["invitation"])
    page = browser_as(who).get(reverse("portal:answers", args=[world["offer"].pk]))
    assert page.status_code == 200
    assert "Memory per card" in page.text or "memory per card" in page.text
    assert item.title in page.text and "We keep logs 2 years" in page.text and "7.2" in page.text
    assert "sla.pdf" in page.text
    # Only the tech lead (and the administrator) get a decision form for the spec claim,
    # legal (and the administrator) for the clause; everyone but the auditor for documents.
    offer = world["offer"].pk
    spec = reverse("portal:section-decide", args=[offer, "spec"])
    clause = reverse("portal:section-decide", args=[offer, "clause"])
    assert (spec in page.text) is (who in ("tariq", "ada"))
    assert (clause in page.text) is (who in ("lena", "ada"))
    assert ("Record the decision" in page.text) is (who != "aude")


def test_the_tech_lead_accepts_a_spec_claim_into_the_declared_spec(browser_as, world, tariq):
    proposal = make_proposal(world["invitation"], "spec", "memory_per_card_gib", "141")
    response = _decide(
        browser_as("tariq"), proposal, decision="accept", note="Matches the datasheet"
    )
    assert response.status_code == 302
    spec = DeclaredSpec.objects.get(offer=world["offer"])
    assert spec.memory_per_card_gib == 141
    assert _latest_reason(spec) == f"{VENDOR}, accepted by Tariq: Matches the datasheet"
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED
    assert proposal.accepted_value == "141" and proposal.reviewed_by == tariq
    assert proposal.reviewed_at is not None and proposal.review_note == "Matches the datasheet"


def test_a_no_on_scoped_tokens_is_accepted_as_a_no(browser_as, world):
    """A yes/no claim keeps "False" as its text: a no is an answer, never a blank."""
    proposal = make_proposal(world["invitation"], "spec", "tokens_scoped", "False")
    page = browser_as("tariq").get(reverse("portal:answers", args=[world["offer"].pk]))
    assert "API tokens scoped" in page.text
    response = _decide(browser_as("tariq"), proposal, decision="accept", note="API docs")
    assert response.status_code == 302
    assert DeclaredSpec.objects.get(offer=world["offer"]).tokens_scoped is False
    proposal.refresh_from_db()
    assert proposal.accepted_value == "False"
    claims = browser_as("tariq").get(reverse("offers:spec", args=[world["offer"].pk])).text
    assert "API tokens scoped" in claims and "Li Wei" in claims


@pytest.mark.parametrize(
    ("section", "claim", "value", "right", "wrong"),
    [
        ("spec", "cards_per_node", "8", "tariq", "priya"),
        ("commercial", "contract_term_months", "24", "priya", "tariq"),
        ("exit", "data_deletion_days", "30", "lena", "priya"),
    ],
)
def test_each_section_is_decided_by_its_role(
    browser_as, world, section, claim, value, right, wrong
):
    proposal = make_proposal(world["invitation"], section, claim, value)
    assert _decide(browser_as(wrong), proposal, decision="accept").status_code == 403
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING
    assert _decide(browser_as(right), proposal, decision="accept").status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED


def test_procurement_accepts_a_price_with_changes(browser_as, world):
    proposal = make_proposal(world["invitation"], "commercial", "unit_price", "3.40")
    response = _decide(
        browser_as("priya"), proposal, decision="edit", value="2.95", note="As negotiated"
    )
    assert response.status_code == 302
    offer = Offer.objects.get(pk=world["offer"].pk)
    assert offer.unit_price == Decimal("2.95")
    answers = browser_as("aude").get(reverse("portal:answers", args=[offer.pk])).text
    assert "2.95<" in answers and "2.950000" not in answers
    assert _latest_reason(offer) == f"{VENDOR}, accepted with changes by Priya: As negotiated"
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.EDITED and proposal.accepted_value == "2.95"
    assert proposal.value == "3.40"  # what the vendor said stays


def test_legal_accepts_a_clause_answer_into_the_checklist_item(browser_as, world):
    item = _item(world["offer"])
    proposal = make_proposal(
        world["invitation"],
        "clause",
        item.key,
        "Audits on 30 days' notice",
        clause_reference="§ 9.1",
    )
    assert _decide(browser_as("tariq"), proposal, decision="accept").status_code == 403
    assert _decide(browser_as("lena"), proposal, decision="accept").status_code == 302
    item.refresh_from_db()
    assert item.excerpt == "Audits on 30 days' notice" and item.clause_reference == "§ 9.1"
    assert _latest_reason(item) == f"{VENDOR}, accepted by Lena"


def test_legal_accepts_an_exit_term_into_the_contract_terms(browser_as, world):
    proposal = make_proposal(world["invitation"], "exit", "data_deletion_days", "30")
    assert _decide(browser_as("lena"), proposal, decision="accept").status_code == 302
    terms = ContractTerms.objects.get(checklist__offer=world["offer"])
    assert terms.data_deletion_days == 30
    assert _latest_reason(terms) == f"{VENDOR}, accepted by Lena"


def test_the_administrator_decides_any_section(browser_as, world):
    proposal = make_proposal(world["invitation"], "commercial", "contract_term_months", "36")
    assert _decide(browser_as("ada"), proposal, decision="accept").status_code == 302
    assert Offer.objects.get(pk=world["offer"].pk).contract_term_months == 36


def test_the_auditor_decides_nothing(browser_as, world):
    proposal = make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    assert _decide(browser_as("aude"), proposal, decision="accept").status_code == 403


def test_a_rejection_says_why_and_leaves_the_record(browser_as, world):
    proposal = make_proposal(world["invitation"], "spec", "memory_per_card_gib", "200")
    refused = _decide(browser_as("tariq"), proposal, decision="reject")
    assert refused.status_code == 400 and "Say why" in refused.text
    assert (
        _decide(browser_as("tariq"), proposal, decision="reject", note="No such card").status_code
        == 302
    )
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED and proposal.review_note == "No such card"
    assert DeclaredSpec.objects.get(offer=world["offer"]).memory_per_card_gib is None
    page = browser_as("aude").get(reverse("portal:answers", args=[world["offer"].pk]))
    assert "No such card" in page.text and "Rejected" in page.text


def test_a_question_is_e_mailed_in_the_contacts_language(browser_as, world, priya):
    invitation, _secret = make_invitation(
        priya,
        world["offer"],
        email="zhang@vendor.example",
        contact_name="Zhang",
        language="zh-hans",
    )
    mail.outbox.clear()
    proposal = make_proposal(invitation, "spec", "cards_per_node", "16")
    assert _decide(browser_as("tariq"), proposal, decision="question").status_code == 400
    response = _decide(browser_as("tariq"), proposal, decision="question", note="16 per node?")
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.QUESTIONED
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["zhang@vendor.example"]
    assert "16 per node?" in mail.outbox[0].body
    assert "邀请" in mail.outbox[0].body  # open the answers with the link of the invitation
    assert "/portal/" not in mail.outbox[0].body  # no link is stored to send
    # A questioned answer can still be decided once the vendor replied.
    proposal.refresh_from_db()
    assert _decide(browser_as("tariq"), proposal, decision="accept").status_code == 302


def test_a_second_decision_is_a_conflict_not_an_error(browser_as, world, tariq):
    proposal = make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    stale = proposal.version
    assert _decide(browser_as("tariq"), proposal, decision="accept").status_code == 302
    proposal.refresh_from_db()
    again = _decide(browser_as("ada"), proposal, decision="reject", note="Too late")
    assert again.status_code == 409 and "already decided" in again.text
    proposal.version = stale
    old = _decide(browser_as("ada"), proposal, decision="reject", note="Too late")
    assert old.status_code == 409
    with pytest.raises(StateConflict):
        review.proposal_decide(actor=tariq, proposal=proposal, decision="reject", note="x")
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED


def test_a_stale_version_is_a_conflict(browser_as, world):
    proposal = make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    proposal.version -= 1
    response = _decide(browser_as("tariq"), proposal, decision="accept")
    assert response.status_code == 409
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


@pytest.mark.parametrize(
    ("section", "claim", "value", "who"),
    [
        ("spec", "memory_per_card_gib", "-5", "tariq"),
        ("spec", "cards_per_node", "eight", "tariq"),
        ("commercial", "prepayment_ratio", "170", "priya"),  # percent: at most 100
        ("exit", "sla_availability_pct", "140", "lena"),
    ],
)
def test_a_value_the_record_refuses_refuses_the_decision(
    browser_as, world, section, claim, value, who
):
    proposal = make_proposal(world["invitation"], section, claim, "1")
    offer_before = Offer.objects.get(pk=world["offer"].pk).version
    spec_before = DeclaredSpec.objects.get(offer=world["offer"]).version
    response = _decide(browser_as(who), proposal, decision="edit", value=value)
    assert response.status_code == 400
    assert "was not recorded" in response.text
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING and proposal.accepted_value == ""
    assert Offer.objects.get(pk=world["offer"].pk).version == offer_before
    assert DeclaredSpec.objects.get(offer=world["offer"]).version == spec_before
    assert not ContractTerms.objects.filter(checklist__offer=world["offer"]).exists()


def test_a_proposal_is_reached_only_through_its_offer(browser_as, world, priya):
    proposal = make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    other = make_offer_with_checklist(priya)
    url = reverse("portal:proposal-decide", args=[other.pk, proposal.pk])
    assert browser_as("tariq").post(url, {"decision": "accept"}).status_code == 404


@pytest.mark.parametrize("who", ("priya", "lena", "tariq"))
def test_reviewers_accept_or_reject_documents(browser_as, world, who):
    document = make_document(world["invitation"])
    url = reverse("portal:document-decide", args=[world["offer"].pk, document.pk])
    client = browser_as(who)
    assert client.post(url, {"decision": "reject"}).status_code == 400
    assert client.post(url, {"decision": "reject", "note": "Unsigned"}).status_code == 302
    document.refresh_from_db()
    assert document.status == DocumentStatus.REJECTED and document.review_note == "Unsigned"
    again = client.post(url, {"decision": "accept"})
    assert again.status_code == 409


def test_the_auditor_cannot_decide_documents(browser_as, world):
    document = make_document(world["invitation"])
    url = reverse("portal:document-decide", args=[world["offer"].pk, document.pk])
    assert browser_as("aude").post(url, {"decision": "accept"}).status_code == 403


@pytest.mark.parametrize("who", ("priya", "lena", "tariq", "aude", "ada"))
def test_staff_download_vendor_documents(browser_as, world, who):
    content = b"%PDF-1.4 authorisation\n"
    document = make_document(world["invitation"], content)
    url = reverse("portal:document-download", args=[world["offer"].pk, document.pk])
    response = browser_as(who).get(url)
    assert response.status_code == 200 and b"".join(response.streaming_content) == content


def test_a_changed_vendor_document_is_refused(browser_as, world):
    document = make_document(world["invitation"])
    replace_stored(document.storage_name, b"%PDF-1.4 altered")
    url = reverse("portal:document-download", args=[world["offer"].pk, document.pk])
    assert browser_as("aude").get(url).status_code == 409
    assert world["offer"].case.file_integrity_alarms.filter(resolved_at__isnull=True).count() == 1


def test_a_document_is_downloaded_only_through_its_offer(browser_as, world, priya, client):
    document = make_document(world["invitation"])
    other = make_offer_with_checklist(priya)
    url = reverse("portal:document-download", args=[other.pk, document.pk])
    assert browser_as("aude").get(url).status_code == 404
    client.logout()
    own = reverse("portal:document-download", args=[world["offer"].pk, document.pk])
    assert "login" in client.get(own).url


def test_the_answers_page_in_chinese(browser_as, world):
    make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    page = browser_as("tariq").get(
        reverse("portal:answers", args=[world["offer"].pk]), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9"
    )
    assert page.status_code == 200
    assert "供应商的答复" in page.text and "记录这些决定" in page.text


def test_the_proposal_keeps_its_own_history(browser_as, world):
    proposal = make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    _decide(browser_as("tariq"), proposal, decision="reject", note="Not in the quote")
    assert _latest_reason(proposal) == "Vendor's answer rejected by Tariq"


def test_a_question_that_cannot_be_e_mailed_changes_nothing(browser_as, world, settings):
    proposal = make_proposal(world["invitation"], "spec", "cards_per_node", "16")
    settings.EMAIL_BACKEND = "tests.portal.test_invitation_pages.FailingBackend"
    response = _decide(browser_as("tariq"), proposal, decision="question", note="Really 16?")
    assert response.status_code == 400 and "could not be e-mailed" in response.text
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING and proposal.review_note == ""


def test_exit_terms_wait_for_the_clause_checklist(browser_as, priya):
    offer = make_offer(priya, make_case(priya))
    invitation, _secret = make_invitation(priya, offer)
    proposal = make_proposal(invitation, "exit", "data_deletion_days", "30")
    response = _decide(browser_as("lena"), proposal, decision="accept")
    assert response.status_code == 400 and "no clause checklist yet" in response.text
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING
    # The refusal offers to start the checklist, right there.
    start = reverse("contracts:checklist-create", args=[offer.pk])
    assert f'action="{start}"' in response.text
    assert browser_as("lena").post(start).status_code == 302
    response = _decide(browser_as("lena"), proposal, decision="accept")
    assert f'action="{start}"' not in response.text


def test_the_answers_page_reads_a_fixed_number_of_queries(browser_as, world, lena):
    client = browser_as("lena")
    url = reverse("portal:answers", args=[world["offer"].pk])
    make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    make_document(world["invitation"])
    client.get(url)
    with CaptureQueriesContext(connection) as first:
        client.get(url)
    items = ChecklistItem.objects.filter(checklist__offer=world["offer"])
    for item in items[:4]:
        proposal = make_proposal(
            world["invitation"], "clause", item.key, "Yes", clause_reference="1"
        )
        review.proposal_decide(actor=lena, proposal=proposal, decision="accept")
    for name in ("data_deletion_days", "data_export_days"):
        make_proposal(world["invitation"], "exit", name, "30")
    make_document(world["invitation"], name="more.pdf")
    with CaptureQueriesContext(connection) as later:
        client.get(url)
    assert len(later) == len(first)

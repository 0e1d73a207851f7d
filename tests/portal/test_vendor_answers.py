"""Li Wei answers for her offer, section by section, and sees how each answer stands.

priya (procurement) invited her; lena (legal) and tariq (tech lead) review what she
proposes. Nothing she sends touches the offer's records: it waits as a proposal.
"""

import pytest

from apps.offers.models import DeclaredSpec
from apps.portal.claims import clause_items
from apps.portal.models import InvitationUse, Proposal, ProposalStatus, UseKind
from tests.portal.factories import make_invitation, open_portal
from tests.portal.vendor import reply_url, reviewed, section_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def portal(client, priya):
    invitation, secret = make_invitation(priya)
    open_portal(client, invitation)
    return invitation, secret


def _proposals(invitation, section):
    return {
        p.claim: (p.value, p.status)
        for p in Proposal.objects.filter(invitation=invitation, section=section)
    }


def _uses(invitation, kind):
    return list(InvitationUse.objects.filter(invitation=invitation, kind=kind))


def test_the_declared_spec_is_proposed_and_waits_for_review(client, portal):
    invitation, secret = portal
    page = client.get(section_url(secret, "spec"))
    assert page.status_code == 200
    assert "Memory per card (GiB)" in page.text
    assert "NVIDIA H200 SXM 141GB" in page.text  # what the offer's record holds now

    answer = client.post(
        section_url(secret, "spec"),
        {
            "accelerator_model": "NVIDIA H200 SXM 141GB",
            "memory_per_card_gib": "141",
            "cards_per_node": "8",
            "intra_node_interconnect": "nvlink",
            "driver_version": "",
        },
    )
    assert answer.status_code == 302 and answer.url == section_url(secret, "spec")
    assert _proposals(invitation, "spec") == {
        "accelerator_model": ("NVIDIA H200 SXM 141GB", "pending"),
        "memory_per_card_gib": ("141", "pending"),
        "cards_per_node": ("8", "pending"),
        "intra_node_interconnect": ("nvlink", "pending"),
    }
    [use] = _uses(invitation, UseKind.PROPOSED)
    assert use.detail == "Declared spec: 4 answers"
    proposal = Proposal.objects.get(invitation=invitation, claim="cards_per_node")
    history = proposal.history.get()
    assert history.history_user is None
    assert history.history_change_reason == "Proposed by the vendor (Li Wei)"
    # The offer's records are untouched until a reviewer accepts.
    assert DeclaredSpec.objects.get(offer=invitation.offer).cards_per_node is None

    shown = client.get(section_url(secret, "spec")).text
    assert "Awaiting review" in shown and "NVLink / NVSwitch" in shown


def test_the_vendor_answers_yes_or_no_on_scoped_tokens(client, portal):
    invitation, secret = portal
    page = client.get(section_url(secret, "spec")).text
    assert "API tokens scoped" in page
    assert '<option value="True">yes</option>' in page
    assert '<option value="False">no</option>' in page
    answer = client.post(section_url(secret, "spec"), {"tokens_scoped": "False"})
    assert answer.status_code == 302
    assert _proposals(invitation, "spec") == {"tokens_scoped": ("False", "pending")}
    refused = client.post(section_url(secret, "spec"), {"tokens_scoped": "perhaps"})
    assert refused.status_code == 400 and "perhaps" in refused.text
    assert _proposals(invitation, "spec") == {"tokens_scoped": ("False", "pending")}


def test_commercial_and_exit_terms_are_proposed(client, portal):
    invitation, secret = portal
    client.post(
        section_url(secret, "commercial"),
        {"unit_price": "2.95", "billing_basis": "per_hour", "currency": "USD"},
    )
    client.post(
        section_url(secret, "exit"),
        {"sla_availability_pct": "99.9", "data_deletion_days": "30", "image_format": "oci"},
    )
    assert _proposals(invitation, "commercial") == {
        "unit_price": ("2.95", "pending"),
        "billing_basis": ("per_hour", "pending"),
        "currency": ("USD", "pending"),
    }
    assert _proposals(invitation, "exit")["data_deletion_days"] == ("30", "pending")
    details = [use.detail for use in _uses(invitation, UseKind.PROPOSED)]
    assert details == ["Commercial terms: 3 answers", "Exit and data handling: 3 answers"]


def test_each_clause_gets_an_answer_and_a_reference(client, portal):
    invitation, secret = portal
    first, second = clause_items(invitation.offer)[:2]
    page = client.get(section_url(secret, "clause"))
    assert page.status_code == 200
    assert f"{first.number}. {first.title}" in page.text
    answer = client.post(
        section_url(secret, "clause"),
        {first.key: "Seven days' notice.", f"{first.key}.reference": "MSA 7.2", second.key: ""},
    )
    assert answer.status_code == 302
    [proposal] = Proposal.objects.filter(invitation=invitation, section="clause")
    assert (proposal.claim, proposal.value, proposal.clause_reference) == (
        first.key,
        "Seven days' notice.",
        "MSA 7.2",
    )


def test_one_bad_answer_refuses_the_whole_submit(client, portal):
    invitation, secret = portal
    page = client.post(
        section_url(secret, "spec"),
        {"memory_per_card_gib": "lots", "cards_per_node": "0", "driver_version": "550.54"},
    )
    assert page.status_code == 400
    assert "Nothing was saved" in page.text
    assert page.text.count('class="error"') >= 2  # each bad field named beside it
    assert not Proposal.objects.filter(invitation=invitation).exists()
    assert not _uses(invitation, UseKind.PROPOSED)

    key = clause_items(invitation.offer)[0].key
    for data in (
        {key: "Yes", f"{key}.reference": "x" * 201},
        {key: "x" * 5001},
        {key: "", f"{key}.reference": "MSA 3"},
    ):
        assert client.post(section_url(secret, "clause"), data).status_code == 400
    assert not Proposal.objects.filter(invitation=invitation).exists()


def test_a_blank_answer_erases_nothing_and_the_same_answer_changes_nothing(client, portal):
    invitation, secret = portal
    client.post(section_url(secret, "spec"), {"cards_per_node": "8"})
    proposal = Proposal.objects.get(invitation=invitation)
    client.post(section_url(secret, "spec"), {"cards_per_node": ""})
    client.post(section_url(secret, "spec"), {"cards_per_node": " 8 "})
    proposal.refresh_from_db()
    assert (proposal.value, proposal.version) == ("8", 1)
    assert len(_uses(invitation, UseKind.PROPOSED)) == 1

    client.post(section_url(secret, "spec"), {"cards_per_node": "4"})
    proposal.refresh_from_db()
    assert (proposal.value, proposal.status) == ("4", "pending")
    assert proposal.history.count() == 2


@pytest.mark.parametrize("status", [ProposalStatus.ACCEPTED, ProposalStatus.EDITED])
def test_an_accepted_answer_is_settled(client, portal, tariq, status):
    invitation, secret = portal
    client.post(section_url(secret, "spec"), {"cards_per_node": "8"})
    proposal = reviewed(Proposal.objects.get(invitation=invitation), tariq, status, accepted="8")
    page = client.get(section_url(secret, "spec"))
    assert 'name="cards_per_node"' not in page.text
    assert "can no longer be changed" in page.text
    assert ("Accepted with changes" in page.text) == (status == ProposalStatus.EDITED)

    refused = client.post(
        section_url(secret, "spec"), {"cards_per_node": "4", "local_nvme_tb": "3"}
    )
    assert refused.status_code == 400
    assert "accepted and can no longer be changed" in refused.text
    proposal.refresh_from_db()
    assert (proposal.value, proposal.status) == ("8", status)
    assert not Proposal.objects.filter(invitation=invitation, claim="local_nvme_tb").exists()


def test_a_rejected_answer_can_be_proposed_again(client, portal, tariq):
    invitation, secret = portal
    client.post(section_url(secret, "spec"), {"cards_per_node": "8"})
    reviewed(Proposal.objects.get(invitation=invitation), tariq, "rejected", "The quote says 4.")
    page = client.get(section_url(secret, "spec"))
    assert "Rejected" in page.text and "The quote says 4." in page.text

    assert client.post(section_url(secret, "spec"), {"cards_per_node": "4"}).status_code == 302
    proposal = Proposal.objects.get(invitation=invitation)
    assert (proposal.value, proposal.status) == ("4", "pending")
    assert proposal.history.first().history_change_reason == (
        "Proposed again by the vendor (Li Wei)"
    )
    assert proposal.history.filter(review_note="The quote says 4.").exists()


def test_a_questioned_answer_is_answered_with_a_reply(client, portal, tariq):
    invitation, secret = portal
    client.post(section_url(secret, "spec"), {"intra_node_bandwidth_gbps": "900"})
    proposal = reviewed(
        Proposal.objects.get(invitation=invitation), tariq, "questioned", "Per card or per node?"
    )
    page = client.get(section_url(secret, "spec"))
    assert "Per card or per node?" in page.text
    assert f'name="reply-{proposal.pk}-reply"' in page.text
    assert 'name="intra_node_bandwidth_gbps"' not in page.text

    # Changed through the section's form instead: refused, the question stands.
    refused = client.post(section_url(secret, "spec"), {"intra_node_bandwidth_gbps": "450"})
    assert refused.status_code == 400 and "reply to the question" in refused.text

    url = reply_url(secret, "spec", proposal.pk)
    prefix = f"reply-{proposal.pk}"
    empty = client.post(url, {f"{prefix}-reply": " ", f"{prefix}-value": "450"})
    assert empty.status_code == 400
    bad = client.post(url, {f"{prefix}-reply": "Per card.", f"{prefix}-value": "fast"})
    assert bad.status_code == 400
    proposal.refresh_from_db()
    assert (proposal.status, proposal.value, proposal.vendor_reply) == ("questioned", "900", "")

    done = client.post(url, {f"{prefix}-reply": "Per card, both ways.", f"{prefix}-value": "450"})
    assert done.status_code == 302
    proposal.refresh_from_db()
    assert (proposal.status, proposal.value, proposal.vendor_reply) == (
        "pending",
        "450",
        "Per card, both ways.",
    )
    assert proposal.review_note == "Per card or per node?"
    [use] = _uses(invitation, UseKind.REPLIED)
    assert use.detail == "Declared spec: intra-node bandwidth (GB/s per card) (new answer)"
    # Answered: no second reply until the reviewer asks again.
    again = client.post(url, {f"{prefix}-reply": "And again."})
    assert again.status_code == 409
    assert "Per card, both ways." in client.get(section_url(secret, "spec")).text


def test_a_section_that_does_not_exist_is_404(client, portal):
    _invitation, secret = portal
    assert client.get(section_url(secret, "scores")).status_code == 404


def test_a_questioned_clause_is_answered_with_a_reply_and_a_new_answer(client, portal, lena):
    invitation, secret = portal
    item = clause_items(invitation.offer)[0]
    client.post(section_url(secret, "clause"), {item.key: "Yes.", f"{item.key}.reference": "7"})
    proposal = reviewed(Proposal.objects.get(invitation=invitation), lena, "questioned", "Where?")
    prefix = f"reply-{proposal.pk}"
    answer = client.post(
        reply_url(secret, "clause", proposal.pk),
        {f"{prefix}-reply": "Annex B.", f"{prefix}-value": "Yes, within 30 days."},
    )
    assert answer.status_code == 302
    proposal.refresh_from_db()
    assert (proposal.status, proposal.value, proposal.clause_reference) == (
        "pending",
        "Yes, within 30 days.",
        "7",
    )
    [use] = _uses(invitation, UseKind.REPLIED)
    assert use.detail == f"Contract clauses: {item.number}. {item.title} (new answer)"
    # A reply is only taken in the proposal's own section.
    assert client.post(reply_url(secret, "spec", proposal.pk), {}).status_code == 404


def test_the_overview_links_every_section_and_the_documents(client, portal):
    _invitation, secret = portal
    page = client.get(f"/portal/{secret}/answers/").text
    for section in ("spec", "commercial", "clause", "exit"):
        assert f'href="{section_url(secret, section)}"' in page
    assert f'href="/portal/{secret}/answers/documents/"' in page


@pytest.mark.parametrize("section", ["spec", "commercial", "clause", "exit"])
def test_a_section_page_reads_a_fixed_number_of_queries(
    client, portal, section, django_assert_max_num_queries
):
    invitation, secret = portal
    client.post(section_url(secret, "spec"), {"cards_per_node": "8", "local_nvme_tb": "3"})
    with django_assert_max_num_queries(6):
        assert client.get(section_url(secret, section)).status_code == 200

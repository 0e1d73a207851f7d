"""A section of a vendor's answers reviewed in one form: every answer accepted as proposed
in one submit, or decided row by row, recorded together or not at all, and the page
brought back to the section."""

import pytest
from django.core import mail
from django.urls import reverse

from apps.offers.models import DeclaredSpec, Offer
from apps.portal.models import ProposalStatus
from apps.portal.services.invitations import invitation_revoke
from tests.factories import make_case, make_offer
from tests.portal.factories import make_invitation, make_offer_with_checklist
from tests.portal.review_factories import make_proposal

pytestmark = pytest.mark.django_db

# An answer for every claim of the declared spec, as a vendor types them.
SPEC_ANSWERS = {
    "accelerator_model": "NVIDIA H200 SXM 141GB",
    "accelerator_count": "16",
    "memory_per_card_gib": "141",
    "cards_per_node": "8",
    "intra_node_interconnect": "nvlink",
    "intra_node_bandwidth_gbps": "900",
    "inter_node_network": "infiniband",
    "inter_node_bandwidth_gbit": "400",
    "local_nvme_tb": "30",
    "driver_version": "550.54.15",
    "cuda_version": "12.4",
    "runtime_versions": "vLLM 0.6.3, NCCL 2.21.5",
    "rate_limit_rps": "50",
    "tokens_scoped": "True",
    "throughput_tokens_per_s": "12000",
    "throughput_requests_per_s": "40",
}


@pytest.fixture
def world(priya, lena):
    offer = make_offer_with_checklist(priya)
    invitation, _secret = make_invitation(priya, offer)
    mail.outbox.clear()
    return {"offer": offer, "invitation": invitation}


def _spec_answers(invitation) -> dict:
    return {
        name: make_proposal(invitation, "spec", name, value) for name, value in SPEC_ANSWERS.items()
    }


def _url(offer, section="spec") -> str:
    return reverse("portal:section-decide", args=[offer.pk, section])


def _row(proposal, decision="", note="", value="") -> dict:
    prefix = f"p{proposal.pk}"
    return {
        f"{prefix}-decision": decision,
        f"{prefix}-note": note,
        f"{prefix}-value": value,
        f"{prefix}-version": proposal.version,
    }


def _form(proposals, **rows) -> dict:
    """Every row of the section as the page posts it; ``rows`` names the filled ones."""
    data = {}
    for name, proposal in proposals.items():
        data |= _row(proposal, *rows.get(name, ()))
    return data


def _statuses(proposals) -> dict:
    return {name: type(p).objects.get(pk=p.pk).status for name, p in proposals.items()}


def test_the_sixteen_spec_answers_are_accepted_in_one_submit(browser_as, world, tariq):
    proposals = _spec_answers(world["invitation"])
    assert len(proposals) == 16
    client = browser_as("tariq")
    page = client.get(reverse("portal:answers", args=[world["offer"].pk]))
    assert page.text.count('name="accept_all"') == 1  # one section the tech lead decides

    response = client.post(_url(world["offer"]), {**_form(proposals), "accept_all": "1"})

    assert response.status_code == 302
    answers = reverse("portal:answers", args=[world["offer"].pk])
    assert response["Location"] == f"{answers}#section-spec"  # back where the reader was
    assert set(_statuses(proposals).values()) == {ProposalStatus.ACCEPTED}
    spec = DeclaredSpec.objects.get(offer=world["offer"])
    assert spec.memory_per_card_gib == 141 and spec.cards_per_node == 8
    assert spec.driver_version == "550.54.15" and spec.tokens_scoped is True
    offer = Offer.objects.get(pk=world["offer"].pk)
    assert offer.accelerator_model == "NVIDIA H200 SXM 141GB" and offer.accelerator_count == 16
    followed = client.get(answers)
    assert "16 decisions recorded." in followed.text
    assert 'name="accept_all"' not in followed.text  # nothing is left to decide


def test_rows_are_decided_one_by_one_and_blank_rows_stay(browser_as, world, tariq):
    proposals = _spec_answers(world["invitation"])
    rows = {
        "memory_per_card_gib": ("accept", "Datasheet"),
        "cards_per_node": ("edit", "Quote says 4", "4"),
        "driver_version": ("reject", "Too old for our image"),
    }
    response = browser_as("tariq").post(_url(world["offer"]), _form(proposals, **rows))

    assert response.status_code == 302
    statuses = _statuses(proposals)
    assert statuses["memory_per_card_gib"] == ProposalStatus.ACCEPTED
    assert statuses["cards_per_node"] == ProposalStatus.EDITED
    assert statuses["driver_version"] == ProposalStatus.REJECTED
    assert list(statuses.values()).count(ProposalStatus.PENDING) == 13
    spec = DeclaredSpec.objects.get(offer=world["offer"])
    assert spec.cards_per_node == 4 and spec.driver_version != "550.54.15"


def test_accept_all_keeps_the_rows_decided_otherwise(browser_as, world, tariq):
    proposals = _spec_answers(world["invitation"])
    rows = {"cards_per_node": ("question", "Eight per node in every region?")}
    data = {**_form(proposals, **rows), "accept_all": "1"}
    assert browser_as("tariq").post(_url(world["offer"]), data).status_code == 302
    statuses = _statuses(proposals)
    assert statuses.pop("cards_per_node") == ProposalStatus.QUESTIONED
    assert set(statuses.values()) == {ProposalStatus.ACCEPTED}
    [question] = mail.outbox
    assert "Eight per node in every region?" in question.body


def test_one_refused_row_refuses_the_section_whole(browser_as, world, tariq):
    proposals = _spec_answers(world["invitation"])
    rows = {
        "memory_per_card_gib": ("accept",),
        "driver_version": ("reject",),  # a rejection must say why
    }
    response = browser_as("tariq").post(_url(world["offer"]), _form(proposals, **rows))

    assert response.status_code == 400
    assert "Driver version" in response.text and "Say why the answer is rejected." in response.text
    assert set(_statuses(proposals).values()) == {ProposalStatus.PENDING}
    assert DeclaredSpec.objects.get(offer=world["offer"]).memory_per_card_gib is None
    # The reader's entries are still in the form.
    assert 'value="accept" selected' in response.text


def test_a_value_the_record_refuses_names_its_row(browser_as, world, tariq):
    proposals = _spec_answers(world["invitation"])
    rows = {"cards_per_node": ("edit", "", "minus three")}
    response = browser_as("tariq").post(_url(world["offer"]), _form(proposals, **rows))
    assert response.status_code == 400 and "Cards per node" in response.text
    assert set(_statuses(proposals).values()) == {ProposalStatus.PENDING}


def test_nothing_chosen_is_a_clear_refusal(browser_as, world, tariq):
    proposals = _spec_answers(world["invitation"])
    response = browser_as("tariq").post(_url(world["offer"]), _form(proposals))
    assert response.status_code == 400
    assert "Choose a decision for at least one answer." in response.text


def test_a_row_changed_meanwhile_is_a_conflict_for_the_whole_section(browser_as, world, tariq):
    proposals = _spec_answers(world["invitation"])
    data = {**_form(proposals), "accept_all": "1"}
    stale = proposals["cards_per_node"]
    data[f"p{stale.pk}-version"] = stale.version - 1
    response = browser_as("tariq").post(_url(world["offer"]), data)
    assert response.status_code == 409
    assert set(_statuses(proposals).values()) == {ProposalStatus.PENDING}


def test_accept_all_leaves_answers_of_a_closed_invitation(browser_as, world, priya, tariq):
    open_one = make_proposal(world["invitation"], "spec", "cards_per_node", "8")
    closed, _secret = make_invitation(priya, world["offer"], email="other@vendor.example")
    closed_one = make_proposal(closed, "spec", "memory_per_card_gib", "141")
    invitation_revoke(actor=priya, invitation=closed, reason="Wrong contact")
    closed_one.refresh_from_db()
    proposals = {"open": open_one}
    if closed_one.status == ProposalStatus.PENDING:  # still awaiting a decision
        proposals["closed"] = closed_one
    data = {**_form(proposals), "accept_all": "1"}
    assert browser_as("tariq").post(_url(world["offer"]), data).status_code == 302
    assert type(open_one).objects.get(pk=open_one.pk).status == ProposalStatus.ACCEPTED
    assert type(closed_one).objects.get(pk=closed_one.pk).status != ProposalStatus.ACCEPTED


@pytest.mark.parametrize(
    ("who", "status"),
    [("tariq", 302), ("ada", 302), ("priya", 403), ("lena", 403), ("aude", 403)],
)
def test_each_role_decides_only_its_own_section(browser_as, world, tariq, who, status):
    proposals = _spec_answers(world["invitation"])
    data = {**_form(proposals), "accept_all": "1"}
    assert browser_as(who).post(_url(world["offer"]), data).status_code == status
    expected = ProposalStatus.ACCEPTED if status == 302 else ProposalStatus.PENDING
    assert set(_statuses(proposals).values()) == {expected}


def test_a_visitor_not_signed_in_is_sent_to_sign_in(client, world):
    proposals = _spec_answers(world["invitation"])
    response = client.post(_url(world["offer"]), {**_form(proposals), "accept_all": "1"})
    assert response.status_code == 302 and "login" in response["Location"]
    assert set(_statuses(proposals).values()) == {ProposalStatus.PENDING}


def test_an_unknown_section_is_not_found(browser_as, world):
    assert browser_as("tariq").post(_url(world["offer"], "pricing")).status_code == 404


def test_the_answers_page_offers_one_form_per_section_the_reader_decides(browser_as, world):
    _spec_answers(world["invitation"])
    make_proposal(world["invitation"], "exit", "data_deletion_days", "30")
    page = browser_as("ada").get(reverse("portal:answers", args=[world["offer"].pk])).text
    assert page.count('name="accept_all"') == 2
    assert _url(world["offer"], "spec") in page and _url(world["offer"], "exit") in page
    lena_page = browser_as("lena").get(reverse("portal:answers", args=[world["offer"].pk])).text
    assert _url(world["offer"], "exit") in lena_page and _url(world["offer"]) not in lena_page


def test_exit_terms_refused_for_want_of_a_checklist_offer_to_start_it(browser_as, priya):
    offer = make_offer(priya, make_case(priya))
    invitation, _secret = make_invitation(priya, offer)
    proposal = make_proposal(invitation, "exit", "data_deletion_days", "30")
    client = browser_as("lena")
    response = client.post(_url(offer, "exit"), {**_row(proposal, "accept")})
    assert response.status_code == 400 and "no clause checklist yet" in response.text
    start = reverse("contracts:checklist-create", args=[offer.pk])
    assert f'action="{start}"' in response.text
    assert client.post(start).status_code == 302  # the form it offers starts the checklist
    assert client.post(_url(offer, "exit"), {**_row(proposal, "accept")}).status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED

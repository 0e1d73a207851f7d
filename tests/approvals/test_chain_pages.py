"""The approval chain on the pages: the approval page shows each step, who decided and
when, and who is next; the next step's form is offered only to those it waits for, and
the decision page answers each role as the rule says; My work gives the next step's
approvers their item; the packet's approval chapter prints the chain as it ran."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from apps.approvals.models import ApprovalChain, ChainDecision, Delegation
from apps.approvals.packet import packet_section
from apps.approvals.services import chain_step_decide, policy_record_create
from apps.cases.models import ProcurementCase
from apps.casework.dashboard import dashboard_for
from apps.casework.inbox import work_items
from apps.core.roles import Role
from tests.approvals.test_chains import make_policy, pending, tech_lead_approves  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting_for_finance(people, pending):  # noqa: F811
    """The tech lead approved, legal approved: the case waits for finance."""
    case, offer = pending
    make_policy(people["ada"], {"role": Role.LEGAL, "label": "Legal review"},
                {"role": Role.FINANCE, "label": "Finance"})  # fmt: skip
    tech_lead_approves(people, case, offer)
    chain_step_decide(
        actor=people["lena"], case=case, step=1, decision="approved", comment="Terms read"
    )
    return case


def client_for(person) -> Client:
    client = Client()
    client.force_login(person)
    return client


def chain_url(case) -> str:
    return reverse("approvals:chain-decide", args=[case.pk])


def test_the_approval_page_shows_the_chain_and_offers_the_form_to_finance_only(
    people, waiting_for_finance
):
    case = waiting_for_finance
    url = reverse("approvals:case", args=[case.pk])
    page = client_for(people["fiona"]).get(url).content.decode()
    assert 'id="approval-chain"' in page
    assert "Legal review" in page and "Terms read" in page and "Lena" in page
    assert "Waiting for: Fiona" in page
    assert f'action="{chain_url(case)}"' in page
    for name in ("priya", "lena", "tariq", "aude", "ada"):
        other = client_for(people[name]).get(url).content.decode()
        assert 'id="approval-chain"' in other, name
        assert f'action="{chain_url(case)}"' not in other, name
        # The tech lead's form is gone while the chain runs.
        assert f'action="{reverse("approvals:decide", args=[case.pk])}"' not in other, name
    assert "Approval policy in force" in page


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("priya", 403),  # she raised and submitted the case
        ("lena", 403),  # she decided the step before
        ("tariq", 403),  # the tech lead decided the first step
        ("aude", 403),  # no step is the auditor's
        ("ada", 403),  # the administrator holds no finance role
        ("fiona", 302),
        (None, 302),  # to the sign-in page
    ],
)
def test_the_step_decision_answers_each_role(people, waiting_for_finance, name, expected):
    case = waiting_for_finance
    client = client_for(people[name]) if name else Client()
    response = client.post(
        chain_url(case), {"step": 2, "decision": "approved", "comment": "Within budget"}
    )
    assert response.status_code == expected
    decided = ChainDecision.objects.filter(chain__case=case, step=2).exists()
    assert decided is (name == "fiona")
    if name is None:
        assert "/login" in response["Location"] or "next=" in response["Location"]
    if name == "fiona":
        assert ProcurementCase.objects.get(pk=case.pk).status == ProcurementCase.Status.APPROVED


def test_a_bad_or_stale_post_is_told_clearly_and_writes_nothing(people, waiting_for_finance):
    case = waiting_for_finance
    client = client_for(people["fiona"])
    empty = client.post(chain_url(case), {"step": 2, "decision": "approved", "comment": ""})
    assert empty.status_code == 400
    not_due = client.post(chain_url(case), {"step": 1, "decision": "approved", "comment": "x"})
    assert not_due.status_code == 400
    assert "does not wait for a decision" in not_due.content.decode()
    assert not ChainDecision.objects.filter(chain__case=case, decided_by=people["fiona"]).exists()


def test_my_work_gives_the_next_step_to_its_approvers_and_their_delegates(
    people, waiting_for_finance
):
    case = waiting_for_finance
    today = timezone.localdate()
    policy_record_create(
        Delegation,
        actor=people["ada"],
        fields={
            "delegator": people["fiona"],
            "delegate": people["pablo"],
            "starts_on": today,
            "ends_on": today + timedelta(days=3),
            "note": "Away",
        },
    )
    chain = ApprovalChain.objects.get(case=case)
    key = f"chain:{chain.pk}:2"

    def keys(name):
        return {(i.case_id, i.key) for i in work_items(dashboard_for(people[name]))}

    assert (case.pk, key) in keys("fiona")
    assert (case.pk, key) in keys("pablo")
    for name in ("lena", "tariq", "priya", "aude"):
        assert (case.pk, key) not in keys(name), name
    # The tech lead's own item is gone: his step is decided.
    assert (case.pk, "decision") not in keys("tariq")
    item = next(i for i in work_items(dashboard_for(people["fiona"])) if i.key == key)
    assert client_for(people["fiona"]).get(item.url).status_code == 200


def test_the_packet_prints_the_chain_as_it_ran(people, waiting_for_finance):
    case = waiting_for_finance
    chain_step_decide(
        actor=people["fiona"], case=case, step=2, decision="approved", comment="Budgeted"
    )
    section = packet_section(ProcurementCase.objects.get(pk=case.pk))
    [state] = section.context["chains"]
    assert [s.status for s in state.steps] == ["done", "done"]
    from django.template.loader import render_to_string

    html = render_to_string(section.template, section.context)
    for text in ("Approval chains, as they ran", "Legal review", "Terms read", "Budgeted"):
        assert text in html, text


def test_the_tech_leads_form_sends_to_the_chain_while_it_runs(people, waiting_for_finance):
    case = waiting_for_finance
    response = client_for(people["tariq"]).get(reverse("approvals:decide", args=[case.pk]))
    assert response.status_code == 302
    assert response["Location"].endswith(f"/cases/{case.pk}/approval/#approval-chain")

"""Approval subject to acceptance: given while only the rented machine's gates are open,
closed when the named acceptance passes, lapsed (the case reopened, every approver told)
when it does not pass by its deadline; through the services, the API and the pages."""

import re
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from apps.acceptance.conditions import condition_states, settle_conditions
from apps.approvals.models import AcceptanceCondition, Approval, ApprovalChain
from apps.approvals.services import approval_decide, case_submit_for_approval, chain_step_decide
from apps.cases.models import ProcurementCase
from apps.casework.dashboard import dashboard_for
from apps.casework.inbox import work_items
from apps.casework.packet.chapters import decision_line
from apps.core.models import Notification
from apps.core.roles import Role
from apps.core.signals import verification_recorded
from apps.evidence.models import SpecVerification
from apps.packets.document import packet_document
from apps.packets.models import DocumentKind
from apps.packets.signing import get_signer
from tests.acceptance.factories import make_evidence, make_plan
from tests.approvals.factories import make_ready_case, make_verification
from tests.approvals.test_chains import make_policy

Status = ProcurementCase.Status
pytestmark = pytest.mark.django_db

LAYERED = ["performance", "soak", "correctness"]


@pytest.fixture(autouse=True)
def _addresses(people):
    """Everyone has an e-mail address, so each hears what they are told."""
    for name, person in people.items():
        person.email = f"{name}@example.org"
        person.save(update_fields=["email"])


def _pending(people, *, measured=True):
    """priya's ready case, submitted; ``measured=False``: the offer's newest verification
    failed, so only the rented machine's gates are open."""
    case, offer, _others = make_ready_case(people)
    if not measured:
        make_verification(people["tariq"], offer, verdict="failed")
    case = case_submit_for_approval(actor=people["priya"], case=case)
    return case, offer


def _approve(people, case, offer, conditions, *, days=14, who="tariq"):
    return approval_decide(
        actor=people[who],
        case=case,
        decision="approved",
        comment="Order now; measure on delivery.",
        offer=offer,
        conditions=conditions,
        condition_deadline=timezone.localdate() + timedelta(days=days),
    )


def _told(event_text: str) -> set[str]:
    return set(
        Notification.objects.filter(summary__contains=event_text).values_list(
            "recipient__username", flat=True
        )
    )


def test_only_the_rented_machine_gates_may_be_open_and_identity_must_be_named(
    people, django_capture_on_commit_callbacks
):
    case, offer = _pending(people, measured=False)
    with pytest.raises(ValidationError) as plain:
        approval_decide(
            actor=people["tariq"], case=case, decision="approved", comment="Go", offer=offer
        )
    assert "Gate not held" in str(plain.value)
    with pytest.raises(ValidationError) as without_identity:
        _approve(people, case, offer, ["performance"])
    assert "hardware identity" in str(without_identity.value)

    with django_capture_on_commit_callbacks(execute=True):
        approval = _approve(people, case, offer, ["performance", "identity"])

    assert isinstance(approval, Approval) and approval.condition_open
    # Kept in their fixed order, whatever order they were named in.
    assert approval.conditions == ["identity", "performance"]
    assert approval.condition_deadline == timezone.localdate() + timedelta(days=14)
    assert ProcurementCase.objects.get(pk=case.pk).status == Status.APPROVED
    # The runs to come are expected to change the evidence: it is not bound yet.
    assert approval.bound_state["evidence"] == [] and approval.bound_state["verification"] is None
    assert "subject to acceptance" in _told_texts(people["priya"])


def _told_texts(person) -> str:
    return " ".join(Notification.objects.filter(recipient=person).values_list("summary", flat=True))


def test_a_gate_other_than_the_rented_machine_s_refuses_even_subject_to_acceptance(people):
    case, offer = _pending(people)
    other = next(o for o in case.offers.all() if o.pk != offer.pk)  # no checklist, no gates
    with pytest.raises(ValidationError) as refused:
        _approve(people, case, other, ["identity", "performance"])
    assert "Gate not held" in str(refused.value)
    assert not Approval.objects.filter(case=case).exists()


@pytest.mark.parametrize(
    ("conditions", "days", "field", "words"),
    [
        (["identity"], -1, "condition_deadline", "between today"),
        (["identity"], 181, "condition_deadline", "between today"),
        (["teleport"], 10, "conditions", "Unknown acceptance condition"),
    ],
)
def test_bad_conditions_are_refused_by_field(people, conditions, days, field, words):
    case, offer = _pending(people)
    with pytest.raises(ValidationError) as refused:
        _approve(people, case, offer, conditions, days=days)
    assert words in " ".join(refused.value.message_dict[field])
    with pytest.raises(ValidationError) as no_date:
        approval_decide(
            actor=people["tariq"],
            case=case,
            decision="approved",
            comment="Go",
            offer=offer,
            conditions=["soak"],
        )
    assert "condition_deadline" in no_date.value.message_dict
    with pytest.raises(ValidationError) as rejected:
        approval_decide(
            actor=people["tariq"],
            case=case,
            decision="rejected",
            comment="No",
            offer=offer,
            conditions=["soak"],
            condition_deadline=timezone.localdate(),
        )
    assert "Only an approval" in " ".join(rejected.value.message_dict["conditions"])


def test_the_condition_closes_when_the_named_acceptance_passes(
    people, tariq, passing_harness, django_capture_on_commit_callbacks
):
    case, offer = _pending(people)
    approval = _approve(people, case, offer, LAYERED)
    make_plan(tariq, offer)
    assert settle_conditions() == ([], [])  # nothing measured yet
    states = {s.condition.value: s for s in condition_states(approval)}
    assert not states["performance"].passed and states["performance"].reasons

    # The harness's run arrives: its verification is recorded, and the offer's
    # approvals subject to acceptance are settled once the upload commits.
    with django_capture_on_commit_callbacks(execute=True):
        make_evidence(tariq, offer)
        verification_recorded.send(sender=SpecVerification, offer_id=offer.pk)

    approval.refresh_from_db()
    assert approval.condition_met_at is not None and not approval.condition_open
    assert all(state.passed for state in condition_states(approval))
    # From now on the approval is bound to the evidence the acceptance passed on.
    assert approval.bound_state["evidence"] and approval.bound_state["verification"]
    assert ProcurementCase.objects.get(pk=case.pk).status == Status.APPROVED
    assert "tariq" in _told("passed (Performance baseline, Soak")
    assert "subject to acceptance of" in decision_line(case)
    assert "the acceptance passed on" in decision_line(case)


def test_the_approval_lapses_after_its_deadline_and_every_approver_is_told(
    people, tariq, django_capture_on_commit_callbacks
):
    case, offer = _pending(people)
    approval = _approve(people, case, offer, ["soak"], days=0)
    make_plan(tariq, offer)
    today = timezone.localdate()
    assert settle_conditions(today=today) == ([], [])  # due today: not lapsed yet

    with django_capture_on_commit_callbacks(execute=True):
        met, lapsed = settle_conditions(today=today + timedelta(days=1))

    assert met == [] and [a.pk for a in lapsed] == [approval.pk]
    approval.refresh_from_db()
    assert approval.lapsed_at is not None and approval.stale_at is not None
    assert "Soak, connectivity and environment" in approval.lapse_reason
    case.refresh_from_db()
    assert case.status == Status.PENDING_APPROVAL
    told = _told("lapsed")
    assert {"tariq", "priya"} <= told
    # A second run changes nothing: the approval lapsed once.
    assert settle_conditions(today=today + timedelta(days=2)) == ([], [])
    assert "lapsed" in decision_line(case)


def test_a_chain_carries_the_conditions_to_the_approval_and_tells_each_approver(
    people, ada, django_capture_on_commit_callbacks
):
    make_policy(ada, {"role": Role.LEGAL, "label": "Legal review"})
    case, offer = _pending(people)
    chain = _approve(people, case, offer, ["performance"], days=0)
    assert isinstance(chain, ApprovalChain) and chain.conditions == ["performance"]

    chain_step_decide(actor=people["lena"], case=case, step=1, decision="approved", comment="Ok")

    approval = Approval.objects.get(case=case, superseded_at__isnull=True)
    assert approval.conditions == ["performance"] and approval.condition_open
    with django_capture_on_commit_callbacks(execute=True):
        settle_conditions(today=timezone.localdate() + timedelta(days=1))
    assert {"tariq", "lena"} <= _told("lapsed")


def test_the_api_takes_conditions_and_returns_them(people, api_as):
    case, offer = _pending(people, measured=False)
    url = f"/api/v1/cases/{case.pk}/decision/"
    due = (timezone.localdate() + timedelta(days=30)).isoformat()
    body = {"decision": "approved", "offer": offer.pk, "comment": "Measure on delivery"}

    refused = api_as("tariq").post(url, {**body, "conditions": ["warp"]}, format="json")
    assert refused.status_code == 400 and "conditions" in refused.json()
    no_identity = api_as("tariq").post(
        url, {**body, "conditions": ["soak"], "condition_deadline": due}, format="json"
    )
    assert no_identity.status_code == 400

    made = api_as("tariq").post(
        url, {**body, "conditions": ["identity", "soak"], "condition_deadline": due}, format="json"
    )

    assert made.status_code == 201, made.content
    assert made.json()["conditions"] == ["identity", "soak"]
    assert made.json()["condition_deadline"] == due
    assert made.json()["condition_met_at"] is None and made.json()["lapsed_at"] is None


def test_the_page_offers_subject_to_acceptance_and_shows_where_each_condition_stands(
    people, browser_as
):
    case, offer = _pending(people, measured=False)
    client = browser_as("tariq")
    page = client.get(f"/cases/{case.pk}/approval/")
    text = page.content.decode()
    assert "Subject to acceptance" in text and "only subject to acceptance" in text
    due = timezone.localdate() + timedelta(days=21)

    missing = client.post(
        f"/cases/{case.pk}/approval/decide/",
        {"offer": offer.pk, "decision": "subject_to_acceptance", "comment": "Order now"},
    )
    assert missing.status_code == 200
    assert "Name what is still to be measured" in missing.content.decode()

    done = client.post(
        f"/cases/{case.pk}/approval/decide/",
        {
            "offer": offer.pk,
            "decision": "subject_to_acceptance",
            "conditions": ["identity", "correctness"],
            "condition_deadline": due.isoformat(),
            "comment": "Order now",
        },
    )

    assert done.status_code == 302
    approval = Approval.objects.get(case=case)
    assert approval.conditions == ["identity", "correctness"]
    shown = client.get(f"/cases/{case.pk}/approval/").content.decode()
    assert "waiting for the acceptance" in shown
    assert str(AcceptanceCondition.IDENTITY.label) in shown and "not passed yet" in shown


@pytest.mark.parametrize("kind", [DocumentKind.PACKET, DocumentKind.NETWORK_PLAN])
def test_the_packet_and_each_deliverable_say_the_approval_is_subject_to_acceptance(
    people, tariq, settings, tmp_path, kind
):
    settings.PACKET_SIGNING_DIR = tmp_path / "signing"
    case, offer = _pending(people)
    _approve(people, case, offer, ["soak"])

    document = packet_document(
        case,
        number="DIL-2026-000021",
        requested_by=tariq,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
        kind=kind,
    )

    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", document.html))
    cover = text.split("Contents")[0]
    assert "Decision in force" in cover
    assert "Approved subject to acceptance of Soak, connectivity and environment, due by" in cover


def test_my_work_dates_the_acceptance_by_the_approval_s_deadline(people, tariq):
    case, offer = _pending(people)
    _approve(people, case, offer, ["soak"], days=5)

    items = [
        item
        for item in work_items(dashboard_for(tariq))
        if item.case_id == case.pk and item.key.startswith("acceptance:")
    ]

    assert [item.key for item in items] == ["acceptance:plan"]
    assert items[0].due_on == timezone.localdate() + timedelta(days=5)
    assert items[0].days_left == 5


def test_a_lapsed_approval_reads_in_chinese_on_the_approval_page(people, tariq, browser_as):
    case, offer = _pending(people)
    _approve(people, case, offer, ["correctness"], days=0)
    make_plan(tariq, offer)
    settle_conditions(today=timezone.localdate() + timedelta(days=1))

    page = browser_as("tariq").get(f"/cases/{case.pk}/approval/", HTTP_ACCEPT_LANGUAGE="zh-Hans")

    text = page.content.decode()
    box = text[
        text.index('class="errorbox"') : text.index("</div>", text.index('class="errorbox"'))
    ]
    assert "审批已失效" in box and "项目需要重新作出决定" in box
    assert "正确性" in box  # the condition not passed, named in the reader's language
    # What the history keeps is the record's own words; the box speaks the reader's.
    assert "Acceptance not passed by" not in box

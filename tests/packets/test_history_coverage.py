"""The packet and the export carry the history of every tracked record of the case.

Both read the one source of a case's history (``apps.audit.sources``), which
finds every tracked model tied to a case by its foreign keys. These tests fail
when a tracked model is left out of the packet's change history or the export,
or when a tracked model is tied to no case without being named a shared record.
"""

import io
import json
import zipfile
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from apps.acceptance.models import AcceptancePlan, AcceptanceSignOff
from apps.approvals.assignments import assignment_set
from apps.approvals.models import (
    ApprovalChain,
    ApprovalPolicy,
    ChainDecision,
    FindingAcceptance,
    Reminder,
)
from apps.approvals.services import approval_decide
from apps.audit.exports import build_case_export
from apps.audit.sources import all_sources, case_sources
from apps.casework.models import Reassessment
from apps.comments.services import comment_add
from apps.contracts.models import ContractDocument
from apps.core.models import FileIntegrityAlarm
from apps.core.services import tracked_create
from apps.costs.demo import bill_csv
from apps.costs.models import CostImport, SpendCharge
from apps.costs.services import cost_import_create, threshold_alerts_send
from apps.evidence.models import Baseline, EvidenceBundle
from apps.packets.document import packet_document
from apps.packets.signing import get_signer
from apps.portal.models import (
    ClaimSection,
    DocumentKind,
    Proposal,
    QuestionnaireAnswer,
    QuestionnaireVersion,
    SentQuestionnaire,
    VendorDocument,
)
from apps.portal.services.invitations import invitation_create
from apps.sizing.services import requirement_spec_save
from apps.workloads.services import plan_workload_set
from tests.approvals.factories import make_verification
from tests.packets.factories import make_stored_packet
from tests.workloads.factories import upload_set

pytestmark = pytest.mark.django_db

# Records shared by every case: no single case's history holds them.
SHARED_RECORDS = {
    "contracts.checklisttemplate",
    "contracts.templateitem",
    "vendors.vendor",
    "scorecards.criterion",
    # The criteria preset of each workload kind: a case copies the newest at its first
    # scorecard and keeps its own copy.
    "scorecards.criteriapreset",
    # The approval policy in force and the delegations: every case's chain copies the
    # policy as it applied (its snapshot), and names the delegate and whom they stood for.
    "approvals.approvalpolicy",
    "approvals.policystep",
    "approvals.delegation",
    # What the organisation keeps of a vendor, beside its name: its contacts, its
    # sub-processors, its certifications (their findings stand in each case's register).
    "vendors.vendorcontact",
    "vendors.subprocessor",
    "vendors.certification",
    # The questionnaire library: each case keeps what was sent and answered.
    "portal.questionnaire",
    "portal.questionnaireversion",
    "portal.question",
}


def test_every_tracked_model_is_tied_to_a_case_or_named_shared():
    untied = {source.key for source in all_sources() if source.case_path is None}
    assert untied <= SHARED_RECORDS, f"tracked but in no case's history: {untied - SHARED_RECORDS}"


@pytest.fixture
def demo_case(demo_case):
    """The demo case, with a row added to each tracked table the demo leaves empty."""
    case = demo_case
    users = {user.username: user for user in get_user_model().objects.all()}
    tariq, aude = users["tariq"], users["aude"]
    offer = case.offers.order_by("pk").first()
    now = timezone.now()
    make_verification(tariq, offer)  # a harness token, an evidence bundle, its verification
    # The demo bills nothing before an approval: its bill file, imported here.
    cost_import_create(
        actor=users["priya"],
        case=case,
        raw=bill_csv(now.date()),
        file_name="aurora-usage-and-bills.csv",
        source=CostImport.Source.UPLOAD,
    )
    threshold_alerts_send(case=case)
    requirement_spec_save(actor=tariq, case=case, fields={"card_count": 64}, reason="Written")
    make_stored_packet(aude, case)  # a packet request and its packet
    approval_decide(actor=tariq, case=case, decision="rejected", comment="Not this round")
    # An approval chain that ran before, rejected at its legal step.
    chain = tracked_create(
        ApprovalChain,
        actor=tariq,
        case=case,
        offer=offer,
        policy=ApprovalPolicy.objects.get(in_force=True),
        snapshot={"policy": "Data and spend", "steps": []},
        state=ApprovalChain.State.REJECTED,
        tech_lead=tariq,
        tech_lead_at=now,
        tech_lead_comment="Gates hold",
        finished_at=now,
    )
    tracked_create(
        ChainDecision,
        actor=users["lena"],
        chain=chain,
        step=1,
        decision="rejected",
        decided_by=users["lena"],
        decided_at=now,
        comment="Not without the transfer mechanism",
    )
    comment_add(actor=tariq, record=offer, body="Measured, as declared.", for_the_record=True)
    tracked_create(
        Reminder,
        actor=None,
        kind=Reminder.Kind.values[0],
        object_model="access.accessmatrix",
        object_pk=1,
        due_on=now.date(),
        threshold=7,
        label="Access-matrix review",
        case=case,
    )
    tracked_create(
        FindingAcceptance,
        actor=users["priya"],
        reason="Accepted",
        case=case,
        offer=offer,
        code="contracts.sla_below_need",
        finding_key="sla_availability_pct",
        role="procurement_reviewer",
        facts="sla_availability_pct=99.5; availability_need_pct=99.9",
        message="The SLA promises 99.5 % availability, less than the 99.9 % the case needs.",
        justification="Credits cover the gap",
        accepted_by=users["priya"],
        accepted_at=now,
        expires_on=now.date(),
    )
    tracked_create(
        AcceptanceSignOff,
        actor=tariq,
        plan=AcceptancePlan.objects.get(case=case),
        signed_by=tariq,
        signed_at=now,
        comment="Signed off",
    )
    tracked_create(
        SpendCharge,
        actor=None,
        case=case,
        cost_import=CostImport.objects.filter(case=case).first(),
        charged_at=now,
        amount=1,
    )
    # The case's own prompt set, required by its acceptance plan.
    plan_workload_set(
        actor=tariq,
        plan=AcceptancePlan.objects.get(case=case),
        prompt_set=upload_set(tariq, case),
        sample_set=None,
    )
    tracked_create(
        Baseline,
        actor=tariq,
        case=case,
        offer=offer,
        bundle=EvidenceBundle.objects.filter(offer=offer).order_by("pk").first(),
        pin_reason="First accepted run",
        pinned_by=tariq,
        pinned_at=now,
    )
    # A vendor invited to the offer, who proposed one claim and sent one document.
    invitation, _secret = invitation_create(
        actor=users["priya"], offer=offer, contact_name="Li Wei", email="li.wei@vendor.example"
    )
    tracked_create(
        Proposal,
        actor=None,
        invitation=invitation,
        section=ClaimSection.SPEC,
        claim="cards_per_node",
        value="8",
    )
    tracked_create(
        VendorDocument,
        actor=None,
        invitation=invitation,
        kind=DocumentKind.SLA,
        name="sla.pdf",
        content_type="application/pdf",
        size_bytes=9,
        sha256="0" * 64,
        storage_name="portal/sla.pdf",
    )
    # The organisation's questionnaire sent with the invitation, with one answer.
    version = QuestionnaireVersion.objects.filter(published_at__isnull=False).first()
    sent = tracked_create(
        SentQuestionnaire,
        actor=users["priya"],
        invitation=invitation,
        questionnaire_version=version,
    )
    tracked_create(
        QuestionnaireAnswer, actor=None, sent=sent, question=version.questions.first(), value="yes"
    )
    # The vendor's reassessment, started on its due day.
    tracked_create(
        Reassessment,
        actor=None,
        vendor=offer.vendor,
        offer=offer,
        case=case,
        due_on=now.date(),
        tier="medium",
        cycle_months=24,
        started_at=now,
        invitation=invitation,
    )
    tracked_create(  # a signed contract document of the offer
        ContractDocument,
        actor=users["priya"],
        offer=offer,
        kind="msa",
        number=1,
        name="msa.pdf",
        content_type="application/pdf",
        size_bytes=9,
        sha256="0" * 64,
        storage_name="contracts/documents/msa.pdf",
        page_count=1,
        uploaded_by=users["priya"],
    )
    assignment_set(  # an item of My work given to one person
        actor=users["priya"],
        case=case,
        item_key="decision",
        roles=("tech_lead",),
        label="Pending approval",
        path="/",
        assignee=tariq,
        due_on=now.date() + timedelta(days=7),
    )
    tracked_create(
        FileIntegrityAlarm,
        actor=None,
        case=case,
        record="Evidence bundle 1",
        storage_name="evidence/1.json",
        found_sha256="0" * 64,
        detected_at=now,
    )
    return case


def _auditor():
    return get_user_model().objects.get(username="aude")


def _tables_with_rows(case) -> set[str]:
    return {source.key for source in case_sources() if source.for_case(case).exists()}


def test_the_packet_lists_every_tracked_table_of_the_case(demo_case):
    document = packet_document(
        demo_case,
        number="DIL-2026-000042",
        requested_by=_auditor(),
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )
    in_packet = {record["record_type"] for record in document.manifest["records"]}
    expected = _tables_with_rows(demo_case)
    # Every tracked table of a case has a row here: a new one must be added to the fixture.
    assert expected == {source.key for source in case_sources()}
    assert expected <= in_packet, f"missing from the packet: {expected - in_packet}"
    history = next(s for s in document.sections if s.template.endswith("history.html"))
    types = {summary.key for summary in history.context["summary"].by_type}
    assert expected <= types, f"missing from the change history: {expected - types}"
    # And its full history attached, a CSV and a JSON file each.
    attached = {a.record_type for a in document.attachments if a.record_type}
    assert expected <= attached, f"history not attached: {expected - attached}"


def test_the_export_lists_every_tracked_table_of_the_case(demo_case):
    target = io.BytesIO()
    build_case_export(demo_case, target, actor=_auditor())
    with zipfile.ZipFile(io.BytesIO(target.getvalue())) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("manifest.json"))
    expected = _tables_with_rows(demo_case)
    exported = {key for key in expected if any(key in name for name in names)}
    assert exported == expected, f"missing from the export: {expected - exported}"
    assert manifest

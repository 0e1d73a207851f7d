"""The demo: four realistic cases, built through the same services as the UI.

The first case can be approved. Inference of Llama 3.1 70B for 600 concurrent
32k-token sequences needs 8 instances of 8 H200 cards = 64 cards (see
tests/sizing for the working). Three vendors make distinct offers; one declared
spec lacks its driver version, so it shows as unconfirmed. Aurora's offer holds
every approval gate (its evidence is demo data built from the datasheet), and
the case waits for the tech lead's decision.

The second case is blocked by a rule nothing waives: its only offer comes with
hardware whose export licence and origin documents the vendor cannot show, so
the export-control gate stays shut whatever else is done.

The third is half-way: two offers for a fine-tuning run, one scored and one
without its written spec, one contract half-read, no data-export assessment or
access matrix yet, so every role has work waiting on it. Its Borealis offer was sent
the organisation's security questionnaire through the vendor portal, answered and
scored.

The fourth shows the findings register (docs/rules/findings.md): its contract
leaves fewer days to export the data than the case needs to leave (blocks: nobody
can accept it), its SLA promises less than the case needs (needs procurement's
acceptance, still open), and its prepayment premium lies within the market range
(needs procurement and finance, each has accepted it, for 90 days). No rule of
the areas only informs yet, so the register shows no such finding.

Running it twice changes nothing.
"""

from datetime import timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from apps.acceptance import demo as acceptance_demo
from apps.access import demo as access_demo
from apps.access.defaults import default_matrix_payload
from apps.access.services import access_matrix_save
from apps.approvals import demo as approvals_demo
from apps.approvals.acceptances import finding_accept
from apps.approvals.findings import ACCEPTANCE_DAYS
from apps.assessments import demo as assessments_demo
from apps.assessments.services import Answers, assessment_create
from apps.cases.models import ProcurementCase
from apps.cases.services import case_create
from apps.contracts import demo as contracts_demo
from apps.contracts.services import checklist_create, checklist_save
from apps.core.roles import Role
from apps.costs import demo as costs_demo
from apps.evidence import demo as evidence_demo
from apps.evidence import demo_network as evidence_demo_network
from apps.offers.models import Offer
from apps.offers.services import declared_spec_update, offer_create
from apps.portal import demo as portal_demo
from apps.scorecards.services import scorecard_save
from apps.sizing.services import compute_demand_save
from apps.vendors.models import Vendor
from apps.vendors.services import (
    certification_create,
    contact_create,
    sub_processor_create,
    vendor_create,
    vendor_stewardship_save,
)

# Apps that extend the demo case: each exposes ``seed(*, case, users)``.
# Each app's part of the demo, in order; each module has ``seed(*, case, users)``.
DEMO_EXTENSIONS = (
    contracts_demo,
    assessments_demo,
    access_demo,
    evidence_demo,
    # After the leading offer's bundle: a network probe of every other offer.
    evidence_demo_network,
    costs_demo,
    # Last: submits the demo case for approval once every record is in place.
    approvals_demo,
    # After the approval: prepares the acceptance of the leading offer.
    acceptance_demo,
)

DEMO_PASSWORD = "diligence-demo"
DEMO_CASE_NAME = "Chat assistant on Llama 3.1 70B — 64 × H200"

BLOCKED_CASE_NAME = "Batch embeddings on Cumulus — 16 × H100 of unknown origin"
BLOCKED_OFFER = {
    "accelerator_model": "NVIDIA H100 SXM5 80GB",
    "accelerator_count": 16,
    "unit_price": Decimal("1.40"),
    "currency": "USD",
    "billing_basis": "per_hour",
    "prepayment_ratio": Decimal("0.00"),
    "contract_term_months": 6,
}
BLOCKED_SPEC = {
    "memory_per_card_gib": Decimal("79.6"),
    "cards_per_node": 8,
    "intra_node_interconnect": "nvlink",
    "intra_node_bandwidth_gbps": Decimal("900"),
    "local_nvme_tb": Decimal("15.36"),
    "cuda_version": "12.4",
    "runtime_versions": "PyTorch 2.5.1, NCCL 2.21.5",
    "inter_node_network": "roce",
    "inter_node_bandwidth_gbit": Decimal("800"),
    "driver_version": "550.90.07",
    "source_document": "Spot quote CAI-0057",
}
# The hardware answers are "no": the vendor cannot show an export licence for the
# H100 nodes nor where they were bought, so the export-control gate holds nothing.
BLOCKED_ANSWERS = {
    "export_control_licence": (
        "no",
        "Vendor could not show an export licence for the H100 nodes (email of 3 March).",
    ),
    "authorization_documents": (
        "no",
        "No purchase or origin documents for the hardware; the reseller is not named.",
    ),
}

# A third case, half-way: offers in, the work of each role still open.
MIDWAY_CASE_NAME = "Fine-tuning Llama 3.1 8B on support tickets — under review"
MIDWAY_DEMAND = {
    "mode": "training",
    "model_preset": "llama-3.1-8b",
    "weight_dtype": "bf16",
    "card_memory_gib": Decimal("79.6"),
    "reserve_pct": Decimal("15"),
    "micro_batch_sequences": 2,
    "sequence_tokens": 8192,
    "optimizer": "adamw",
    "gradient_checkpointing": True,
    "data_parallel_replicas": 2,
    "checkpoints_kept": 3,
    "hours_needed": Decimal("120"),
}
MIDWAY_OFFERS = [
    (
        "Borealis GPU Cloud K.K.",
        {
            "accelerator_model": "NVIDIA H100 SXM5 80GB",
            "accelerator_count": 16,
            "unit_price": Decimal("2.45"),
            "currency": "USD",
            "billing_basis": "per_hour",
            "prepayment_ratio": Decimal("0.00"),
            "contract_term_months": 3,
        },
        {**BLOCKED_SPEC, "source_document": "Quote BGC-8120"},
    ),
    (
        "Aurora Compute Pte. Ltd.",
        {
            "accelerator_model": "NVIDIA H100 SXM5 80GB",
            "accelerator_count": 16,
            "unit_price": Decimal("2.80"),
            "currency": "USD",
            "billing_basis": "per_hour",
            "prepayment_ratio": Decimal("0.20"),
            "contract_term_months": 3,
        },
        # Not transcribed yet: the tech lead has the vendor's spec sheet to enter.
        {},
    ),
]
# Legal has read the first half of Borealis's contract; the rest waits.
MIDWAY_REVIEWED = ("sla", "planned_maintenance", "hardware_lock", "quota_priority")
MIDWAY_ANSWERS = {
    "purpose": ("fine_tuning", "Fine-tuning on anonymised support tickets."),
    "purpose_declared": ("yes", "Declared in the project charter of 12 May."),
    "data_classified": ("yes", "Tickets classified internal; names and contacts removed."),
    "raw_data_leaves": ("yes", "The anonymised tickets are copied to the vendor's storage."),
}

# A fourth case, to show the findings register: one offer whose contract terms raise
# a finding of each weight (docs/rules/findings.md#findings-of-the-areas).
FINDINGS_CASE_NAME = "Speech-to-text for the call centre — 16 × H100, terms to weigh"
FINDINGS_OFFER = {
    "accelerator_model": "NVIDIA H100 SXM5 80GB",
    "accelerator_count": 16,
    "unit_price": Decimal("2.60"),
    "currency": "USD",
    "billing_basis": "per_hour",
    "prepayment_ratio": Decimal("0.40"),
    "contract_term_months": 12,
}
# The case needs 60 days to leave and 99.9 % availability; the contract gives 30 days to
# export the data (blocks), promises 99.5 % (needs procurement's acceptance), and asks
# 40 % in advance where ordinary customers prepay 30 %: a premium of 33 %, within the
# market range (needs procurement and finance, who have both accepted it).
FINDINGS_TERMS = {
    "data_export_days": 30,
    "sla_availability_pct": "99.5",
    "image_format": "oci",
    "billing_basis": "per_hour",
    "prepayment_pct": "40",
    "ordinary_prepayment_pct": "30",
}
FINDINGS_ACCEPTANCES = (
    (
        "priya",
        Role.PROCUREMENT,
        "A year's capacity at a fixed price is worth the premium; the vendor would not "
        "lower it below 40 % for a twelve-month term.",
    ),
    (
        "fiona",
        Role.FINANCE,
        "Within this year's commitment budget; the prepayment is covered by the vendor's "
        "bank guarantee until delivery.",
    ),
)

DEMO_USERS = [
    ("priya", "Priya", "Raman", Role.PROCUREMENT),
    ("lena", "Lena", "Vogel", Role.LEGAL),
    ("tariq", "Tariq", "Haddad", Role.TECH_LEAD),
    ("fiona", "Fiona", "Okafor", Role.FINANCE),
    ("aude", "Aude", "Marchal", Role.AUDITOR),
    ("admin", "Ada", "Admin", Role.ADMIN),
]

DEMO_VENDORS = [
    {
        "name": "Aurora Compute Pte. Ltd.",
        "jurisdiction": "Singapore",
        "regions": "ap-southeast-1, ap-southeast-3",
        "contacts": "sales@aurora-compute.example, +65 6000 0000",
        "website": "https://aurora-compute.example",
    },
    {
        "name": "Borealis GPU Cloud K.K.",
        "jurisdiction": "Japan",
        "regions": "tokyo-1, osaka-1",
        "contacts": "enterprise@borealis.example",
        "website": "https://borealis.example",
    },
    {
        "name": "Cumulus AI Infrastructure Sdn. Bhd.",
        "jurisdiction": "Malaysia",
        "regions": "johor-1",
        "contacts": "deals@cumulus-ai.example",
        "website": "https://cumulus-ai.example",
    },
]

# Each vendor's master data: its owner, the people to write to, whom it relies on, and
# its certifications, as (kind, issuer, scope, days since issued, days until it expires).
# Borealis's SOC 2 Type II report runs out within 60 days: a finding that informs on
# every case it has an offer in.
DEMO_VENDOR_MASTER: dict[str, dict[str, list[tuple]]] = {
    "Aurora Compute Pte. Ltd.": {
        "contacts": [
            ("Wei Lin Tan", "weilin.tan@aurora-compute.example", "Account manager", "en"),
            ("Hui Min Goh", "security@aurora-compute.example", "Security officer", "en"),
        ],
        "sub_processors": [
            ("Equinix Singapore Pte. Ltd.", "Singapore", "Data-centre colocation", True),
        ],
        "certifications": [
            ("iso_27001", "BSI Group", "GPU cloud, Singapore regions", 400, 695),
            ("soc2_type2", "Ernst & Young LLP", "Security and availability", 120, 245),
        ],
    },
    "Borealis GPU Cloud K.K.": {
        "contacts": [("Kenji Sato", "kenji.sato@borealis.example", "Enterprise sales", "en")],
        "sub_processors": [
            ("Sakura Fiber K.K.", "Japan", "Dedicated lines between regions", False),
            ("Tokyo DC Holdings", "Japan", "Data-centre colocation", True),
        ],
        "certifications": [
            ("iso_27001", "JQA", "Tokyo and Osaka regions", 900, 195),
            ("soc2_type2", "Deloitte Tohmatsu", "Security", 320, 45),
        ],
    },
    "Cumulus AI Infrastructure Sdn. Bhd.": {
        "contacts": [
            ("Li Na Wong", "li.na.wong@cumulus-ai.example", "Sales, China desk", "zh-hans")
        ],
        "sub_processors": [],
        "certifications": [("pci_dss", "SGS", "Payment zone only", 200, 165)],
    },
}

COMMON_SPEC = {
    "memory_per_card_gib": Decimal("140.4"),
    "cards_per_node": 8,
    "intra_node_interconnect": "nvlink",
    "intra_node_bandwidth_gbps": Decimal("900"),
    "local_nvme_tb": Decimal("30.72"),
    "cuda_version": "12.4",
    "runtime_versions": "PyTorch 2.5.1, vLLM 0.6.4, NCCL 2.21.5",
}

DEMO_OFFERS = [
    (
        "Aurora Compute Pte. Ltd.",
        {
            "accelerator_model": "NVIDIA H200 SXM 141GB",
            "accelerator_count": 64,
            "unit_price": Decimal("3.10"),
            "currency": "USD",
            "billing_basis": "per_hour",
            "prepayment_ratio": Decimal("0.30"),
            "contract_term_months": 12,
        },
        {
            **COMMON_SPEC,
            "inter_node_network": "infiniband",
            "inter_node_bandwidth_gbit": Decimal("3200"),
            "driver_version": "550.127.05",
            "source_document": "Quote AUR-2026-114, annex B",
        },
    ),
    (
        "Borealis GPU Cloud K.K.",
        {
            "accelerator_model": "NVIDIA H200 SXM 141GB",
            "accelerator_count": 64,
            "unit_price": Decimal("2150"),
            "currency": "USD",
            "billing_basis": "per_month",
            "prepayment_ratio": Decimal("0.50"),
            "contract_term_months": 24,
        },
        {
            **COMMON_SPEC,
            "inter_node_network": "roce",
            "inter_node_bandwidth_gbit": Decimal("1600"),
            "driver_version": "550.90.07",
            "source_document": "Order form BGC-7781, schedule 2",
        },
    ),
    (
        "Cumulus AI Infrastructure Sdn. Bhd.",
        {
            "accelerator_model": "NVIDIA H200 SXM 141GB",
            "accelerator_count": 48,
            "unit_price": Decimal("1150000"),
            "currency": "USD",
            "billing_basis": "reserved",
            "prepayment_ratio": Decimal("1.00"),
            "contract_term_months": 12,
        },
        # The written spec omits the driver version: the spec stays unconfirmed.
        {
            **COMMON_SPEC,
            "inter_node_network": "roce",
            "inter_node_bandwidth_gbit": Decimal("800"),
            "driver_version": "",
            "source_document": "Term sheet CAI-0042",
        },
    ),
]

DEMO_DEMAND = {
    "mode": "inference",
    "model_preset": "llama-3.1-70b",
    "weight_dtype": "bf16",
    "kv_dtype": "fp16",
    "context_tokens": 32768,
    "target_concurrency": 600,
    "tensor_parallel": 8,
    "card_memory_gib": Decimal("140.4"),
    "reserve_pct": Decimal("15"),
}

# Two reviewers' scores (0–5) per vendor, keyed by default criterion.
DEMO_SCORES: dict[str, dict[str, dict[str, int | None]]] = {
    "priya": {
        "Aurora Compute Pte. Ltd.": dict(
            pricing=3,
            reliability=4,
            security=4,
            compliance=4,
            availability=4,
            exit_terms=3,
            networking=5,
            storage=4,
            orchestration=4,
            monitoring=4,
        ),
        "Borealis GPU Cloud K.K.": dict(
            pricing=4,
            reliability=4,
            security=4,
            compliance=3,
            availability=3,
            exit_terms=2,
            networking=4,
            storage=4,
            orchestration=3,
            monitoring=3,
        ),
        "Cumulus AI Infrastructure Sdn. Bhd.": dict(
            pricing=5,
            reliability=2,
            security=3,
            compliance=2,
            availability=2,
            exit_terms=1,
            networking=3,
            storage=3,
            orchestration=3,
            monitoring=2,
        ),
    },
    "tariq": {
        "Aurora Compute Pte. Ltd.": dict(
            pricing=3,
            reliability=4,
            security=5,
            compliance=4,
            availability=4,
            exit_terms=4,
            networking=5,
            storage=4,
            orchestration=4,
            monitoring=5,
        ),
        "Borealis GPU Cloud K.K.": dict(
            pricing=4,
            reliability=3,
            security=4,
            compliance=4,
            availability=4,
            exit_terms=3,
            networking=3,
            storage=4,
            orchestration=4,
            monitoring=3,
        ),
        # One criterion left blank: it counts as 0 against the offer.
        "Cumulus AI Infrastructure Sdn. Bhd.": dict(
            pricing=5,
            reliability=2,
            security=3,
            compliance=None,
            availability=2,
            exit_terms=2,
            networking=3,
            storage=3,
            orchestration=2,
            monitoring=2,
        ),
    },
}


def seed_users() -> dict:
    users = {}
    User = get_user_model()
    for username, first, last, role in DEMO_USERS:
        user, created = User.objects.get_or_create(
            username=username,
            defaults={
                "first_name": first,
                "last_name": last,
                "email": f"{username}@diligence.example",
            },
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.is_staff = role == Role.ADMIN
            user.is_superuser = role == Role.ADMIN
            user.save()
        user.groups.add(Group.objects.get(name=role))
        users[username] = user
    return users


def seed_vendors(users) -> dict:
    vendors = {}
    for fields in DEMO_VENDORS:
        vendors[fields["name"]] = Vendor.objects.filter(
            name=fields["name"]
        ).first() or vendor_create(actor=users["priya"], **fields)
    return vendors


def seed_vendor_master_data(users, vendors) -> None:
    """Each demo vendor's owner, contacts, sub-processors and certifications (once)."""
    today = timezone.localdate()
    for name, master in DEMO_VENDOR_MASTER.items():
        vendor = vendors[name]
        if vendor.owner_id is None:
            vendor_stewardship_save(
                actor=users["priya"],
                vendor=vendor,
                fields={"owner": users["priya"]},
                reason="Owner named",
            )
        if not vendor.contact_people.exists():
            for person, email, role, language in master["contacts"]:
                contact_create(
                    actor=users["priya"],
                    vendor=vendor,
                    name=person,
                    email=email,
                    role=role,
                    language=language,
                )
        if not vendor.sub_processors.exists():
            for company, country, service, handles_data in master["sub_processors"]:
                sub_processor_create(
                    actor=users["lena"],
                    vendor=vendor,
                    name=company,
                    country=country,
                    service=service,
                    handles_data=handles_data,
                )
        if not vendor.certifications.exists():
            for kind, issuer, scope, since, until in master["certifications"]:
                certification_create(
                    actor=users["lena"],
                    vendor=vendor,
                    kind=kind,
                    issuer=issuer,
                    scope=scope,
                    issued_on=today - timedelta(days=since),
                    expires_on=today + timedelta(days=until),
                )


@transaction.atomic
def seed_demo() -> ProcurementCase:
    """The four demo cases; returns the first, the one that can be approved."""
    users = seed_users()
    vendors = seed_vendors(users)
    seed_vendor_master_data(users, vendors)
    case = ProcurementCase.objects.filter(name=DEMO_CASE_NAME).first()
    if case is None:
        case = seed_approvable_case(users, vendors)
    if not ProcurementCase.objects.filter(name=BLOCKED_CASE_NAME).exists():
        seed_blocked_case(users, vendors)
    if not ProcurementCase.objects.filter(name=MIDWAY_CASE_NAME).exists():
        seed_midway_case(users, vendors)
    if not ProcurementCase.objects.filter(name=FINDINGS_CASE_NAME).exists():
        seed_findings_case(users, vendors)
    return case


def seed_findings_case(users, vendors) -> ProcurementCase:
    """A case whose only offer's contract terms raise a finding of each weight: one that
    blocks, one awaiting acceptance, one accepted jointly by procurement and finance.

    Kept small (one offer, its spec and its contract terms), as the register needs no more."""
    priya, lena, tariq = users["priya"], users["lena"], users["tariq"]
    case = case_create(
        actor=priya,
        name=FINDINGS_CASE_NAME,
        workload="inference",
        requirements=(
            "Transcribe the call centre's recorded calls overnight with an open speech "
            "model; the service must stay up through the working day and we must be able "
            "to leave within two months."
        ),
        exit_window_days=60,
        availability_need_pct=Decimal("99.9"),
    )
    offer = offer_create(
        actor=priya, case=case, vendor=vendors["Borealis GPU Cloud K.K."], **FINDINGS_OFFER
    )
    declared_spec_update(
        actor=tariq,
        spec=offer.declared_spec,
        fields={**BLOCKED_SPEC, "source_document": "Quote BGC-8304"},
        reason="Transcribed from the vendor's written spec",
    )
    checklist_save(
        actor=lena,
        checklist=checklist_create(actor=lena, offer=offer),
        items=[],
        reason="Terms read from the draft contract",
        contract_terms=FINDINGS_TERMS,
    )
    costs_demo.seed_speech_budget(case=case, offer=offer, users=users)
    expires_on = timezone.localdate() + timedelta(days=ACCEPTANCE_DAYS)
    for username, role, reason in FINDINGS_ACCEPTANCES:
        finding_accept(
            actor=users[username],
            case=case,
            code="contracts.premium_in_range",
            offer_id=offer.pk,
            key="prepayment_pct",
            role=role,
            reason=reason,
            expires_on=expires_on,
        )
    return case


def seed_midway_case(users, vendors) -> ProcurementCase:
    """A case half-way through: two offers, one scored, one contract half-read, no
    assessment or access matrix yet, so each role's dashboard has work waiting."""
    priya, lena, tariq = users["priya"], users["lena"], users["tariq"]
    case = case_create(
        actor=priya,
        name=MIDWAY_CASE_NAME,
        workload="fine_tuning",
        requirements=(
            "Fine-tune Llama 3.1 8B on two years of anonymised support tickets: about 120 "
            "hours on two data-parallel replicas, for a three-month trial."
        ),
        exit_window_days=14,
    )
    compute_demand_save(actor=tariq, case=case, fields=MIDWAY_DEMAND)
    offers = {}
    for vendor_name, offer_fields, spec_fields in MIDWAY_OFFERS:
        offer = offer_create(actor=priya, case=case, vendor=vendors[vendor_name], **offer_fields)
        if spec_fields:
            declared_spec_update(
                actor=tariq,
                spec=offer.declared_spec,
                fields=spec_fields,
                reason="Transcribed from the vendor's written spec",
            )
        offers[vendor_name] = offer
    borealis = offers["Borealis GPU Cloud K.K."]
    scorecard_save(
        actor=priya,
        offer=borealis,
        scores={
            key: {"score": score, "comment": ""}
            for key, score in DEMO_SCORES["priya"]["Borealis GPU Cloud K.K."].items()
        },
    )
    # The first draft of the data-export assessment, not signed off: the scope is
    # answered, the rest waits on the data owners.
    assessment_create(
        actor=lena,
        case=case,
        answers={
            key: {"value": value, "note": note} for key, (value, note) in MIDWAY_ANSWERS.items()
        },
        conclusion="",
    )
    # The least-privilege default, started by the tech lead and not yet reviewed.
    access_matrix_save(
        actor=tariq,
        case=case,
        reason="Started from the least-privilege default",
        **default_matrix_payload(),
    )
    checklist = checklist_create(actor=lena, offer=borealis)
    items = {item.key: item for item in checklist.items.all()}
    checklist_save(
        actor=lena,
        checklist=checklist,
        items=[{"id": items[key].pk, "status": "acceptable"} for key in MIDWAY_REVIEWED],
        reason="First half of the draft contract read",
    )
    # The organisation's security questionnaire, sent to Borealis and answered.
    portal_demo.seed_questionnaire(offer=borealis, users=users)
    return case


def seed_blocked_case(users, vendors) -> ProcurementCase:
    """A case blocked by the never-waivable export-control rule, still being evaluated."""
    priya, lena, tariq = users["priya"], users["lena"], users["tariq"]
    case = case_create(
        actor=priya,
        name=BLOCKED_CASE_NAME,
        workload="inference",
        requirements=(
            "Embed 40 million internal documents in a week-long batch; the cheapest spot "
            "offer found is a reseller's H100 capacity."
        ),
    )
    offer = offer_create(
        actor=priya,
        case=case,
        vendor=vendors["Cumulus AI Infrastructure Sdn. Bhd."],
        **BLOCKED_OFFER,
    )
    declared_spec_update(
        actor=tariq,
        spec=offer.declared_spec,
        fields=BLOCKED_SPEC,
        reason="Transcribed from the vendor's written spec",
    )
    answers: Answers = {
        key: {"value": value, "note": note}
        for key, (value, note) in (assessments_demo.DEMO_ANSWERS | BLOCKED_ANSWERS).items()
    }
    for key, number in assessments_demo.DEMO_NUMBERS.items():
        answers.setdefault(key, {})["number"] = number
    # Sign-off refuses these answers (the same rule as the gate), so it stays a draft.
    assessment_create(
        actor=lena,
        case=case,
        answers=answers,
        conclusion=(
            "The data side is clear, but the hardware's export licence and origin are not "
            "documented: no approval is possible until the vendor produces them."
        ),
    )
    return case


def seed_approvable_case(users, vendors) -> ProcurementCase:
    priya, tariq = users["priya"], users["tariq"]
    case = case_create(
        actor=priya,
        name=DEMO_CASE_NAME,
        workload="inference",
        requirements=(
            "Serve an internal chat assistant on Llama 3.1 70B (bf16) to 600 concurrent "
            "users at 32k context, from a region within 60 ms of our users. Three-year "
            "horizon, one-year commitment preferred; no customer personal data leaves."
        ),
        exit_window_days=30,
    )
    compute_demand_save(actor=tariq, case=case, fields=DEMO_DEMAND)
    for vendor_name, offer_fields, spec_fields in DEMO_OFFERS:
        offer = offer_create(actor=priya, case=case, vendor=vendors[vendor_name], **offer_fields)
        declared_spec_update(
            actor=tariq,
            spec=offer.declared_spec,
            fields=spec_fields,
            reason="Transcribed from the vendor's written spec",
        )
    for username, by_vendor in DEMO_SCORES.items():
        for vendor_name, scores in by_vendor.items():
            offer = Offer.objects.get(case=case, vendor=vendors[vendor_name])
            scorecard_save(
                actor=users[username],
                offer=offer,
                scores={key: {"score": value, "comment": ""} for key, value in scores.items()},
            )
    for module in DEMO_EXTENSIONS:
        module.seed(case=case, users=users)
    return case

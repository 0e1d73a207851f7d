"""Demo clause checklists: one clear, one with two red flags (one waived), one half-reviewed.

Built by Lena, the legal reviewer, through the same services as the browser.
"""

from decimal import Decimal

from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_create, checklist_save, red_flag_waive
from apps.offers.models import Offer

ACCEPTABLE = "acceptable"

# (clause reference, excerpt) per item key, from each vendor's draft contract.
AURORA = {
    "sla": ("MSA clause 7.1", "99.9 % monthly availability per node; credits 10–30 % of the fee."),
    "planned_maintenance": (
        "MSA clause 7.4",
        "At most one 4-hour window per month, 7 days' notice.",
    ),
    "hardware_lock": ("Order form clause 2", "64 × H200 SXM locked for the term; no substitution."),
    "quota_priority": ("MSA clause 5.2", "Dedicated nodes; no pre-emption by other tenants."),
    "data_deletion": ("DPA clause 9", "Deletion certificate within 14 days of termination."),
    "audit_rights": ("MSA clause 11", "Customer monitoring agents allowed; logs exported daily."),
    "billing_basis": ("Order form clause 3", "Per hour; no cross-region fees; storage itemised."),
    "termination_exit": ("MSA clause 14", "60-day export window; OCI images; no exit penalty."),
    "prepayment": ("Order form clause 4", "30 % prepaid; list price, no premium."),
    "upstream_constraints": ("MSA clause 18.3", "No upstream customer-region quota disclosed."),
    "authorization_documents": ("Annex B", "Contract, licences and written spec on file."),
}

BOREALIS = {
    **AURORA,
    "sla": ("Service terms clause 3", "99.5 % availability; credits capped at one month's fee."),
    "hardware_lock": (
        "Schedule 2, clause 1",
        "64 × H200 SXM; equivalent substitution with notice.",
    ),
    "prepayment": ("Order form BGC-7781 clause 5", "50 % prepaid for 24 months (premium ≈ 40 %)."),
    "termination_exit": ("Service terms clause 12", "Termination clause silent on data export."),
}
BOREALIS_STATUS = {"prepayment": "needs_negotiation", "termination_exit": "missing"}
BOREALIS_WAIVER = (
    "prepayment",
    "Finance and risk accept the 50 % prepayment for a 24-month term in exchange for "
    "locked capacity (committee minute FR-2026-07).",
)

CUMULUS = {
    "sla": ("Term sheet clause 2", "99.9 % availability; service credits."),
    "planned_maintenance": ("Term sheet clause 2", "Monthly window, 72 hours' notice."),
    "hardware_lock": ("Term sheet clause 1", "48 × H200 SXM reserved."),
    "authorization_documents": ("—", "No licence or origin documents offered for the hardware."),
}
CUMULUS_STATUS = {"authorization_documents": "missing"}


# The quantities each draft contract commits to, as the excerpts above state them.
AURORA_TERMS = {
    "sla_availability_pct": Decimal("99.9"),
    "maintenance_notice_hours": 168,
    "data_deletion_days": 14,
    "data_export_days": 60,
    "image_format": "oci",
    "exit_penalty_pct": Decimal("0"),
    "prepayment_pct": Decimal("30"),
    "ordinary_prepayment_pct": Decimal("30"),
    "billing_basis": "per_hour",
}
# Silent on data export and images; a prepayment premium of about 40 %.
BOREALIS_TERMS = {
    "sla_availability_pct": Decimal("99.5"),
    "maintenance_notice_hours": 168,
    "data_deletion_days": 14,
    "prepayment_pct": Decimal("50"),
    "ordinary_prepayment_pct": Decimal("36"),
    "billing_basis": "per_month",
}
CUMULUS_TERMS = {
    "sla_availability_pct": Decimal("99.9"),
    "maintenance_notice_hours": 72,
    "billing_basis": "reserved",
}


def seed(*, case, users) -> None:
    lena = users["lena"]
    plans = {
        "Aurora Compute Pte. Ltd.": (AURORA, {}, None, AURORA_TERMS),
        "Borealis GPU Cloud K.K.": (BOREALIS, BOREALIS_STATUS, BOREALIS_WAIVER, BOREALIS_TERMS),
        "Cumulus AI Infrastructure Sdn. Bhd.": (CUMULUS, CUMULUS_STATUS, None, CUMULUS_TERMS),
    }
    for offer in Offer.objects.filter(case=case).select_related("vendor"):
        if ClauseChecklist.objects.filter(offer=offer).exists():
            continue
        clauses, statuses, waiver, contract_terms = plans.get(offer.vendor.name, ({}, {}, None, {}))
        checklist = checklist_create(actor=lena, offer=offer)
        items = {item.key: item for item in checklist.items.all()}
        checklist_save(
            actor=lena,
            checklist=checklist,
            items=[
                {
                    "id": items[key].pk,
                    "status": statuses.get(key, ACCEPTABLE),
                    "clause_reference": reference,
                    "excerpt": excerpt,
                }
                for key, (reference, excerpt) in clauses.items()
                if key in items
            ],
            reason="First review of the vendor's draft contract",
            contract_terms=contract_terms,
        )
        if waiver is not None:
            key, reason = waiver
            red_flag_waive(actor=lena, item=items[key], reason=reason)

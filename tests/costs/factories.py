"""A budget on the demo's hourly terms, and bill files, built through the services."""

from decimal import Decimal

from apps.costs.models import CostImport
from apps.costs.services import budget_save, cost_import_create

HEADER = (
    "period,instance_hours,gpu_hours,tokens_in,tokens_out,requests,"
    "storage_gib_months,cross_region_gib,amount"
)
# With the vendor's list of training jobs: the longest job's hours, the costliest job's charge.
TRAINING_HEADER = HEADER + ",training_job_hours_max,training_job_spend_max"

# 8 instances × 8 GPUs × 730 h at 3.10 + 20,000 GiB-months × 0.02 + 400 GiB × 0.05
CLEAN = "5840,41200,1850000000,310000000,462000,20000,400,145252.00"
IDLE = "5840,17800,720000000,120000000,181000,20000,400,145252.00"

BUDGET_FIELDS = {
    "currency": "USD",
    "total_amount": Decimal("1900000"),
    "monthly_amount": Decimal("160000"),
    "thresholds_pct": [70, 90, 100],
    "gpus_per_instance": 8,
    "storage_per_gib_month": Decimal("0.02"),
    "cross_region_per_gib": Decimal("0.05"),
    "assumed_tokens_in_per_request": 4000,
}


def make_budget(actor, case, *, offer=None, **fields):
    return budget_save(
        actor=actor, case=case, fields={**BUDGET_FIELDS, "offer": offer, **fields}, reason=""
    )


def bill_csv(*rows: tuple[str, str], header: str = HEADER) -> bytes:
    """rows: (period, cells after the period)."""
    lines = [header] + [f"{period},{cells}" for period, cells in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def make_import(actor, case, *rows, replace=False, header=HEADER):
    return cost_import_create(
        actor=actor,
        case=case,
        raw=bill_csv(*rows, header=header),
        file_name="bill.csv",
        source=CostImport.Source.UPLOAD,
        replace=replace,
    )

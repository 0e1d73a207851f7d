"""Demo budgets for the demo case and the speech-to-text case, and the bills
``bill_csv`` would import.

Priya sets the budget against Aurora's hourly offer, the one that awaits its
decision, and another against Borealis's offer for the speech-to-text case (so the
portfolio compares two vendors in two jurisdictions). Nothing is billed in the demo:
no offer is approved, so no contract runs. ``bill_csv`` holds three months as a
contract would produce them (used by the cost tests): the first month is clean; in
the second the GPUs were busy 38 % of the billed hours (idle instances); in the third
prompts ran far longer than the sizing assumed and the vendor billed 3.25 instead of
the contracted 3.10 per GPU-hour. The months are the three before the current one.
"""

from datetime import date
from decimal import Decimal

from apps.costs.models import Budget
from apps.costs.services import budget_save
from apps.offers.models import Offer

HEADER = (
    "period,instance_hours,gpu_hours,tokens_in,tokens_out,requests,"
    "storage_gib_months,cross_region_gib,amount"
)
# 8 instances × 8 GPUs × 730 h = 46,720 GPU-hours a month at 3.10 = 144,832.00,
# plus 20,000 GiB-months of storage at 0.02 and cross-region traffic at 0.05/GiB.
MONTHS = (
    ("5840", "41200", "1850000000", "310000000", "462000", "20000", "400", "145252.00"),
    ("5840", "17800", "720000000", "120000000", "181000", "20500", "380", "145261.00"),
    ("5840", "43900", "4410000000", "330000000", "490000", "21000", "420", "152281.00"),
)


def _months_before(today: date, count: int) -> list[date]:
    months = []
    year, month = today.year, today.month
    for _ in range(count):
        month -= 1
        if month == 0:
            year, month = year - 1, 12
        months.append(date(year, month, 1))
    return sorted(months)


def bill_csv(today: date) -> bytes:
    lines = [HEADER]
    for period, row in zip(_months_before(today, len(MONTHS)), MONTHS, strict=True):
        instance, gpu, tin, tout, requests, storage, traffic, amount = row
        lines.append(
            f"{period:%Y-%m},{instance},{gpu},{tin},{tout},{requests},{storage},{traffic},{amount}"
        )
    return ("\n".join(lines) + "\n").encode("utf-8")


def seed(*, case, users) -> None:
    priya = users["priya"]
    if not Budget.objects.filter(case=case).exists():
        offer = Offer.objects.filter(case=case, vendor__name__startswith="Aurora").first()
        budget_save(
            actor=priya,
            case=case,
            fields={
                "currency": "USD",
                "total_amount": Decimal("1900000"),
                "monthly_amount": Decimal("160000"),
                "thresholds_pct": [70, 90, 100],
                "training_max_run_hours": Decimal("72"),
                "training_max_spend": Decimal("25000"),
                "offer": offer,
                "gpus_per_instance": 8,
                "storage_per_gib_month": Decimal("0.02"),
                "cross_region_per_gib": Decimal("0.05"),
                "assumed_tokens_in_per_request": 4000,
            },
            reason="Budget agreed with finance for the first contract year",
        )


# The speech-to-text case: 16 H100 at 2.60 USD per GPU-hour for 12 months commit
# 16 × 12 × 730 × 2.60 = 364,416.00 USD, within its budget.
SPEECH_BUDGET = {
    "currency": "USD",
    "total_amount": Decimal("400000"),
    "monthly_amount": Decimal("34000"),
    "thresholds_pct": [70, 90, 100],
    "gpus_per_instance": 8,
}


def seed_speech_budget(*, case, offer, users) -> None:
    if not Budget.objects.filter(case=case).exists():
        budget_save(
            actor=users["priya"],
            case=case,
            fields={**SPEECH_BUDGET, "offer": offer},
            reason="Budget agreed with finance for the transcription service",
        )

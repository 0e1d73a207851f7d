"""Cost per unit of work: what the GPUs that served the load test cost, over what they
served at the highest load where every service level still held.

The price per GPU-hour compares offers as if every GPU did the same work. The
load test says how much work they did: output tokens and completed requests per
second at the highest concurrency within the SLOs (the evidence's
``at_slo``), on the GPUs of the machine that ran it. So:

- per hour = GPUs × the offer's effective cost per GPU-hour (prepayment priced in);
- per million output tokens = per hour ÷ (output tokens/s × 3,600) × 1,000,000;
- per thousand requests = per hour ÷ (requests/s × 3,600) × 1,000.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext as _

from apps.scorecards.pricing import PriceNormalisation

SECONDS_AN_HOUR = Decimal(3600)


@dataclass(frozen=True)
class UnitCost:
    concurrency: int
    gpus: int
    per_hour: Decimal
    output_tok_s: Decimal | None
    req_s: Decimal | None
    per_million_output_tokens: Decimal | None
    per_thousand_requests: Decimal | None


def _rate(value) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return Decimal(str(value))


def unit_cost(
    price: PriceNormalisation | None, headline: dict | None
) -> tuple[UnitCost | None, str]:
    """The offer's cost per unit of work from its verified load test, or why it cannot
    be said."""
    if price is None:
        return None, _("not priced")
    headline = headline or {}
    if "max_concurrency_within_slo" not in headline:
        return None, _("no verified load test yet")
    at = headline.get("at_slo")
    if not isinstance(at, dict):
        highest = headline.get("max_concurrency_within_slo")
        if highest is None:
            return None, _("the load test measured no level against the service levels")
        if not isinstance(highest, int):
            return None, _("no load level held the service levels")
        return None, _("verified before throughput at the service levels was recorded")
    gpus = at.get("gpus")
    if not isinstance(gpus, int) or gpus <= 0:
        return None, _("the load test's machine reported no GPUs")
    per_hour = gpus * price.effective_cost_per_gpu_hour
    tokens, requests = _rate(at.get("output_tok_s")), _rate(at.get("req_s"))
    return (
        UnitCost(
            concurrency=at["concurrency"],
            gpus=gpus,
            per_hour=per_hour,
            output_tok_s=tokens,
            req_s=requests,
            per_million_output_tokens=(
                per_hour / (tokens * SECONDS_AN_HOUR) * 1_000_000 if tokens else None
            ),
            per_thousand_requests=(
                per_hour / (requests * SECONDS_AN_HOUR) * 1_000 if requests else None
            ),
        ),
        "",
    )

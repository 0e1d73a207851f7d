"""Cost per unit of work: what the GPUs that served the load test cost, over what they
served at the highest load where every service level still held.

The price per GPU-hour compares offers as if every GPU did the same work. The
load test says how much work they did: output tokens and completed requests per
second at the highest concurrency within the SLOs (the evidence's
``at_slo``), on the GPUs of the machine that ran it. So:

- per hour = GPUs × the offer's effective cost per GPU-hour (prepayment priced in);
- per million output tokens = per hour ÷ (output tokens/s × 3,600) × 1,000,000;
- per thousand requests = per hour ÷ (requests/s × 3,600) × 1,000.

Where the offer's evidence holds an open-loop rate search (the evidence's
``goodput_at_slo``, docs/rules/evidence.md#throughput-at-the-slo), its goodput at the
highest request rate within the service levels is the work served instead: requests
arriving on their own schedule, as users send them, rather than a fixed number of
streams each waiting for its answer. ``basis`` says which one a cost rests on.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext as _

from apps.scorecards.pricing import PriceNormalisation

SECONDS_AN_HOUR = Decimal(3600)


BASIS_LADDER = "ladder"  # the closed-loop ladder's highest concurrency within the SLOs
BASIS_RATE_SEARCH = "rate_search"  # the open-loop rate search's goodput at the SLOs


@dataclass(frozen=True)
class UnitCost:
    concurrency: int | None  # None on the rate search's basis
    gpus: int
    per_hour: Decimal
    output_tok_s: Decimal | None
    req_s: Decimal | None
    per_million_output_tokens: Decimal | None
    per_thousand_requests: Decimal | None
    basis: str = BASIS_LADDER
    rate_rps: Decimal | None = None  # the request rate the goodput was measured at


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
    rated = _from_rate_search(price, headline.get("goodput_at_slo"), headline.get("gpus"))
    if rated is not None:
        return rated, ""
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


def _gpus(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _from_rate_search(price: PriceNormalisation, goodput, inventory_gpus) -> UnitCost | None:
    """The cost on the rate search's goodput at the SLOs, on the GPUs of the machine that ran
    it, else those the offer's inventory counted (a rate search run on its own reads the
    endpoint, not the cards); None where there is none to use."""
    if not isinstance(goodput, dict):
        return None
    gpus = _gpus(goodput.get("gpus")) or _gpus(inventory_gpus)
    tokens, requests = _rate(goodput.get("goodput_tok_s")), _rate(goodput.get("goodput_req_s"))
    if gpus is None or not (tokens or requests):
        return None
    per_hour = gpus * price.effective_cost_per_gpu_hour
    return UnitCost(
        concurrency=None,
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
        basis=BASIS_RATE_SEARCH,
        rate_rps=_rate(goodput.get("rate_rps")),
    )

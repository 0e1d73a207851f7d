"""What an offer's newest load test served at its safe level, for the costs' unit costs.

The costs app divides the bills by it (docs/rules/costs.md#unit-costs) but reads neither
the evidence nor the acceptance rules; this layer does, and registers the reader with
the costs app when it is ready (``apps/casework/apps.py``).
"""

from decimal import Decimal

from django.utils.translation import gettext as _

from apps.acceptance.measurements import ladder_levels, level_throughput
from apps.acceptance.rules import safe_operating_level
from apps.acceptance.selectors import case_slo
from apps.core import formats
from apps.costs.rules import MeasuredThroughput
from apps.evidence.rules.composition import LOADTEST, RATESEARCH
from apps.evidence.selectors import latest_verification, source_bundle


def _decimal(value: float | None) -> Decimal | None:
    return None if value is None else Decimal(str(round(value, 6)))


def offer_throughput(case, offer) -> MeasuredThroughput | None:
    """The open-loop rate search's goodput at the highest rate within the service levels
    where the offer's newest verification holds one; else the load test it takes its ladder
    from, read at the highest concurrency at which every service level of the case holds
    (the acceptance's safe operating level); None when the offer has neither."""
    verification = latest_verification(offer)
    rated = rate_search_throughput(verification)
    if rated is not None:
        return rated
    bundle = source_bundle(verification, LOADTEST)
    if bundle is None:
        return None
    summary = bundle.summary or {}
    levels = ladder_levels(summary)
    if not levels:
        return None
    source = _("load test of %(date)s, bundle %(sha)s…") % {
        "date": formats.date(bundle.run_finished_at.date()) if bundle.run_finished_at else "—",
        "sha": bundle.sha256[:12],
    }
    safe = safe_operating_level(levels, case_slo(case))
    if safe is None:
        return MeasuredThroughput(None, None, None, source)
    requests, tokens = level_throughput(summary, safe)
    return MeasuredThroughput(safe, _decimal(requests), _decimal(tokens), source)


def rate_search_throughput(verification) -> MeasuredThroughput | None:
    """The goodput the verification's rate search measured at its highest rate within the
    case's service levels, as judged when the bundle was verified
    (docs/rules/evidence.md#throughput-at-the-slo); None where it holds none."""
    headline = verification.headline if verification is not None else None
    goodput = (headline or {}).get("goodput_at_slo")
    if not isinstance(goodput, dict) or goodput.get("rate_rps") is None:
        return None
    bundle = source_bundle(verification, RATESEARCH)
    source = _("rate search of %(date)s, bundle %(sha)s…") % {
        "date": formats.date(bundle.run_finished_at.date())
        if bundle is not None and bundle.run_finished_at
        else "—",
        "sha": bundle.sha256[:12] if bundle is not None else "—",
    }
    return MeasuredThroughput(
        None,
        _decimal(goodput.get("goodput_req_s")),
        _decimal(goodput.get("goodput_tok_s")),
        source,
        rate_rps=_decimal(goodput["rate_rps"]),
    )

"""Offer prices normalised to one number: cost per GPU-hour
(docs/rules/offers.md#price-per-gpu-hour).

Vendors quote per second, per hour, per month or as a reservation, and
reports say that high-demand deals ask for prepayment ratios 30–50 % above
what ordinary overseas customers pay. Money paid in advance is money the
buyer cannot use elsewhere, so two offers with the same list price but
different prepayment are not the same price. This module turns every quote
into the same unit and prices the prepayment in, showing its arithmetic.

Inputs:

- ``unit_price`` is the price of ONE GPU for one billing unit — one second
  (``per_second``), one hour (``per_hour``) or one month (``per_month``).
  For ``reserved`` it is the total price of the whole reservation: all GPUs
  for the whole term.
- ``prepayment_ratio`` and ``cost_of_capital_annual`` are fractions
  (0.3 is 30 %, 0.08 is 8 % a year).
- ``utilisation`` is the fraction of the paid GPU-hours doing useful work.

Model and assumptions:

- Every basis is compared as capacity held for the whole term: GPU-hours in
  the term = GPUs × months × 730 h. Idle time is expressed through
  ``utilisation`` rather than by assuming on-demand GPUs get released.
- The prepayment is paid at signing and used up evenly as service is
  delivered, so on average it is held for half the term. Its financing cost
  is simple interest: prepaid × annual rate × (term ÷ 2) months ÷ 12.
- Result fields are unrounded ``Decimal``; only ``explanation`` rounds
  (money to 0.01, per-GPU-hour prices to 0.0001) for display.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from enum import Enum
from typing import TypeVar

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.core import formats

K = TypeVar("K", bound=Hashable)  # whatever names an offer: a pk, a name

# 8,760 h in a 365-day year ÷ 12: vendors' monthly prices assume an average
# month, and using 730 keeps a year of monthly bills equal to 8,760 hours.
HOURS_PER_MONTH = Decimal(730)
SECONDS_PER_HOUR = Decimal(3600)

# Ranking compares prices at the precision the explanation shows, so the same
# price reached through two bases ties instead of differing in the 28th digit.
_RANKING_QUANTUM = Decimal("0.0001")


class BillingBasis(str, Enum):
    """How the vendor bills (docs/rules/offers.md#declared-spec)."""

    PER_SECOND = "per_second"
    PER_HOUR = "per_hour"
    PER_MONTH = "per_month"
    RESERVED = "reserved"


class PricingInputError(ValueError):
    """An input that cannot be priced; ``field`` names the offending argument."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class PriceNormalisation:
    """One offer's price in cost per GPU-hour, with the working shown."""

    billing_basis: BillingBasis
    unit_price: Decimal
    gpu_count: int
    term_months: int
    prepayment_ratio: Decimal
    cost_of_capital_annual: Decimal
    utilisation: Decimal
    list_cost_per_gpu_hour: Decimal  # from the billing basis alone
    gpu_hours_in_term: Decimal
    total_contract_value: Decimal  # everything payable over the term, before financing
    prepayment_amount: Decimal
    prepayment_financing_cost: Decimal
    effective_cost_per_gpu_hour: Decimal  # (contract value + financing) ÷ GPU-hours
    cost_per_utilised_gpu_hour: Decimal  # effective ÷ utilisation
    explanation: tuple[str, ...]


@dataclass(frozen=True)
class RankedPrice:
    """A place in the price ranking; equal prices share a rank (1, 1, 3)."""

    rank: int
    offer: Hashable
    normalisation: PriceNormalisation
    # Fraction above the cheapest (0.25 = 25 % dearer); None if the cheapest is free.
    premium_over_cheapest: Decimal | None


def cost_per_gpu_hour(
    *,
    unit_price: Decimal,
    billing_basis: BillingBasis | str,
    gpu_count: int,
    term_months: int,
    prepayment_ratio: Decimal,
    cost_of_capital_annual: Decimal = Decimal("0.08"),
    utilisation: Decimal = Decimal(1),
) -> PriceNormalisation:
    """Normalise one quote to cost per GPU-hour; raises PricingInputError."""
    basis = _basis(billing_basis)
    unit_price = _decimal("unit_price", unit_price)
    if unit_price < 0:
        raise PricingInputError("unit_price", _("must not be negative."))
    _positive_int("gpu_count", gpu_count)
    _positive_int("term_months", term_months)
    prepayment_ratio = _fraction("prepayment_ratio", prepayment_ratio, allow_zero=True)
    # Above 1 is refused: it is nearly always "8" typed for 8 %.
    cost_of_capital_annual = _fraction(
        "cost_of_capital_annual", cost_of_capital_annual, allow_zero=True
    )
    utilisation = _fraction("utilisation", utilisation, allow_zero=False)

    gpu_hours = gpu_count * term_months * HOURS_PER_MONTH
    hours_line = _(
        "GPU-hours in term: %(gpus)s GPUs × %(months)s months × %(per_month)s h/month = "
        "%(hours)s GPU-hours"
    ) % {
        "gpus": f"{gpu_count:,}",
        "months": f"{term_months:,}",
        "per_month": _plain(HOURS_PER_MONTH),
        "hours": _plain(gpu_hours),
    }
    # Contract value is computed from the quote directly (not list × hours) so
    # it stays exact where list is a repeating decimal (e.g. per month ÷ 730).
    if basis is BillingBasis.PER_SECOND:
        list_price = unit_price * SECONDS_PER_HOUR
        contract_value = list_price * gpu_hours
        list_line = _(
            "List: %(price)s per GPU-second × %(seconds)s s/h = %(rate)s per GPU-hour"
        ) % {
            "price": _plain(unit_price),
            "seconds": _plain(SECONDS_PER_HOUR),
            "rate": _rate(list_price),
        }
    elif basis is BillingBasis.PER_HOUR:
        list_price = unit_price
        contract_value = unit_price * gpu_hours
        list_line = _("List: %(rate)s per GPU-hour") % {"rate": _rate(list_price)}
    elif basis is BillingBasis.PER_MONTH:
        list_price = unit_price / HOURS_PER_MONTH
        contract_value = unit_price * gpu_count * term_months
        list_line = _(
            "List: %(price)s per GPU-month ÷ %(per_month)s h/month = %(rate)s per GPU-hour"
        ) % {
            "price": _plain(unit_price),
            "per_month": _plain(HOURS_PER_MONTH),
            "rate": _rate(list_price),
        }
    else:
        list_price = unit_price / gpu_hours
        contract_value = unit_price
        list_line = _(
            "List: %(price)s for the reservation ÷ %(hours)s GPU-hours = %(rate)s per GPU-hour"
        ) % {"price": _money(unit_price), "hours": _plain(gpu_hours), "rate": _rate(list_price)}
    if basis is BillingBasis.RESERVED:
        contract_line = _("Contract value: %(value)s (reservation)") % {
            "value": _money(contract_value)
        }
        lines = [hours_line, list_line, contract_line]
    elif basis is BillingBasis.PER_MONTH:
        contract_line = _(
            "Contract value: %(price)s per GPU-month × %(gpus)s GPUs × %(months)s months = "
            "%(value)s"
        ) % {
            "price": _plain(unit_price),
            "gpus": f"{gpu_count:,}",
            "months": f"{term_months:,}",
            "value": _money(contract_value),
        }
        lines = [list_line, hours_line, contract_line]
    else:
        contract_line = _(
            "Contract value: %(rate)s per GPU-hour × %(hours)s GPU-hours = %(value)s"
        ) % {"rate": _rate(list_price), "hours": _plain(gpu_hours), "value": _money(contract_value)}
        lines = [list_line, hours_line, contract_line]

    prepayment = prepayment_ratio * contract_value
    months_held = Decimal(term_months) / 2
    financing = prepayment * cost_of_capital_annual * months_held / 12
    lines.append(
        _("Prepayment: %(ratio)s × %(value)s = %(prepayment)s")
        % {
            "ratio": _percent(prepayment_ratio),
            "value": _money(contract_value),
            "prepayment": _money(prepayment),
        }
    )
    lines.append(
        _(
            "Financing of prepayment: %(prepayment)s × %(rate)s a year × %(months)s months "
            "(half the term) ÷ 12 = %(financing)s"
        )
        % {
            "prepayment": _money(prepayment),
            "rate": _percent(cost_of_capital_annual),
            "months": _plain(months_held),
            "financing": _money(financing),
        }
    )
    effective = (contract_value + financing) / gpu_hours
    lines.append(
        _("Effective: (%(value)s + %(financing)s) ÷ %(hours)s GPU-hours = %(rate)s per GPU-hour")
        % {
            "value": _money(contract_value),
            "financing": _money(financing),
            "hours": _plain(gpu_hours),
            "rate": _rate(effective),
        }
    )
    per_utilised = effective / utilisation
    if utilisation != 1:
        lines.append(
            _(
                "At %(utilisation)s utilisation: %(rate)s ÷ %(fraction)s = %(per_utilised)s "
                "per utilised GPU-hour"
            )
            % {
                "utilisation": _percent(utilisation),
                "rate": _rate(effective),
                "fraction": _plain(utilisation),
                "per_utilised": _rate(per_utilised),
            }
        )
    return PriceNormalisation(
        billing_basis=basis,
        unit_price=unit_price,
        gpu_count=gpu_count,
        term_months=term_months,
        prepayment_ratio=prepayment_ratio,
        cost_of_capital_annual=cost_of_capital_annual,
        utilisation=utilisation,
        list_cost_per_gpu_hour=list_price,
        gpu_hours_in_term=gpu_hours,
        total_contract_value=contract_value,
        prepayment_amount=prepayment,
        prepayment_financing_cost=financing,
        effective_cost_per_gpu_hour=effective,
        cost_per_utilised_gpu_hour=per_utilised,
        explanation=tuple(lines),
    )


def normalised_price_ranking(offers: Mapping[K, PriceNormalisation]) -> list[RankedPrice]:
    """Offers cheapest first by cost per utilised GPU-hour.

    That equals the effective cost at the default utilisation of 1, and is the
    fair key when one offer is expected to sit idle more than another. Equal
    prices keep input order and share a rank.
    """

    def price(normalisation: PriceNormalisation) -> Decimal:
        return normalisation.cost_per_utilised_gpu_hour.quantize(_RANKING_QUANTUM, ROUND_HALF_UP)

    ordered = sorted(offers.items(), key=lambda item: price(item[1]))
    if not ordered:
        return []
    cheapest = price(ordered[0][1])
    ranking: list[RankedPrice] = []
    for position, (offer, normalisation) in enumerate(ordered, start=1):
        tied = ranking and price(ranking[-1].normalisation) == price(normalisation)
        ranking.append(
            RankedPrice(
                rank=ranking[-1].rank if tied else position,
                offer=offer,
                normalisation=normalisation,
                premium_over_cheapest=(price(normalisation) - cheapest) / cheapest
                if cheapest
                else None,
            )
        )
    return ranking


def _basis(value: BillingBasis | str) -> BillingBasis:
    try:
        return BillingBasis(value)
    except ValueError:
        allowed = ", ".join(basis.value for basis in BillingBasis)
        raise PricingInputError(
            "billing_basis",
            _("'%(value)s' is not one of %(allowed)s.") % {"value": value, "allowed": allowed},
        ) from None


def _decimal(field: str, value: object) -> Decimal:
    # Floats are refused: 0.1 as a float is not 0.1, and money must be exact.
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise PricingInputError(
            field, _("must be a Decimal, not %(type)s.") % {"type": type(value).__name__}
        )
    value = Decimal(value)
    if not value.is_finite():
        raise PricingInputError(field, _("must be a finite number."))
    return value


def _positive_int(field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PricingInputError(
            field, _("must be a whole number above 0; got %(value)s.") % {"value": repr(value)}
        )


def _fraction(field: str, value: object, *, allow_zero: bool) -> Decimal:
    value = _decimal(field, value)
    if value > 1 or value < 0 or (value == 0 and not allow_zero):
        lower = "0" if allow_zero else _("above 0")
        raise PricingInputError(
            field,
            _("must be a fraction from %(lower)s to 1; got %(value)s.")
            % {"lower": lower, "value": value},
        )
    return value


# The explanation lines write numbers as every page does (apps.core.formats):
# grouped, rounded half up as on an invoice, no trailing zeros where places vary.
def _plain(value: Decimal) -> str:
    return formats.number(value)


def _money(value: Decimal) -> str:
    return formats.number(value, formats.MONEY_PLACES)


def _rate(value: Decimal) -> str:
    return formats.number(value, formats.RATE_PLACES)


def _percent(value: Decimal) -> str:
    return formats.percent(value, -6)


@dataclass(frozen=True)
class CapacityCost:
    """What the capacity a plan needs costs on one offer: whole nodes × hours × price.

    The price per GPU-hour alone ranks offers as if each sold the same capacity; an
    offer whose nodes are larger, or whose cards are smaller, makes the plan rent more
    GPUs. ``total`` is None until the hours are known.
    """

    gpus: int
    cost_per_gpu_hour: Decimal
    per_hour: Decimal
    hours: Decimal | None
    total: Decimal | None
    explanation: tuple[str, ...]


def capacity_cost(
    *,
    nodes: int,
    cards_per_node: int,
    cost_per_gpu_hour: Decimal,
    hours: Decimal | None,
    currency: str = "",
) -> CapacityCost:
    """Cost of ``nodes`` whole nodes for ``hours`` at the offer's effective GPU-hour price."""
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 0:
        raise PricingInputError(
            "nodes", _("must be a whole number ≥ 0; got %(value)s.") % {"value": repr(nodes)}
        )
    _positive_int("cards_per_node", cards_per_node)
    price = _decimal("cost_per_gpu_hour", cost_per_gpu_hour)
    if price < 0:
        raise PricingInputError("cost_per_gpu_hour", _("must not be negative."))
    if hours is not None and _decimal("hours", hours) <= 0:
        raise PricingInputError("hours", _("must be above 0."))
    unit = f" {currency}" if currency else ""
    gpus = nodes * cards_per_node
    per_hour = gpus * price
    lines = [
        ngettext(
            "Capacity needed: %(nodes)s whole node × %(cards)s GPUs = %(gpus)s GPUs",
            "Capacity needed: %(nodes)s whole nodes × %(cards)s GPUs = %(gpus)s GPUs",
            nodes,
        )
        % {"nodes": f"{nodes:,}", "cards": f"{cards_per_node:,}", "gpus": f"{gpus:,}"},
        _("Per hour: %(gpus)s GPUs × %(rate)s per GPU-hour = %(cost)s")
        % {
            "gpus": f"{gpus:,}",
            "rate": f"{_rate(price)}{unit}",
            "cost": f"{_money(per_hour)}{unit}",
        },
    ]
    total = None
    if hours is not None:
        total = per_hour * hours
        lines.append(
            _("For the plan: %(gpus)s GPUs × %(hours)s h × %(rate)s = %(cost)s")
            % {
                "gpus": f"{gpus:,}",
                "hours": _plain(Decimal(hours)),
                "rate": f"{_rate(price)}{unit}",
                "cost": f"{_money(total)}{unit}",
            }
        )
    return CapacityCost(
        gpus=gpus,
        cost_per_gpu_hour=price,
        per_hour=per_hour,
        hours=None if hours is None else Decimal(hours),
        total=total,
        explanation=tuple(lines),
    )

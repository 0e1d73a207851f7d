"""Price normalisation to cost per GPU-hour (docs/rules/offers.md#price-per-gpu-hour); numbers
worked by hand."""

from decimal import Decimal

import pytest

from apps.scorecards.pricing import (
    HOURS_PER_MONTH,
    BillingBasis,
    PricingInputError,
    cost_per_gpu_hour,
    normalised_price_ranking,
)


def _price(**overrides):
    quote = {
        "unit_price": Decimal("2.00"),
        "billing_basis": BillingBasis.PER_HOUR,
        "gpu_count": 64,
        "term_months": 12,
        "prepayment_ratio": Decimal(0),
    }
    return cost_per_gpu_hour(**(quote | overrides))


def test_hours_per_month_is_a_twelfth_of_a_year():
    assert HOURS_PER_MONTH * 12 == 8760


# 64 GPUs × 12 months × 730 h = 560,640 GPU-hours throughout.
@pytest.mark.parametrize(
    ("basis", "unit_price", "expected_list", "expected_contract_value"),
    [
        # 0.0006 per second × 3,600 s = 2.16; 2.16 × 560,640 = 1,210,982.40
        ("per_second", Decimal("0.0006"), Decimal("2.16"), Decimal("1210982.40")),
        # 2.10 per hour; 2.10 × 560,640 = 1,177,344
        ("per_hour", Decimal("2.10"), Decimal("2.10"), Decimal(1177344)),
        # 1,460 per month ÷ 730 h = 2.00; 1,460 × 64 × 12 = 1,121,280
        ("per_month", Decimal(1460), Decimal("2.00"), Decimal(1121280)),
        # the whole reservation: 1,121,280 ÷ 560,640 = 2.00
        ("reserved", Decimal(1121280), Decimal("2.00"), Decimal(1121280)),
    ],
)
def test_each_billing_basis_is_normalised(
    basis, unit_price, expected_list, expected_contract_value
):
    result = _price(unit_price=unit_price, billing_basis=basis)
    assert result.billing_basis is BillingBasis(basis)
    assert result.gpu_hours_in_term == 560640
    assert result.list_cost_per_gpu_hour == expected_list
    assert result.total_contract_value == expected_contract_value
    # No prepayment: nothing to finance, effective equals list.
    assert result.prepayment_financing_cost == 0
    assert result.effective_cost_per_gpu_hour == expected_list


def test_small_reservation_totals():
    # 8 GPUs × 3 months × 730 h = 17,520 GPU-hours; 35,040 ÷ 17,520 = 2.00
    result = _price(unit_price=Decimal(35040), billing_basis="reserved", gpu_count=8, term_months=3)
    assert result.gpu_hours_in_term == 17520
    assert result.total_contract_value == Decimal(35040)
    assert result.list_cost_per_gpu_hour == Decimal("2.00")


@pytest.mark.parametrize(
    ("quote", "expected_prepayment", "expected_financing", "expected_effective"),
    [
        # 2.00/h × 560,640 h = 1,121,280; half prepaid = 560,640;
        # held 6 months on average: 560,640 × 0.08 × 6/12 = 22,425.60;
        # (1,121,280 + 22,425.60) ÷ 560,640 = 2.04
        (
            {"prepayment_ratio": Decimal("0.5")},
            Decimal(560640),
            Decimal("22425.60"),
            Decimal("2.04"),
        ),
        # 1,460/month × 8 GPUs × 36 months = 420,480; 30 % prepaid = 126,144;
        # held 18 months at 10 %: 126,144 × 0.10 × 18/12 = 18,921.60;
        # 8 × 36 × 730 = 210,240 GPU-h; (420,480 + 18,921.60) ÷ 210,240 = 2.09
        (
            {
                "unit_price": Decimal(1460),
                "billing_basis": "per_month",
                "gpu_count": 8,
                "term_months": 36,
                "prepayment_ratio": Decimal("0.3"),
                "cost_of_capital_annual": Decimal("0.10"),
            },
            Decimal(126144),
            Decimal("18921.60"),
            Decimal("2.09"),
        ),
        # Free money: prepaying costs nothing extra.
        (
            {"prepayment_ratio": Decimal(1), "cost_of_capital_annual": Decimal(0)},
            Decimal(1121280),
            Decimal(0),
            Decimal("2.00"),
        ),
    ],
)
def test_prepayment_financing(quote, expected_prepayment, expected_financing, expected_effective):
    result = _price(**quote)
    assert result.prepayment_amount == expected_prepayment
    assert result.prepayment_financing_cost == expected_financing
    assert result.effective_cost_per_gpu_hour == expected_effective
    assert result.list_cost_per_gpu_hour == Decimal("2.00")


def test_utilisation_raises_cost_per_used_hour_only():
    result = _price(prepayment_ratio=Decimal("0.5"), utilisation=Decimal("0.8"))
    assert result.effective_cost_per_gpu_hour == Decimal("2.04")
    assert result.cost_per_utilised_gpu_hour == Decimal("2.55")  # 2.04 ÷ 0.8


def test_explanation_shows_checkable_arithmetic():
    result = _price(
        unit_price=Decimal("0.0006"),
        billing_basis="per_second",
        prepayment_ratio=Decimal("0.5"),
        utilisation=Decimal("0.8"),
    )
    assert result.explanation == (
        "List: 0.0006 per GPU-second × 3,600 s/h = 2.1600 per GPU-hour",
        "GPU-hours in term: 64 GPUs × 12 months × 730 h/month = 560,640 GPU-hours",
        "Contract value: 2.1600 per GPU-hour × 560,640 GPU-hours = 1,210,982.40",
        "Prepayment: 50 % × 1,210,982.40 = 605,491.20",
        # 605,491.20 × 0.08 × 0.5 = 24,219.648 → 24,219.65
        (
            "Financing of prepayment: 605,491.20 × 8 % a year × 6 months (half the term)"
            " ÷ 12 = 24,219.65"
        ),
        # 2.16 × 1.02 = 2.2032; ÷ 0.8 = 2.754
        "Effective: (1,210,982.40 + 24,219.65) ÷ 560,640 GPU-hours = 2.2032 per GPU-hour",
        "At 80 % utilisation: 2.2032 ÷ 0.8 = 2.7540 per utilised GPU-hour",
    )


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"unit_price": Decimal("-0.01")}, "unit_price"),
        ({"unit_price": 2.1}, "unit_price"),  # float money is refused
        ({"unit_price": Decimal("NaN")}, "unit_price"),
        ({"prepayment_ratio": Decimal("1.5")}, "prepayment_ratio"),
        ({"prepayment_ratio": Decimal("-0.1")}, "prepayment_ratio"),
        ({"term_months": 0}, "term_months"),
        ({"term_months": -12}, "term_months"),
        ({"gpu_count": 0}, "gpu_count"),
        ({"gpu_count": True}, "gpu_count"),
        ({"billing_basis": "per_week"}, "billing_basis"),
        ({"cost_of_capital_annual": Decimal(8)}, "cost_of_capital_annual"),
        ({"utilisation": Decimal(0)}, "utilisation"),
    ],
)
def test_errors_name_the_field(overrides, field):
    with pytest.raises(PricingInputError) as excinfo:
        _price(**overrides)
    assert excinfo.value.field == field
    assert isinstance(excinfo.value, ValueError)
    assert str(excinfo.value).startswith(f"{field}: ")


def test_ranking_prices_the_prepayment_in():
    offers = {
        # Cheapest list price, but all prepaid for 36 months at 10 %:
        # financing adds 1 × 0.10 × 18/12 = 15 % → 2.30
        "aurora": _price(
            term_months=36, prepayment_ratio=Decimal(1), cost_of_capital_annual=Decimal("0.1")
        ),
        # 2.20 list, pay as you go → 2.20
        "borealis": _price(unit_price=Decimal("2.20"), term_months=36),
        # Same 2.20 reached through a monthly price: 1,606 ÷ 730 = 2.20
        "cirrus": _price(unit_price=Decimal(1606), billing_basis="per_month", term_months=36),
    }
    ranking = normalised_price_ranking(offers)
    assert [(r.rank, r.offer) for r in ranking] == [
        (1, "borealis"),
        (1, "cirrus"),
        (3, "aurora"),
    ]
    assert ranking[0].premium_over_cheapest == 0
    # (2.30 − 2.20) ÷ 2.20 = 0.04545…
    assert ranking[2].premium_over_cheapest.quantize(Decimal("0.0001")) == Decimal("0.0455")
    assert normalised_price_ranking({}) == []

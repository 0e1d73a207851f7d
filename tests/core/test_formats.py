"""The one formatting layer: every number people read is written the same way."""

import datetime as dt
import zoneinfo
from decimal import Decimal
from fractions import Fraction

import pytest
from django.template import Context, Template
from django.test import override_settings
from django.utils import translation

from apps.core import formats

BOTH = ("en", "zh-hans")


@pytest.mark.parametrize("lang", BOTH)
@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [
        (Decimal("1150000.000000"), None, "1,150,000"),
        (Decimal("1900000.00"), 2, "1,900,000.00"),
        (1234567, None, "1,234,567"),
        (-1234.5, 2, "-1,234.50"),
        (Decimal("-9876543.21"), None, "-9,876,543.21"),
        (0, None, "0"),
        (Decimal("0"), 2, "0.00"),
        (Decimal("-0.001"), 2, "0.00"),
        (Decimal("2.345"), 2, "2.35"),  # half up, as on an invoice
        (Decimal("2.5"), 0, "3"),
        (Decimal("12.50"), None, "12.5"),
        (Fraction(1, 3), 3, "0.333"),
        ("1000.5", None, "1,000.5"),
        (None, None, "—"),
        (None, 2, "—"),
    ],
)
def test_number(lang, value, places, expected):
    with translation.override(lang):
        assert formats.number(value, places) == expected


@pytest.mark.parametrize("lang", BOTH)
@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        (Decimal("1900000.00"), "USD", "1,900,000.00 USD"),
        (Decimal("1150000.000000"), "CNY", "1,150,000.00 CNY"),
        (Decimal("-250.5"), "USD", "-250.50 USD"),
        (0, "EUR", "0.00 EUR"),
        (Decimal("0.005"), "USD", "0.01 USD"),
        (Decimal("12.5"), "", "12.50"),
        (None, "USD", "—"),
    ],
)
def test_money(lang, amount, currency, expected):
    with translation.override(lang):
        assert formats.money(amount, currency) == expected


def test_rate_keeps_four_places():
    assert formats.rate(Decimal("2.123456"), "USD") == "2.1235 USD"
    assert formats.rate(Decimal("1234.5"), "CNY") == "1,234.5000 CNY"
    assert formats.rate(None, "USD") == "—"


@pytest.mark.parametrize(
    ("lang", "value", "kwargs", "expected"),
    [
        ("en", Decimal("0.3"), {}, "30 %"),
        ("zh-hans", Decimal("0.3"), {}, "30%"),
        ("en", Decimal("0.12345"), {}, "12.3 %"),
        ("en", Decimal("0.12345"), {"places": 2}, "12.35 %"),
        ("en", 0, {}, "0 %"),
        ("en", Decimal("-0.05"), {}, "-5 %"),
        ("en", 12.5, {"ratio": False}, "12.5 %"),
        ("zh-hans", 30, {"ratio": False}, "30%"),
        ("en", 125, {"ratio": False}, "125 %"),
        ("en", 1500, {"ratio": False}, "1,500 %"),
        ("en", None, {}, "—"),
        ("zh-hans", None, {"ratio": False}, "—"),
    ],
)
def test_percent(lang, value, kwargs, expected):
    with translation.override(lang):
        assert formats.percent(value, **kwargs) == expected


@override_settings(TIME_ZONE="Asia/Shanghai")
def test_dates_are_iso_in_the_servers_time_zone():
    moment = dt.datetime(2026, 12, 1, 20, 5, tzinfo=zoneinfo.ZoneInfo("UTC"))
    assert formats.date(dt.date(2026, 12, 2)) == "2026-12-02"
    assert formats.date(moment) == "2026-12-02"  # already the 2nd in Shanghai
    assert formats.datetime(moment) == "2026-12-02 04:05 CST"
    assert formats.date(None) == formats.datetime(None) == "—"
    with translation.override("zh-hans"):
        assert formats.date(dt.date(2026, 12, 2)) == "2026-12-02"


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", "1,900,000.00 USD|2.5000 USD|1,150,000|1,150,000.00|30 %|30 %|2026-12-02|—"),
        ("zh-hans", "1,900,000.00 USD|2.5000 USD|1,150,000|1,150,000.00|30%|30%|2026-12-02|—"),
    ],
)
def test_template_filters(lang, expected):
    template = Template(
        "{% load formats %}{{ a|money:c }}|{{ p|rate:c }}|{{ n|number }}|{{ n|number:2 }}"
        "|{{ r|percent }}|{{ q|pct }}|{{ d|isodate }}|{{ none|money:c }}"
    )
    context = Context(
        {
            "a": Decimal("1900000.00"),
            "c": "USD",
            "p": Decimal("2.5"),
            "n": Decimal("1150000.000000"),
            "r": Decimal("0.3000"),
            "q": 30,
            "d": dt.date(2026, 12, 2),
            "none": None,
        }
    )
    with translation.override(lang):
        assert template.render(context) == expected


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        (Decimal("1150000.000000"), "1,150,000.00 USD"),
        (Decimal("3.100000"), "3.10 USD"),
        (Decimal("2.123456"), "2.123456 USD"),
        (Decimal("2150.5"), "2,150.50 USD"),
        (0, "0.00 USD"),
        (None, "—"),
    ],
)
def test_a_quoted_price_keeps_the_digits_quoted(amount, expected):
    assert formats.price(amount, "USD") == expected

"""One way to write numbers, money, percentages and dates for people.

Pages, the signed packet and the CSVs meant for reading all call these functions
(or their template filters in ``apps.core.templatetags.formats``), so an amount
reads ``1,900,000.00 USD`` everywhere instead of ``1900000.00`` on one page and
``1150000.000000`` on another. Exports meant for machines keep raw values.

Grouping and separators follow the active language (Django's per-language formats,
with ``config.formats`` giving Chinese the comma grouping finance documents use).
Rounding is half up, as on an invoice; Django alone would cut the digits off.
A missing value reads as an em dash, never as "None".
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction

from django.utils import formats, timezone
from django.utils.translation import get_language

MISSING = "—"
MONEY_PLACES = 2
RATE_PLACES = 4
PERCENT_PLACES = 1

Number = int | float | Decimal | Fraction | str


def _decimal(value: Number) -> Decimal | None:
    """The value as a Decimal, or None when it is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Fraction):
        return Decimal(value.numerator) / Decimal(value.denominator)
    try:
        return Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        return None


def _round(value: Decimal, places: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)


def _plain(value: Decimal, most: int | None) -> Decimal:
    """Without trailing zeros (1150000.000000 → 1150000), at most ``most`` places."""
    if most is not None:
        value = _round(value, most)
    if value == value.to_integral_value():
        return value.quantize(Decimal(1))
    return value.normalize()


def number(value: Number | None, places: int | None = None) -> str:
    """A number grouped by thousands in the active language.

    ``places`` fixes the decimal places (rounded half up); without it the number
    shows the places it needs and no trailing zeros; a negative ``places`` (as with
    ``floatformat:"-1"``) rounds to that many places and drops trailing zeros.
    """
    exact = None if value is None else _decimal(value)
    if exact is None:
        return MISSING if value is None or value == "" else str(value)
    if places is not None and places < 0:
        # As with floatformat:"-1": up to that many places, none when they are zeros.
        exact, places = _plain(exact, -places), None
    exact = _plain(exact, None) if places is None else _round(exact, places)
    if exact == 0:
        exact = abs(exact)  # never "-0.00"
    return formats.number_format(exact, decimal_pos=places, use_l10n=True, force_grouping=True)


def money(amount: Number | None, currency: str = "", places: int = MONEY_PLACES) -> str:
    """An amount with two decimal places and its currency code: ``1,900,000.00 USD``."""
    if amount is None or amount == "":
        return MISSING
    text = number(amount, places)
    return f"{text} {currency}".strip() if currency else text


def price(amount: Number | None, currency: str = "") -> str:
    """A quoted unit price: cents at least, and every further digit the vendor quoted.

    ``1150000.000000`` reads ``1,150,000.00 USD``; ``2.123456`` keeps its six places,
    since rounding a quoted price would misstate the quote.
    """
    exact = None if amount is None or amount == "" else _decimal(amount)
    if exact is None:
        return money(amount, currency)
    shown = _plain(exact, 6)
    exponent = shown.as_tuple().exponent
    places = max(MONEY_PLACES, -exponent if isinstance(exponent, int) else 0)
    return money(shown, currency, places)


def rate(amount: Number | None, currency: str = "") -> str:
    """A unit price (per GPU-hour), to four places, where cents would hide differences."""
    return money(amount, currency, RATE_PLACES)


def _percent_sign(text: str) -> str:
    # Chinese writes the sign against the number; English pages here keep a space.
    if (get_language() or "").lower().startswith("zh"):
        return f"{text}%"
    return f"{text} %"


def percent(value: Number | None, places: int | None = None, *, ratio: bool = True) -> str:
    """A share as a percentage: 0.3 → ``30 %`` (``30%`` in Chinese).

    ``ratio=False`` takes a value already in percent (30 → ``30 %``). Without
    ``places`` it shows up to one decimal place and no trailing zeros; ``places``
    works as in :func:`number`, negative meaning "up to, without trailing zeros".
    """
    exact = None if value is None else _decimal(value)
    if exact is None:
        return MISSING if value is None or value == "" else str(value)
    if ratio:
        exact *= 100
    return _percent_sign(number(exact, -PERCENT_PLACES if places is None else places))


def date(value: dt.date | None) -> str:
    """A day as ISO ``2026-12-02``, the form no reader can mistake; times in the server's zone."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, dt.datetime):
        value = _local(value).date()
    return value.isoformat()


def datetime(value: dt.datetime | None) -> str:
    """A moment as ``2026-12-02 14:05 UTC``, in the server's time zone and naming it."""
    if value is None or value == "":
        return MISSING
    local = _local(value)
    zone = local.tzname() or ""
    return f"{local:%Y-%m-%d %H:%M} {zone}".strip()


def _local(value: dt.datetime) -> dt.datetime:
    if timezone.is_naive(value):
        return value
    return timezone.localtime(value)


def humanised(key: str) -> str:
    """A stored key read aloud: "egress_allow_list" → "Egress allow list"."""
    return key.replace("_", " ").replace("-", " ").capitalize()


# Two full stops where a sentence ends on a name that ends in one ("Pte. Ltd." + "."); an
# ellipsis ("...") is left as it is.
_DOUBLE_STOP = re.compile(r"(?<!\.)\.\.(?!\.)")
SENTENCE_ENDS = (".", "!", "?", "。", "！", "？")


def one_full_stop(sentence: str) -> str:
    """A sentence built around a name, with one full stop where the name's own ends it."""
    return _DOUBLE_STOP.sub(".", sentence)


def full_stop(text: str) -> str:
    """``text`` closed with a full stop, unless it already ends with one ("Pte. Ltd.")."""
    text = str(text)
    return text if text.rstrip().endswith(SENTENCE_ENDS) else f"{text}."

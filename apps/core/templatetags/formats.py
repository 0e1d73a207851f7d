"""Template filters for the one formatting layer (``{% load formats %}``).

``{{ amount|money:currency }}``, ``{{ price|rate:currency }}`` (four places),
``{{ offer.unit_price|price:currency }}`` (as quoted, cents at least), ``{{ n|number }}`` or
``{{ n|number:2 }}``, ``{{ share|percent }}`` (a ratio, 0.3 → 30 %),
``{{ pct|pct }}`` (already in percent), ``{{ day|isodate }}``, ``{{ moment|isodatetime }}``.
Each reads a missing value as an em dash.
"""

from django import template

from apps.core import formats

register = template.Library()


@register.filter
def money(amount, currency=""):
    return formats.money(amount, currency or "")


@register.filter
def price(amount, currency=""):
    return formats.price(amount, currency or "")


@register.filter
def rate(amount, currency=""):
    return formats.rate(amount, currency or "")


@register.filter
def number(value, places=None):
    return formats.number(value, None if places in (None, "") else int(places))


@register.filter
def percent(ratio, places=None):
    return formats.percent(ratio, None if places in (None, "") else int(places))


@register.filter
def pct(value, places=None):
    return formats.percent(value, None if places in (None, "") else int(places), ratio=False)


@register.filter
def isodate(value):
    return formats.date(value)


@register.filter
def isodatetime(value):
    return formats.datetime(value)


@register.filter(is_safe=True)
def full_stop(text):
    """``{{ vendor|full_stop }}``: the name and the sentence's full stop, one only."""
    return formats.full_stop(text)


@register.filter(is_safe=True)
def one_full_stop(text):
    """``{% filter one_full_stop %}…{% endfilter %}``: a sentence that ends on a name
    ending in a full stop keeps one."""
    return formats.one_full_stop(text)

"""``{{ user_role_keys|sees_portfolio }}``: whether the header links to the portfolio."""

from django import template

from apps.casework.portfolio_overview import may_see_portfolio

register = template.Library()


@register.filter
def sees_portfolio(role_keys) -> bool:
    return may_see_portfolio(role_keys or ())

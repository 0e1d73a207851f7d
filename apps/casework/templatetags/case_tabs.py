"""``{% case_tabs case "history" %}`` (``{% load case_tabs %}``): the tab bar on a case's pages."""

from django import template

from apps.casework.panels import case_nav

register = template.Library()


@register.inclusion_tag("cases/_case_nav.html", takes_context=True)
def case_tabs(context, case, current: str = "") -> dict:
    """The tabs the viewer may open; ``current`` marks the page shown (none on other pages)."""
    return {"nav": case_nav(case, context["user"]), "current": current}

"""``{% load lists %}``: list pages whose sort order, filters and page live in the URL.

{% sort_th "name" _("Case") %} is a column heading that sorts by ``name`` (then, a second
time, in reverse), keeping the filters; {% page_url 3 %} is this list's page 3.
"""

from django import template
from django.utils.html import format_html

register = template.Library()

SORT = "sort"


def _with(request, **changes) -> str:
    query = request.GET.copy()
    for name, value in changes.items():
        query.pop(name, None)
        if value not in (None, ""):
            query[name] = value
    encoded = query.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.simple_tag(takes_context=True)
def page_url(context, number) -> str:
    return _with(context["request"], page=number)


@register.simple_tag(takes_context=True)
def sort_th(context, field: str, label, css: str = ""):
    """A heading that sorts the list by ``field``; says which way it is sorted now."""
    request = context["request"]
    current = request.GET.get(SORT, "")
    if current == field:
        state, target, mark = "ascending", f"-{field}", "▲"
    elif current == f"-{field}":
        state, target, mark = "descending", field, "▼"
    else:
        state, target, mark = "", field, ""
    # A new order starts again from the first page.
    href = _with(request, **{SORT: target, "page": None})
    css_attribute = format_html(' class="{}"', css) if css else ""
    if state:
        return format_html(
            '<th{} aria-sort="{}"><a href="{}">{} <span aria-hidden="true">{}</span></a></th>',
            css_attribute,
            state,
            href,
            label,
            mark,
        )
    return format_html('<th{}><a href="{}">{}</a></th>', css_attribute, href, label)

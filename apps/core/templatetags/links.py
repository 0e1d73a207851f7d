"""``{% load links %}``: show a link only to those who may follow it.

{% if url|may_open:user %}<a href="{{ url }}">…</a>{% else %}{{ url|who_may_open }}{% endif %}
"""

from django import template

from apps.core import links

register = template.Library()


@register.filter
def may_open(url, user) -> bool:
    return links.may_open(user, str(url or ""))


@register.filter
def who_may_open(url) -> str:
    """The roles that may open ``url``, joined for a sentence ("Legal reviewer, Administrator")."""
    return ", ".join(links.who_may_open(str(url or "")))


@register.filter
def held_by(permission, user) -> bool:
    """Whether ``user`` holds ``permission`` (an empty one is held by everyone)."""
    return not permission or bool(
        getattr(user, "is_authenticated", False) and user.has_perm(permission)
    )

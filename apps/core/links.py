"""Links a reader may follow: a page links to another only when the reader may open it.

Every browser view names its permission (``apps.core.access.role_required``); a
link's target is resolved to its view to read that permission. A link the
reader may not follow is replaced by who may, never by a link to a 403.
"""

from functools import lru_cache
from urllib.parse import urlsplit

from django.urls import Resolver404, URLResolver, get_resolver, get_script_prefix, get_urlconf
from django.utils.http import url_has_allowed_host_and_scheme

from apps.core.access import role_labels, roles_holding
from apps.core.roles import roles_of


def _view(url: str):
    path = urlsplit(url).path
    prefix = get_script_prefix()
    if prefix != "/" and path.startswith(prefix):
        path = "/" + path[len(prefix) :]
    return _view_at(get_resolver(get_urlconf()), path)


@lru_cache(maxsize=4096)
def _view_at(resolver: URLResolver, path: str):
    # Remembered for each resolver (a new one when the URLs are loaded again): a page
    # lists many links to a few pages, and resolving walks every pattern.
    try:
        return resolver.resolve(path).func
    except Resolver404:
        return None


def required_permission(url: str) -> str | None:
    """The permission the page at ``url`` (a path on this site) requires, if it names one."""
    return getattr(_view(url), "required_permission", None)


def required_roles(url: str) -> tuple[str, ...]:
    """The roles the page at ``url`` is open to, where it names roles rather than a
    permission (``apps.core.access.roles_required``)."""
    return getattr(_view(url), "required_roles", ())


def may_open(user, url: str) -> bool:
    """Whether ``user`` may open ``url``, as far as the page's permission or roles say."""
    if not url or not getattr(user, "is_authenticated", False):
        return False
    roles = required_roles(url)
    if roles:
        return bool(roles_of(user) & set(roles))
    permission = required_permission(url)
    return permission is None or user.has_perm(permission)


def who_may_open(url: str) -> list[str]:
    """The roles (their labels) whose members may open ``url``."""
    roles = required_roles(url)
    if roles:
        return role_labels(roles)
    permission = required_permission(url)
    return roles_holding(permission) if permission else []


def return_to(request) -> str | None:
    """Where a form was opened from (its ``next``), if that is a page of this site."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if target and allowed else None

"""Permission checks for browser views.

Anonymous visitors are sent to the login page; signed-in users without the
permission get 403. Every view names its permission explicitly.
"""

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from django.contrib.auth.mixins import PermissionRequiredMixin
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase

from apps.core.roles import Role, collect_role_permissions, roles_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class AuthenticatedHttpRequest(HttpRequest):
    """A request that ``role_required`` (or ``login_required``) let in: its user signed in."""

    user: "User"


R = TypeVar("R", bound=HttpRequest)
P = ParamSpec("P")
View = Callable[Concatenate[R, P], HttpResponseBase]


class RoleRequiredMixin(PermissionRequiredMixin):
    """``permission_required`` must be set; Django raises if it is not."""


class MissingPermission(PermissionDenied):
    """A 403 that knows the permission it lacked, so the page can say who holds it."""

    def __init__(self, permission: str):
        super().__init__(permission)
        self.permission = permission


class MissingRole(PermissionDenied):
    """A 403 for a page open to named roles rather than to a permission's holders."""

    def __init__(self, roles: tuple[str, ...]):
        super().__init__(", ".join(roles))
        self.roles = roles


def role_labels(roles) -> list[str]:
    """The roles' labels, in the order of ``Role``."""
    return [str(Role(role).label) for role in Role.values if role in roles]


def roles_holding(permission: str) -> list[str]:
    """The roles (their labels) whose members hold ``permission``."""

    granted = collect_role_permissions()
    return [
        str(Role(role).label)
        for role in Role.values
        if role == Role.ADMIN or permission in granted.get(role, set())
    ]


def role_required(permission: str) -> Callable[[View[R, P]], View[R, P]]:
    def decorator(view: View[R, P]) -> View[R, P]:
        @wraps(view)
        def wrapped(request: R, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:

            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(permission):
                raise MissingPermission(permission)
            return view(request, *args, **kwargs)

        wrapped.__dict__["required_permission"] = permission  # read by apps.core.links
        return wrapped

    return decorator


def roles_required(*roles: str) -> Callable[[View[R, P]], View[R, P]]:
    """For a page that reads across areas for some roles only, where no one permission of
    the areas says who: the signed-in person holds one of ``roles`` (a superuser counts as
    an administrator, ``apps.core.roles.roles_of``)."""

    def decorator(view: View[R, P]) -> View[R, P]:
        @wraps(view)
        def wrapped(request: R, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not roles_of(request.user) & set(roles):
                raise MissingRole(roles)
            return view(request, *args, **kwargs)

        wrapped.__dict__["required_roles"] = roles  # read by apps.core.links
        return wrapped

    return decorator

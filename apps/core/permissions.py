"""Explicit permissions for every API endpoint.

The project's default permission class is ``DenyAll``: an endpoint that does
not declare what it needs answers 403 to everyone, so a forgotten declaration
fails closed. Endpoints declare ``required_permissions``, a mapping from HTTP
method to a Django permission name (``app_label.codename``), checked against
the user's role groups.
"""

from rest_framework.permissions import BasePermission

SAFE_ALIASES = {"HEAD": "GET", "OPTIONS": "GET"}


class DenyAll(BasePermission):
    def has_permission(self, request, view) -> bool:
        return False


class RolePermission(BasePermission):
    """Grant a request when the user holds the permission declared for its method."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not user or not user.is_authenticated:
            return False
        method = SAFE_ALIASES.get(request.method, request.method)
        required = getattr(view, "required_permissions", {}).get(method)
        if required is None:
            return False
        return user.has_perm(required)

"""The roles of docs/roles.md and what each may do.

Roles are Django groups (created by migration ``0001_roles``). Each app states
what each role may do in its own ``roles.py`` (``ROLE_PERMISSIONS``); they are
merged here and re-applied after every ``migrate``, so code is the single
statement of who may do what. The harness service account is not a role: it
authenticates with a scoped harness token.
"""

from importlib import import_module

from django.apps import apps as django_apps
from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    PROCUREMENT = "procurement_reviewer", _("Procurement reviewer")
    LEGAL = "legal_reviewer", _("Legal reviewer")
    TECH_LEAD = "tech_lead", _("Tech lead")
    AUDITOR = "auditor", _("Auditor")
    ADMIN = "admin", _("Administrator")


def view(*models_: str) -> list[str]:
    """``"app.model"`` → ``"app.view_model"``."""
    return [f"{m.split('.')[0]}.view_{m.split('.')[1]}" for m in models_]


def edit(*models_: str) -> list[str]:
    """``"app.model"`` → add and change permissions."""
    perms = []
    for m in models_:
        app, model = m.split(".")
        perms += [f"{app}.add_{model}", f"{app}.change_{model}"]
    return perms


def collect_role_permissions() -> dict[str, set[str]]:
    """Merge every installed app's ``roles.ROLE_PERMISSIONS``."""
    merged: dict[str, set[str]] = {role: set() for role in Role.values}
    for config in django_apps.get_app_configs():
        if not config.name.startswith("apps."):
            continue
        try:
            module = import_module(f"{config.name}.roles")
        except ModuleNotFoundError as error:
            if error.name != f"{config.name}.roles":
                raise
            continue
        for role, names in getattr(module, "ROLE_PERMISSIONS", {}).items():
            merged[role].update(names)
    return merged


def sync_role_permissions(sender=None, **kwargs) -> None:
    from django.contrib.auth.models import Group, Permission

    # Groups are created by migration 0001_roles, and again here: a database
    # flush (as between transactional tests) empties them, then emits
    # post_migrate, which lands here.
    everything = list(Permission.objects.select_related("content_type"))
    for role, names in collect_role_permissions().items():
        group, _created = Group.objects.get_or_create(name=role)
        if role == Role.ADMIN:
            group.permissions.set(everything)
            continue
        group.permissions.set([p for p in everything if _name(p) in names])


def _name(permission) -> str:
    return f"{permission.content_type.app_label}.{permission.codename}"

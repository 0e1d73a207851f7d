"""The roles of docs/roles.md and what each may do: the names every app grants to.

Roles are Django groups (created by migration ``0001_roles``). Each app states
what each role may do in its own ``roles.py`` (``ROLE_PERMISSIONS``); they are
merged here, and ``apps.accounts.roles`` re-applies them after every ``migrate``,
so code is the single statement of who may do what. The harness service account is not a role: it
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
    FINANCE = "finance_approver", _("Finance approver")
    AUDITOR = "auditor", _("Auditor")
    ADMIN = "admin", _("Administrator")


def roles_of(user) -> set[str]:
    """The roles a person holds: their role groups, and the administrator's for a
    superuser, who holds every permission whatever their groups (as an account made with
    ``createsuperuser`` does, in no group). Where the rules name a role (two-factor
    sign-in, whose findings a person accepts, what their dashboard shows), this is the
    answer. Groups that are not roles are left out."""
    if user is None or not user.is_authenticated:
        return set()
    names = set(user.groups.values_list("name", flat=True))
    held = {role for role in Role.values if role in names}
    if user.is_superuser:
        held.add(Role.ADMIN)
    return held


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


# Everyone who reads a case sees that one of its stored files no longer matches its
# digest; nobody edits an alarm from a page (it is raised by the download itself).
ROLE_PERMISSIONS = {
    Role.PROCUREMENT: view("core.fileintegrityalarm"),
    Role.LEGAL: view("core.fileintegrityalarm"),
    Role.TECH_LEAD: view("core.fileintegrityalarm"),
    Role.AUDITOR: view("core.fileintegrityalarm"),
    Role.FINANCE: view("core.fileintegrityalarm"),
}

"""The roles of DESIGN §1 and what each may do.

Roles are Django groups (created by migration ``0001_roles``). Their
permissions are listed here and re-applied after every ``migrate``, so the
table below is the single statement of who may do what. The harness service
account is not a role: it authenticates with a scoped harness token.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    PROCUREMENT = "procurement_reviewer", _("Procurement reviewer")
    LEGAL = "legal_reviewer", _("Legal reviewer")
    TECH_LEAD = "tech_lead", _("Tech lead")
    AUDITOR = "auditor", _("Auditor")
    ADMIN = "admin", _("Administrator")


def _view(*models_: str) -> list[str]:
    return [f"{m.split('.')[0]}.view_{m.split('.')[1]}" for m in models_]


def _edit(*models_: str) -> list[str]:
    perms = []
    for m in models_:
        app, model = m.split(".")
        perms += [f"{app}.add_{model}", f"{app}.change_{model}"]
    return perms


READ_ALL = _view(
    "cases.procurementcase",
    "vendors.vendor",
    "offers.offer",
    "offers.declaredspec",
    "sizing.computedemand",
    "scorecards.criteriaset",
    "scorecards.scorecard",
)

ROLE_PERMISSIONS: dict[str, list[str]] = {
    # Creates cases, vendors and offers; fills scorecards (DESIGN §1).
    Role.PROCUREMENT: READ_ALL
    + _edit("cases.procurementcase", "vendors.vendor", "offers.offer")
    + _edit("scorecards.criteriaset", "scorecards.scorecard")
    + ["cases.waive_offer_minimum"],
    # Clause checklists, assessments and waivers arrive with the compliance records.
    Role.LEGAL: READ_ALL,
    # Declared specs, sizing, SLOs, evidence review; approves or rejects.
    Role.TECH_LEAD: READ_ALL
    + _edit("offers.declaredspec", "sizing.computedemand", "scorecards.scorecard")
    + ["cases.change_procurementcase"],
    # Reads everything, changes nothing.
    Role.AUDITOR: READ_ALL + ["cases.view_history"],
    Role.ADMIN: ["*"],
}


def sync_role_permissions(sender=None, **kwargs) -> None:
    from django.contrib.auth.models import Group, Permission

    if not Group.objects.filter(name__in=Role.values).exists():
        return  # migrations not applied yet
    everything = Permission.objects.all()
    for role, names in ROLE_PERMISSIONS.items():
        group, _created = Group.objects.get_or_create(name=role)
        if names == ["*"]:
            group.permissions.set(everything)
            continue
        wanted = set(names)
        perms = [p for p in everything.select_related("content_type") if _name(p) in wanted]
        group.permissions.set(perms)


def _name(permission) -> str:
    return f"{permission.content_type.app_label}.{permission.codename}"

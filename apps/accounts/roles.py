"""The role groups of docs/roles.md, kept in step with what every app grants
(``apps.core.roles``).

Re-applied after every ``migrate``, so code is the single statement of who may
do what.
"""

from apps.core.roles import Role, collect_role_permissions


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

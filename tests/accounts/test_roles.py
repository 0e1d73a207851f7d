from django.contrib.auth.models import Group
from django.core.management import call_command

from apps.core.roles import Role, collect_role_permissions


def test_the_five_roles_exist_with_their_permissions(db):
    groups = {g.name: g for g in Group.objects.prefetch_related("permissions__content_type")}
    assert set(groups) == set(Role.values)
    granted = {
        name: {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}
        for name, group in groups.items()
    }
    assert "cases.add_procurementcase" in granted[Role.PROCUREMENT]
    assert "offers.change_declaredspec" in granted[Role.TECH_LEAD]
    assert "offers.change_declaredspec" not in granted[Role.PROCUREMENT]
    # Auditors read and change nothing; requesting a packet or an export creates
    # a document about the records, it does not change them (docs/roles.md, issue 6).
    may_produce_documents = {"packets.add_packetrequest"}
    assert granted[Role.AUDITOR]
    for permission in granted[Role.AUDITOR] - may_produce_documents:
        assert permission.split(".")[1].startswith(("view_", "export_", "verify_")), permission
    assert len(granted[Role.ADMIN]) > len(granted[Role.TECH_LEAD])


def test_every_declared_permission_exists(db):
    from django.contrib.auth.models import Permission

    existing = {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Permission.objects.select_related("content_type")
    }
    for role, names in collect_role_permissions().items():
        assert names <= existing, (role, names - existing)


def test_roles_come_back_after_a_database_flush(transactional_db):
    call_command("flush", "--noinput", verbosity=0)
    assert set(Group.objects.values_list("name", flat=True)) == set(Role.values)
    assert Group.objects.get(name=Role.TECH_LEAD).permissions.exists()

"""Permission checks read a user's own and their groups' permissions in one query,
and answer exactly as Django's ``ModelBackend`` does."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.accounts.backends import OneQueryPermissionBackend


def fresh(user):
    return get_user_model().objects.get(pk=user.pk)  # no permission cache yet


@pytest.mark.parametrize("username", ["priya", "pablo", "lena", "tariq", "aude", "ada"])
def test_every_role_gets_the_same_permissions_as_from_model_backend(people, username):
    user = people[username]
    expected = ModelBackend().get_all_permissions(fresh(user))
    assert expected
    assert OneQueryPermissionBackend().get_all_permissions(fresh(user)) == expected
    assert fresh(user).get_all_permissions() == expected


def test_a_permission_given_to_the_user_counts_beside_their_groups(lena):
    export = Permission.objects.get(codename="export_case", content_type__app_label="audit")
    assert not fresh(lena).has_perm("audit.export_case")
    lena.user_permissions.add(export)
    user = fresh(lena)
    assert user.has_perm("audit.export_case") and user.has_perm("cases.view_procurementcase")


def test_a_user_in_two_groups_has_both_sets(lena, tariq):
    lena.groups.add(*tariq.groups.all())
    assert fresh(lena).get_all_permissions() == (ModelBackend().get_all_permissions(fresh(lena)))
    assert fresh(tariq).get_all_permissions() < fresh(lena).get_all_permissions()


def test_an_inactive_or_ungrouped_user_has_none(lena):
    lena.groups.clear()
    assert fresh(lena).get_all_permissions() == set()
    lena.groups.add(Group.objects.first())
    lena.is_active = False
    lena.save(update_fields=["is_active"])
    assert fresh(lena).get_all_permissions() == set()


def test_a_superuser_has_every_permission(people):
    root = get_user_model().objects.create_superuser("root", password="pw")
    assert len(fresh(root).get_all_permissions()) == Permission.objects.count()


def test_checking_many_permissions_costs_one_query(tariq):
    user = fresh(tariq)
    with CaptureQueriesContext(connection) as ctx:
        assert user.has_perm("cases.view_procurementcase")
        assert not user.has_perm("cases.waive_offer_minimum")  # denied: no second backend query
        assert not user.has_perm("auth.delete_user")
    assert len(ctx.captured_queries) == 1


def test_signing_in_with_a_password_still_works(client, lena):
    response = client.post(reverse("login"), {"username": "lena", "password": "pw"})
    assert response.status_code == 302
    assert client.get(reverse("cases:list")).status_code == 200

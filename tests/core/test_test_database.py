"""The test database: a copy of the migrated template, given back after every flush."""

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from apps.contracts.models import ChecklistTemplate
from apps.core.roles import Role
from tests import conftest
from tests import database as test_database


def test_the_test_database_holds_what_the_migrations_wrote(db):
    assert set(Group.objects.values_list("name", flat=True)) >= set(Role.values)
    assert ChecklistTemplate.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_flushed_database_is_the_template_again_after_a_restore():
    Group.objects.all().delete()
    ChecklistTemplate.objects.all().delete()  # as a transactional test's flush leaves it

    test_database.restore(conftest._database_state[0])

    assert set(Group.objects.values_list("name", flat=True)) >= set(Role.values)
    assert ChecklistTemplate.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_flush_is_seen_although_the_roles_come_back_at_once():
    call_command("flush", interactive=False, verbosity=0)
    assert Group.objects.exists()  # re-created by the signal after the flush
    assert test_database.emptied()

    test_database.restore(conftest._database_state[0])

    assert not test_database.emptied()
    assert ChecklistTemplate.objects.exists()

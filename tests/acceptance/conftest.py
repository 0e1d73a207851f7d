import pytest
from django.contrib.auth.models import Group

from apps.core.roles import Role
from tests.acceptance.factories import harness_measures
from tests.acceptance.measures import correctness, soak


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def tomas(people, django_user_model):
    """A second tech lead, who signs off what tariq recorded."""
    user = django_user_model.objects.create_user(
        username="tomas", password="pw", first_name="Tomas"
    )
    user.groups.add(Group.objects.get(name=Role.TECH_LEAD))
    people["tomas"] = user
    return user


@pytest.fixture
def passing_harness(monkeypatch):
    """A 45-minute clean soak and a fully passing core set."""
    harness_measures(monkeypatch, soak_run=soak(minutes=45), correctness_run=correctness(50, 50))

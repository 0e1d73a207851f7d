"""The reassessments page and API, per role; procurement starts one early by hand (POST,
tracked, 409 when one is open)."""

import pytest
from django.urls import reverse

from apps.casework.models import Reassessment
from tests.casework.factories import vendor_in_use, with_emails

READERS = ["priya", "lena", "tariq", "fiona", "aude", "ada"]
STARTERS = {"priya", "pablo", "ada"}


@pytest.fixture
def world(people):
    return vendor_in_use(with_emails(people))


@pytest.mark.parametrize("role", READERS)
def test_every_role_reads_the_page_and_sees_the_vendor_due(browser_as, world, role):
    response = browser_as(role).get(reverse("cases:reassessments"))
    assert response.status_code == 200
    page = response.content.decode()
    assert world.vendor.name in page and world.due_on.isoformat() in page
    start = reverse("cases:reassessment-start", args=[world.vendor.pk])
    assert (start in page) == (role in STARTERS)


@pytest.mark.parametrize("role", ["lena", "tariq", "fiona", "aude"])
def test_only_procurement_starts_one_by_hand(browser_as, world, role):
    url = reverse("cases:reassessment-start", args=[world.vendor.pk])
    assert browser_as(role).post(url).status_code == 403
    assert not Reassessment.objects.exists()


def test_procurement_starts_one_early_once_then_409(
    browser_as, world, people, django_capture_on_commit_callbacks
):
    client = browser_as("priya")
    url = reverse("cases:reassessment-start", args=[world.vendor.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    assert response.status_code == 302
    started = Reassessment.objects.get()
    assert started.started_by == people["priya"] and started.due_on == world.due_on
    assert started.history.get().history_change_reason.startswith("Reassessment started by hand")
    page = client.get(reverse("cases:reassessments")).content.decode()
    assert started.invitation.email in page
    again = client.post(url)
    assert again.status_code == 409
    assert Reassessment.objects.count() == 1


def test_the_api_lists_and_starts(api_as, world, people):
    api = api_as("priya")
    response = api.post("/api/v1/reassessments/start/", {"vendor": world.vendor.pk}, format="json")
    assert response.status_code == 201, response.content
    assert response.data["state"] == "started" and response.data["vendor"] == world.vendor.pk
    again = api.post("/api/v1/reassessments/start/", {"vendor": world.vendor.pk}, format="json")
    assert again.status_code == 409
    listed = api_as("aude").get("/api/v1/reassessments/", {"vendor": world.vendor.pk})
    assert listed.status_code == 200
    assert [row["id"] for row in listed.data["results"]] == [response.data["id"]]
    assert (
        api.post("/api/v1/reassessments/start/", {"vendor": "x"}, format="json").status_code == 400
    )
    missing = api.post("/api/v1/reassessments/start/", {"vendor": 999999}, format="json")
    assert missing.status_code == 404

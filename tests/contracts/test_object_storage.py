"""Waiver evidence in an S3 bucket (moto's server on 127.0.0.1): a store that cannot be
reached when the evidence is stored refuses the waiver whole, with 503 and the reason."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.contracts.models import RedFlagWaiver
from tests.contracts.factories import item
from tests.contracts.test_waivers import PDF, WAIVERS, world  # noqa: F401 - the fixture

pytestmark = pytest.mark.s3

UNAVAILABLE = "The file store cannot be reached just now"


def test_a_waiver_whose_evidence_cannot_be_stored_is_not_recorded(
    lone_s3,
    browser_as,
    api_as,
    world,  # noqa: F811 - the fixture imported above
):
    target = item(world["checklist"], "audit_rights")
    before = RedFlagWaiver.objects.count()
    lone_s3.server.stop()
    page = browser_as("lena").post(
        reverse("contracts:waive", args=[target.pk]),
        {"reason": "Ok", "evidence": SimpleUploadedFile("letter.pdf", PDF)},
    )
    assert page.status_code == 503 and page["Retry-After"]
    assert UNAVAILABLE in page.content.decode()
    api = api_as("lena").post(
        WAIVERS,
        {"item": target.pk, "reason": "Ok", "evidence": SimpleUploadedFile("letter.pdf", PDF)},
        format="multipart",
    )
    assert api.status_code == 503 and UNAVAILABLE in api.json()["detail"]
    assert RedFlagWaiver.objects.count() == before and not target.waivers.exists()

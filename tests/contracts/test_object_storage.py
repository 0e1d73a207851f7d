"""Waiver evidence in an S3 bucket (moto's server on 127.0.0.1): a store that cannot be
reached when the evidence is stored refuses the waiver whole, with 503 and the reason."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.contracts.models import RedFlagWaiver
from apps.contracts.services import checklist_template_publish, red_flag_waive
from tests.contracts.factories import item, make_checklist, make_legal, set_statuses, template_rows
from tests.contracts.test_waivers import PDF, WAIVERS
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.s3

UNAVAILABLE = "The file store cannot be reached just now"


@pytest.fixture
def world(people, priya, lena, lone_s3):
    """A red flag on a high-severity item, waived with evidence stored in the lone bucket."""
    people["leo"] = leo = make_legal("leo")
    checklist_template_publish(
        actor=lena, items=template_rows(high_severity={"sla"}), note="SLA is high-severity"
    )
    case = make_case(priya)
    checklist = make_checklist(lena, offer=make_offer(priya, case, spec=FULL_SPEC))
    set_statuses(lena, checklist, {"sla": "missing", "audit_rights": "missing"})
    waiver = red_flag_waive(
        actor=leo,
        item=item(checklist, "sla"),
        reason="Credits suffice",
        evidence=SimpleUploadedFile("vendor letter.pdf", PDF, "application/pdf"),
    )
    return {"case": case, "checklist": checklist, "waiver": waiver, "leo": leo}


def test_a_waiver_whose_evidence_cannot_be_stored_is_not_recorded(
    lone_s3,
    browser_as,
    api_as,
    world,
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

"""A finding whose rule names a document is accepted only with it (docs/rules/findings.md):
the document is checked, stored once with its SHA-256 and downloaded checked against it,
from the findings page and the API; a refused acceptance stores nothing."""

import copy
import hashlib
import html
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from apps.approvals.models import FindingAcceptance
from apps.contracts.models import ClauseChecklist
from apps.contracts.services import checklist_save
from apps.core.roles import Role
from tests.approvals.factories import make_ready_case

PENALTY = "contracts.exit_penalty"
READERS = ["priya", "lena", "tariq", "fiona", "aude", "ada"]
CALCULATION = b"Remaining 20 months x 10 % = 2 months of fees"


@pytest.fixture(scope="module")
def _world(module_people):
    people = module_people
    case, offer, _offers = make_ready_case(people)
    checklist_save(
        actor=people["lena"],
        checklist=ClauseChecklist.objects.get(offer=offer),
        items=[],
        reason="Exit terms read from the contract",
        contract_terms={"exit_penalty_pct": "10"},
    )
    return {"case": case, "offer": offer}


@pytest.fixture
def world(_world, people):
    """A ready case whose offer carries a 10 % penalty for leaving early."""
    return copy.deepcopy(_world)


def _body(world, **more) -> dict:
    return {
        "code": PENALTY,
        "offer": world["offer"].pk,
        "key": "exit_penalty_pct",
        "role": Role.LEGAL,
        "reason": "Leaving early is unlikely within the term",
        "expires_on": (timezone.localdate() + timedelta(days=90)).isoformat(),
        **more,
    }


def _api_accept(api, world, **more):
    url = f"/api/v1/cases/{world['case'].pk}/findings/accept/"
    return api.post(url, _body(world, **more), format="multipart")


def _penalty(api, world) -> dict:
    found = api.get(f"/api/v1/cases/{world['case'].pk}/findings/").json()
    return next(f for f in found if f["code"] == PENALTY)


def _stored_acceptance_files(stored_files) -> list:
    return [f for f in stored_files() if f.name.startswith("approvals/acceptances/")]


def test_without_the_document_the_acceptance_is_refused_and_nothing_is_kept(
    api_as, world, stored_files
):
    api = api_as("lena")
    penalty = _penalty(api, world)
    assert "calculation of what leaving early would cost" in penalty["document_required"]
    refused = _api_accept(api, world)
    assert refused.status_code == 400
    assert "Attach the calculation of what leaving early would cost" in str(
        refused.json()["evidence"]
    )
    # A file that is not what its name says is refused whole as well.
    fake = SimpleUploadedFile("calculation.pdf", b"not a PDF at all", "application/pdf")
    refused = _api_accept(api, world, evidence=fake)
    assert refused.status_code == 400
    assert "is not a PDF file" in str(refused.json()["evidence"])
    assert not FindingAcceptance.objects.filter(case=world["case"]).exists()
    assert _stored_acceptance_files(stored_files) == []
    assert _penalty(api, world)["status"] == "open"


def test_a_document_over_the_limit_is_refused_before_it_is_read(api_as, world, settings):
    settings.WAIVER_EVIDENCE_MAX_BYTES = 100
    api = api_as("lena")
    over = SimpleUploadedFile("calculation.txt", b"x" * 200, "text/plain")
    refused = _api_accept(api, world, evidence=over)
    assert refused.status_code == 400 and "larger than 100" in str(refused.json()["evidence"])
    # A body far over the limit is refused from its declared length alone.
    huge = SimpleUploadedFile("calculation.txt", b"x" * (70 * 1024), "text/plain")
    refused = _api_accept(api, world, evidence=huge)
    assert refused.status_code == 413
    assert not FindingAcceptance.objects.filter(case=world["case"]).exists()


def test_the_acceptance_keeps_its_document_for_every_reader(api_as, client, world):
    upload = SimpleUploadedFile("calculation.txt", CALCULATION, "text/plain")
    accepted = _api_accept(api_as("lena"), world, evidence=upload)
    assert accepted.status_code == 201, accepted.content
    body = accepted.json()
    digest = hashlib.sha256(CALCULATION).hexdigest()
    assert body["document"] == {
        "name": "calculation.txt",
        "content_type": "text/plain",
        "size_bytes": len(CALCULATION),
        "sha256": digest,
    }
    row = FindingAcceptance.objects.get(pk=body["id"])
    assert row.history.get().evidence_sha256 == digest  # on record from the first write
    url = f"/api/v1/finding-acceptances/{row.pk}/document/"
    for reader in READERS:
        response = api_as(reader).get(url)
        assert response.status_code == 200, reader
        assert b"".join(response.streaming_content) == CALCULATION
    assert client.get(url).status_code in (401, 403)
    assert _penalty(api_as("aude"), world)["status"] == "accepted"


def test_the_findings_page_takes_the_document_and_offers_it_back(browser_as, world):
    client = browser_as("lena")
    page_url = reverse("approvals:findings", args=[world["case"].pk])
    page = html.unescape(client.get(page_url).content.decode())
    assert "An acceptance attaches" in page
    assert 'enctype="multipart/form-data"' in page
    accept_url = reverse("approvals:finding-accept", args=[world["case"].pk])
    missing = client.post(accept_url, _body(world))
    assert missing.status_code == 200
    assert "Attach the calculation of what leaving early would cost" in html.unescape(
        missing.content.decode()
    )
    sent = client.post(
        accept_url,
        {**_body(world), "evidence": SimpleUploadedFile("calc.txt", CALCULATION, "text/plain")},
    )
    assert sent.status_code == 302
    acceptance = FindingAcceptance.objects.get(case=world["case"], code=PENALTY)
    download = reverse("approvals:acceptance-document", args=[world["case"].pk, acceptance.pk])
    auditor = browser_as("aude")
    assert f'href="{download}"' in auditor.get(page_url).content.decode()
    response = auditor.get(download)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == CALCULATION
    # The approval page names the document with its digest, as the packet's summary does.
    approval = html.unescape(
        auditor.get(reverse("approvals:case", args=[world["case"].pk])).content.decode()
    )
    assert f"Attached: calc.txt, SHA-256 {hashlib.sha256(CALCULATION).hexdigest()}." in approval


def test_above_a_fifth_of_the_contract_finance_confirms_with_its_own_document(
    api_as, people, world
):
    checklist_save(
        actor=people["lena"],
        checklist=ClauseChecklist.objects.get(offer=world["offer"]),
        items=[],
        reason="The penalty was misread: 30 %",
        contract_terms={"exit_penalty_pct": "30"},
    )
    legal = api_as("lena")
    found = api_as("aude").get(f"/api/v1/cases/{world['case'].pk}/findings/").json()
    assert PENALTY not in {f["code"] for f in found}
    high = next(f for f in found if f["code"] == "contracts.exit_penalty_high")
    assert high["owners"] == [Role.LEGAL, Role.FINANCE] and high["blocking"] is True

    def accept(api, role):
        upload = SimpleUploadedFile("calculation.txt", CALCULATION, "text/plain")
        body = _body(world, code="contracts.exit_penalty_high", role=role, evidence=upload)
        url = f"/api/v1/cases/{world['case'].pk}/findings/accept/"
        return api.post(url, body, format="multipart")

    assert accept(legal, Role.LEGAL).status_code == 201
    found = api_as("aude").get(f"/api/v1/cases/{world['case'].pk}/findings/").json()
    high = next(f for f in found if f["code"] == "contracts.exit_penalty_high")
    assert high["status"] == "open" and high["awaiting"] == [Role.FINANCE]
    assert accept(api_as("fiona"), Role.FINANCE).status_code == 201
    found = api_as("aude").get(f"/api/v1/cases/{world['case'].pk}/findings/").json()
    assert next(f for f in found if f["code"] == "contracts.exit_penalty_high")["status"] == (
        "accepted"
    )

"""The four deliverables, each a signed document of its own
(docs/rules/audit.md#deliverables): the compute spec sheet, the compliance and risk
self-check record, the network and access-control plan, the acceptance and load-test
report.

Each is issued on the demo case through the same task as the whole-case packet, by
the role that owns its area, and checked the way an auditor would: pyHanko's
validator, poppler's ``pdfsig``, and ``verify_packet``, which must refuse a changed byte.
"""

import io
import json
import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone, translation
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext

from apps.casework.packet.chapters import case_sections, document_sections
from apps.packets.models import DocumentKind, PacketRequest
from apps.packets.services import packet_request_create
from apps.packets.signing import certificate_from_pem
from tests.packets.factories import make_packet_case, make_stored_packet
from tests.packets.pdftools import pdfsig, pdftotext
from tests.packets.test_packet_pdf import _attachment_bytes, _flip_one_byte

pytestmark = pytest.mark.whole_case

# kind: (who issues it, its number's code, chapters it holds, a chapter it leaves out)
DELIVERABLES = {
    DocumentKind.SPEC_SHEET: (
        "priya",
        "SPEC",
        ["Compute demand and sizing", "Declared specs", "Comparison of offers and scorecards"],
        "Contract clause checklists",
    ),
    DocumentKind.COMPLIANCE_RECORD: (
        "lena",
        "CMPL",
        ["Contract clause checklists", "Data-export self-assessment"],
        "Network and access-control plan",
    ),
    DocumentKind.NETWORK_PLAN: (
        "tariq",
        "NET",
        ["Network and access-control plan"],
        "Declared specs",
    ),
    DocumentKind.ACCEPTANCE_REPORT: (
        "tariq",
        "ACPT",
        ["Acceptance and load-test report", "Evidence and spec verification"],
        "Data-export self-assessment",
    ),
}

# Who may issue each kind; everyone with a role may issue the whole-case packet.
MAY_ISSUE = {
    "priya": {DocumentKind.PACKET, DocumentKind.SPEC_SHEET},
    "lena": {DocumentKind.PACKET, DocumentKind.COMPLIANCE_RECORD},
    "tariq": {
        DocumentKind.PACKET,
        DocumentKind.SPEC_SHEET,
        DocumentKind.NETWORK_PLAN,
        DocumentKind.ACCEPTANCE_REPORT,
    },
    "aude": {DocumentKind.PACKET},
    "ada": set(DocumentKind.values),
}


def _issue(people, case, kind, django_capture_on_commit_callbacks, *, language="en"):
    actor = people[DELIVERABLES[kind][0]]
    with django_capture_on_commit_callbacks(execute=True):
        request = packet_request_create(actor=actor, case=case, kind=kind, language=language)
    request = PacketRequest.objects.get(pk=request.pk)
    assert request.status == PacketRequest.Status.DONE, request.error
    return request.packet


def _pyhanko_status(content: bytes, packet):
    reader = PdfFileReader(io.BytesIO(content), strict=False)
    (signature,) = reader.embedded_regular_signatures
    roots = [certificate_from_pem(packet.signer_certificate_pem)]
    return validate_pdf_signature(signature, ValidationContext(trust_roots=roots))


@pytest.mark.parametrize("kind", list(DELIVERABLES), ids=str)
def test_the_demo_case_issues_each_deliverable_signed_and_verifiable(
    demo_case, people, kind, tmp_path, capsys, django_capture_on_commit_callbacks
):
    case = demo_case
    issuer, code, chapters, left_out = DELIVERABLES[kind]
    packet = _issue(people, case, kind, django_capture_on_commit_callbacks)
    year = timezone.now().year
    assert packet.number.startswith(f"DIL-{code}-{year}-")
    assert packet.document_kind == kind and packet.issued_by == people[issuer]
    history = packet.request.history.last()
    assert history.kind == kind and history.history_user == people[issuer]

    content = packet.file.read()
    path = tmp_path / "document.pdf"
    path.write_bytes(content)

    # pyHanko's validator: intact, over the whole file, by the key the packets use.
    status = _pyhanko_status(content, packet)
    assert status.intact and status.valid and status.trusted
    assert status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    if shutil.which("pdfsig"):
        verdict = pdfsig(path)
        assert verdict.valid, verdict.output

    # The cover says what the document is; its chapters are its own.
    text = pdftotext(path)
    assert str(kind.label) in text and packet.number in text
    for title in [*chapters, "Change history", "Manifest"]:
        assert title in text, title
    assert left_out not in text
    assert "Executive summary" not in text
    manifest = json.loads(_attachment_bytes(path))
    assert manifest["packet"] == packet.number and manifest["document"] == kind

    call_command("verify_packet", str(path))
    out = capsys.readouterr().out
    assert f"VALID: packet {packet.number}" in out and f"document:             {kind.label}" in out

    altered = tmp_path / "altered.pdf"
    altered.write_bytes(_flip_one_byte(content))
    with pytest.raises(CommandError, match="NOT VALID"):
        call_command("verify_packet", str(altered))
    assert not _pyhanko_status(altered.read_bytes(), packet).intact
    if shutil.which("pdfsig"):
        assert not pdfsig(altered).valid


def test_a_deliverable_in_chinese_and_on_the_verify_page(
    demo_case, people, browser_as, tmp_path, django_capture_on_commit_callbacks
):
    case = demo_case
    kind = DocumentKind.COMPLIANCE_RECORD
    packet = _issue(people, case, kind, django_capture_on_commit_callbacks, language="zh-hans")
    path = tmp_path / "record.pdf"
    content = packet.file.read()
    path.write_bytes(content)
    text = pdftotext(path)
    assert "合规与风险自查记录" in text and "合同必查条款清单" in text
    assert "Compliance and risk self-check record" not in text
    if shutil.which("pdfsig"):
        assert pdfsig(path).valid

    # The same verification page as the packets, naming what the document is.
    from django.core.files.uploadedfile import SimpleUploadedFile

    page = browser_as("aude").post(
        reverse("packets:verify"),
        {"file": SimpleUploadedFile("record.pdf", content, "application/pdf")},
    )
    body = page.content.decode()
    assert f"Valid: this is packet {packet.number}, unchanged." in body
    assert "Compliance and risk self-check record" in body


def test_the_whole_case_packet_holds_every_chapter_of_each_deliverable(demo_case, people):
    case = demo_case
    with translation.override("en"):
        packet_titles = {section.title for section in case_sections(case)}
        for kind in DELIVERABLES:
            titles = {section.title for section in document_sections(case, kind)}
            assert titles and titles <= packet_titles, kind


def test_numbers_share_one_sequence_and_carry_their_kind(demo_case, people):
    case = demo_case
    year = timezone.now().year
    numbers = [
        packet_request_create(actor=people["ada"], case=case, kind=kind, queue=False).number
        for kind in [DocumentKind.PACKET, *DELIVERABLES]
    ]
    assert numbers == [
        f"DIL-{year}-000001",
        f"DIL-SPEC-{year}-000002",
        f"DIL-CMPL-{year}-000003",
        f"DIL-NET-{year}-000004",
        f"DIL-ACPT-{year}-000005",
    ]
    # A second click while one is in progress returns it; another kind is its own request.
    again = packet_request_create(
        actor=people["tariq"], case=case, kind=DocumentKind.NETWORK_PLAN, queue=False
    )
    assert again.number == numbers[3]


# --- who may issue which document, through the API and the pages ------------------


@pytest.mark.parametrize("role", list(MAY_ISSUE))
def test_each_role_may_issue_the_documents_of_its_area_through_the_api(
    demo_case, api_as, people, role
):
    case = demo_case
    api = api_as(role)
    for kind in DocumentKind.values:
        response = api.post(f"/api/v1/cases/{case.pk}/packets/", {"kind": kind}, format="json")
        if kind in MAY_ISSUE[role]:
            assert response.status_code == 202, (kind, response.data)
            assert response.data["kind"] == kind
            assert response.data["number"].startswith("DIL-")
        else:
            assert response.status_code == 403, (kind, response.data)
    issued = PacketRequest.objects.filter(case=case)
    assert {r.kind for r in issued} == MAY_ISSUE[role]


def test_the_api_lists_documents_by_kind_and_refuses_what_is_not_there(demo_case, api_as, people):
    case = demo_case
    # Listing needs an issued document to exist, not a rendered one (the real pipeline
    # issues each kind in the tests above).
    make_stored_packet(people["tariq"], case, kind=DocumentKind.NETWORK_PLAN)
    api = api_as("aude")
    listed = api.get(f"/api/v1/cases/{case.pk}/packets/").data
    assert [p["kind"] for p in listed] == ["network_plan"]
    assert api.get(f"/api/v1/cases/{case.pk}/packets/?kind=network_plan").data == listed
    assert api.get(f"/api/v1/cases/{case.pk}/packets/?kind=packet").data == []
    assert api.get(f"/api/v1/cases/{case.pk}/packets/?kind=nonsense").status_code == 400
    bad = api_as("tariq").post(
        f"/api/v1/cases/{case.pk}/packets/", {"kind": "nonsense"}, format="json"
    )
    assert bad.status_code == 400 and "kind" in bad.data

    # A case with no access matrix or network plan yet: there is nothing to issue.
    bare = make_packet_case(people["priya"], offers=1)
    before = PacketRequest.objects.count()
    refused = api_as("tariq").post(
        f"/api/v1/cases/{bare.pk}/packets/", {"kind": "network_plan"}, format="json"
    )
    assert refused.status_code == 400
    assert "Nothing is recorded on this case yet" in str(refused.data["kind"])
    assert PacketRequest.objects.count() == before


def test_the_case_page_and_the_packet_pages_offer_each_role_its_deliverables(
    demo_case, browser_as, people
):
    case = demo_case
    tariq = browser_as("tariq")
    packets = tariq.get(reverse("cases:area", args=[case.pk, "packets"])).content.decode()
    assert "Issue the network and access-control plan" in packets
    assert "Issue the acceptance and load-test report" in packets
    assert "Issue the compliance and risk self-check record" not in packets
    # The area a deliverable is drawn from offers it to the role that owns it, and only it.
    access = tariq.get(reverse("cases:area", args=[case.pk, "access"])).content.decode()
    assert "Issue the network and access-control plan" in access
    assert "Issue the acceptance and load-test report" not in access
    for role, area, kind in [
        ("lena", "data-export", "compliance and risk self-check record"),
        ("priya", "offers", "compute spec sheet"),
        ("tariq", "acceptance", "acceptance and load-test report"),
    ]:
        page = browser_as(role).get(reverse("cases:area", args=[case.pk, area]))
        assert f"Issue the {kind}" in page.content.decode(), (role, area)
    auditor = browser_as("aude").get(reverse("cases:area", args=[case.pk, "access"]))
    assert "Issue the" not in auditor.content.decode()

    tariq = browser_as("tariq")  # one test client, signed in as each in turn
    form = tariq.get(reverse("packets:request", args=[case.pk]) + "?kind=network_plan")
    body = form.content.decode()
    assert "Issue the network and access-control plan" in body
    assert 'value="network_plan" selected' in body
    assert 'value="compliance_record"' not in body  # only the kinds this role may issue

    posted = tariq.post(reverse("packets:request", args=[case.pk]), {"kind": "network_plan"})
    assert posted.status_code == 302
    request = PacketRequest.objects.get(case=case)
    assert request.kind == DocumentKind.NETWORK_PLAN and request.requested_by == people["tariq"]
    status = tariq.get(posted["Location"]).content.decode()
    assert f"Network and access-control plan {request.number}" in status

    # A kind the role does not own is refused, and nothing is requested.
    refused = tariq.post(reverse("packets:request", args=[case.pk]), {"kind": "compliance_record"})
    assert refused.status_code == 200
    assert PacketRequest.objects.filter(case=case).count() == 1

    legal = browser_as("lena").get(reverse("packets:list", args=[case.pk])).content.decode()
    assert "Issue the compliance and risk self-check record" in legal
    assert "Issue the network and access-control plan" not in legal
    assert request.number in legal  # listed with the case's packets and requests


def test_the_issue_command_takes_a_kind_and_refuses_a_role_that_does_not_own_it(people):
    case = make_packet_case(people["priya"], offers=1)
    with pytest.raises(CommandError, match="may not issue the compliance"):
        call_command("issue_packet", str(case.pk), "--user", "tariq", "--kind", "compliance_record")
    with pytest.raises(CommandError, match="Nothing is recorded on this case yet"):
        call_command("issue_packet", str(case.pk), "--user", "tariq", "--kind", "network_plan")
    assert not PacketRequest.objects.exists()

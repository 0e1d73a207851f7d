"""Signed contract documents, clause links and the contract's dates: the services, every
new page per role, and the whole path through HTTP to procurement's My work."""

import copy
import hashlib
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template.loader import render_to_string
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from apps.approvals.models import Reminder
from apps.casework.registers import area_registers
from apps.casework.reminders import reminders_send
from apps.contracts import packet
from apps.contracts.models import ContractDocument, ContractTerms
from apps.contracts.services import (
    checklist_item_link,
    contract_dates_save,
    contract_document_upload,
)
from tests.contracts.factories import (
    docx_bytes,
    item,
    make_checklist,
    pdf_bytes,
    upload_document,
)
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.stored import store_folder, stored_names

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
UPLOADERS = {"priya", "lena", "ada"}
LEGAL = {"lena", "ada"}


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(scope="module")
def _world(module_people, tmp_path_factory):
    """One offer with a checklist and a three-page MSA, built once for the module."""
    media = tmp_path_factory.mktemp("contract-media")
    with override_settings(MEDIA_ROOT=media):
        priya, lena = module_people["priya"], module_people["lena"]
        case = make_case(priya)
        offer = make_offer(priya, case, spec=FULL_SPEC)
        checklist = make_checklist(lena, offer=offer)
        msa = upload_document(priya, offer, "msa", pages=3)
    return media, {"case": case, "offer": offer, "checklist": checklist, "msa": msa}


@pytest.fixture
def world(_world, people, media_root):
    media, built = _world
    store_folder(media)
    return copy.deepcopy(built)


def _upload(name, raw):
    return SimpleUploadedFile(name, raw)


# --- the services -------------------------------------------------------------------------


def test_uploading_a_kind_again_makes_the_next_version_and_keeps_the_earlier(world, lena):
    offer, first = world["offer"], world["msa"]
    second = contract_document_upload(
        actor=lena, offer=offer, kind="msa", upload=_upload("MSA signed.pdf", pdf_bytes(5))
    )
    dpa = contract_document_upload(
        actor=lena, offer=offer, kind="dpa", upload=_upload("dpa.docx", docx_bytes())
    )
    assert (first.number, second.number, dpa.number) == (1, 2, 1)
    assert str(second) == "MSA v2" and second.page_count == 5 and dpa.page_count is None
    assert second.sha256 == hashlib.sha256(pdf_bytes(5)).hexdigest()
    assert dpa.content_type.endswith("wordprocessingml.document")
    assert ContractDocument.objects.filter(offer=offer).count() == 3
    assert {first.storage_name, second.storage_name, dpa.storage_name} <= set(stored_names())
    assert second.history.count() == 1  # tracked: who uploaded it, when, why


def test_the_type_is_judged_by_content_not_by_name(world, priya):
    # A PDF named as a Word file is a PDF, and is offered back under its true type.
    stored = contract_document_upload(
        actor=priya, offer=world["offer"], kind="other", upload=_upload("terms.docx", pdf_bytes(1))
    )
    assert stored.content_type == "application/pdf" and stored.name == "terms.pdf"


@pytest.mark.parametrize(
    "name,raw,says",
    [
        ("scan.pdf", b"\x89PNG\r\n\x1a\n" + b"0" * 64, "neither"),
        ("broken.pdf", b"%PDF-1.4\nnot really a pdf", "damaged"),
        ("letter.docx", docx_bytes(body=False), "neither"),
        ("letter.docx", b"PK\x03\x04 not a zip at all", "neither"),
        ("empty.pdf", b"", "empty"),
    ],
    ids=["png-named-pdf", "malformed-pdf", "zip-without-document", "bad-zip", "empty"],
)
def test_a_wrong_or_malformed_file_is_refused_whole_and_nothing_is_stored(
    world, priya, name, raw, says
):
    before = stored_names()
    with pytest.raises(ValidationError) as refused:
        contract_document_upload(
            actor=priya, offer=world["offer"], kind="msa", upload=_upload(name, raw)
        )
    assert says in " ".join(refused.value.message_dict["file"])
    assert stored_names() == before
    assert ContractDocument.objects.filter(offer=world["offer"]).count() == 1


def test_a_file_over_the_limit_is_refused_and_nothing_is_stored(world, priya, settings):
    settings.CONTRACT_DOCUMENT_MAX_BYTES = 100
    before = stored_names()
    with pytest.raises(ValidationError) as refused:
        contract_document_upload(
            actor=priya, offer=world["offer"], kind="msa", upload=_upload("big.pdf", pdf_bytes(2))
        )
    assert "larger than" in " ".join(refused.value.message_dict["file"])
    assert stored_names() == before


def test_only_legal_and_procurement_upload(world, tariq):
    with pytest.raises(PermissionDenied):
        contract_document_upload(
            actor=tariq, offer=world["offer"], kind="msa", upload=_upload("m.pdf", pdf_bytes(1))
        )


def test_a_clause_links_to_a_page_within_the_pdf(world, lena):
    sla = item(world["checklist"], "sla")
    linked = checklist_item_link(
        actor=lena, item=sla, document=world["msa"], page=3, quote="99.9 % monthly"
    )
    assert (linked.document_id, linked.document_page, linked.document_quote) == (
        world["msa"].pk,
        3,
        "99.9 % monthly",
    )
    assert linked.history.first().history_change_reason == "Clause linked to MSA v1, page 3"
    with pytest.raises(ValidationError) as refused:
        checklist_item_link(actor=lena, item=sla, document=world["msa"], page=4, quote="")
    assert refused.value.message_dict["page"] == ["MSA v1 has pages 1 to 3."]
    sla.refresh_from_db()
    assert sla.document_page == 3  # the refused link changed nothing


def test_a_link_is_refused_for_a_docx_page_a_long_quote_or_another_offers_document(
    world, lena, priya
):
    sla = item(world["checklist"], "sla")
    dpa = upload_document(lena, world["offer"], "dpa", raw=docx_bytes(), name="dpa.docx")
    with pytest.raises(ValidationError) as refused:
        checklist_item_link(actor=lena, item=sla, document=dpa, page=1, quote="")
    assert "page" in refused.value.message_dict
    checklist_item_link(actor=lena, item=sla, document=dpa, page=None, quote="Art. 4")
    with pytest.raises(ValidationError) as refused:
        checklist_item_link(actor=lena, item=sla, document=dpa, page=None, quote="q" * 501)
    assert "quote" in refused.value.message_dict
    elsewhere = make_offer(priya, world["case"], spec=FULL_SPEC)
    foreign = upload_document(priya, elsewhere, "msa")
    with pytest.raises(ValidationError) as refused:
        checklist_item_link(actor=lena, item=sla, document=foreign, page=1, quote="")
    assert "document" in refused.value.message_dict


def test_contract_dates_are_validated_together(world, lena):
    today = timezone.localdate()
    with pytest.raises(ValidationError) as refused:
        contract_dates_save(
            actor=lena,
            checklist=world["checklist"],
            dates={"effective_date": today, "end_date": today - timedelta(days=1)},
            reason="Signed",
        )
    assert "end_date" in refused.value.message_dict
    with pytest.raises(ValidationError) as refused:
        contract_dates_save(
            actor=lena,
            checklist=world["checklist"],
            dates={"renewal_date": today, "notice_deadline": today + timedelta(days=1)},
            reason="Signed",
        )
    assert "notice_deadline" in refused.value.message_dict
    assert not ContractTerms.objects.filter(checklist=world["checklist"]).exists()
    saved = contract_dates_save(
        actor=lena,
        checklist=world["checklist"],
        dates={"renewal_date": today + timedelta(days=90), "notice_deadline": today},
        reason="Signed",
    )
    assert saved.notice_deadline == today and saved.end_date is None


def test_a_passed_notice_deadline_and_a_near_end_are_findings(world, lena):
    today = timezone.localdate()
    contract_dates_save(
        actor=lena,
        checklist=world["checklist"],
        dates={
            "notice_deadline": today - timedelta(days=1),
            "renewal_date": today + timedelta(days=20),
            "end_date": today + timedelta(days=45),
        },
        reason="Read from the signed MSA",
    )
    (register,) = area_registers([world["case"]], today=today)
    codes = {e.rule.code: e for e in register.entries if e.finding.offer_id == world["offer"].pk}
    passed = codes["contracts.notice_deadline_passed"]
    assert passed.blocking and passed.rule.owners == ("procurement_reviewer",)
    near = codes["contracts.end_date_near"]
    assert near.blocking and near.awaiting == ("procurement_reviewer",)
    assert "within 60 days" in near.finding.message


# --- every new page, per role ----------------------------------------------------------

PAGES = [
    ("contracts:documents", "offer", EVERYONE),
    ("contracts:document-upload", "offer", UPLOADERS),
    ("contracts:contract-dates", "offer", LEGAL),
    ("contracts:document-download", "msa", EVERYONE),
    ("contracts:item-link", "item", LEGAL),
]


def _args(world, what):
    if what == "item":
        return [item(world["checklist"], "sla").pk]
    return [world[what].pk]


@pytest.mark.parametrize("name,what,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_page_access_per_role(browser_as, world, name, what, allowed, role):
    response = browser_as(role).get(reverse(name, args=_args(world, what)))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,what,allowed", PAGES, ids=[p[0] for p in PAGES])
def test_pages_send_anonymous_to_login(client, world, name, what, allowed):
    response = client.get(reverse(name, args=_args(world, what)))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ROLES)
def test_upload_through_the_page_per_role(browser_as, world, role):
    url = reverse("contracts:document-upload", args=[world["offer"].pk])
    response = browser_as(role).post(
        url, {"kind": "order_form", "file": _upload("order.pdf", pdf_bytes(1))}
    )
    stored = ContractDocument.objects.filter(offer=world["offer"], kind="order_form").exists()
    if role in UPLOADERS:
        assert response.status_code == 302 and stored
    else:
        assert response.status_code == 403 and not stored


def test_a_refused_upload_page_says_why_and_stores_nothing(browser_as, world):
    before = stored_names()
    response = browser_as("priya").post(
        reverse("contracts:document-upload", args=[world["offer"].pk]),
        {"kind": "msa", "file": _upload("msa.pdf", b"GIF89a not a contract")},
    )
    assert response.status_code == 400
    assert "must be a PDF or a Word (DOCX) file" in response.content.decode()
    assert stored_names() == before


def test_the_download_is_the_stored_file_checked_against_its_digest(browser_as, world):
    response = browser_as("aude").get(
        reverse("contracts:document-download", args=[world["msa"].pk])
    )
    body = b"".join(response.streaming_content)
    assert hashlib.sha256(body).hexdigest() == world["msa"].sha256
    assert response["X-Content-SHA256"] == world["msa"].sha256


def test_a_stale_link_form_is_a_conflict(browser_as, world, lena):
    sla = item(world["checklist"], "sla")
    version = sla.version
    checklist_item_link(actor=lena, item=sla, document=world["msa"], page=1, quote="")
    response = browser_as("lena").post(
        reverse("contracts:item-link", args=[sla.pk]),
        {"document": world["msa"].pk, "page": 2, "quote": "", "version": version},
    )
    assert response.status_code == 409


# --- end to end: uploaded, linked, and on procurement's My work ---------------------------


def test_a_contract_uploaded_linked_and_its_notice_deadline_in_procurements_my_work(
    client, people, world
):
    offer, checklist = world["offer"], world["checklist"]
    # Procurement uploads the signed MSA (its second version) through the page.
    client.force_login(people["priya"])
    response = client.post(
        reverse("contracts:document-upload", args=[offer.pk]),
        {"kind": "msa", "file": _upload("MSA countersigned.pdf", pdf_bytes(8))},
    )
    assert response.status_code == 302
    msa = ContractDocument.objects.get(offer=offer, kind="msa", number=2)
    # Legal links the SLA clause to page 7 and records the contract's dates.
    client.force_login(people["lena"])
    sla = item(checklist, "sla")
    response = client.post(
        reverse("contracts:item-link", args=[sla.pk]),
        {"document": msa.pk, "page": 7, "quote": "99.9 % per calendar month", "version": 1},
    )
    assert response.status_code == 302, response.content.decode()[:500]
    today = timezone.localdate()
    deadline = today + timedelta(days=30)
    response = client.post(
        reverse("contracts:contract-dates", args=[offer.pk]),
        {
            "effective_date": (today - timedelta(days=300)).isoformat(),
            "renewal_date": (today + timedelta(days=60)).isoformat(),
            "notice_deadline": deadline.isoformat(),
            "end_date": "",
            "change_reason": "Read from the countersigned MSA",
            "version": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:500]
    page = client.get(reverse("contracts:checklist", args=[offer.pk])).content.decode()
    link = reverse("contracts:document-download", args=[msa.pk]) + "#page=7"
    assert f'href="{link}"' in page and "MSA v2, page 7" in page
    assert "“99.9 % per calendar month”" in page
    # Everyone who reads the checklist sees the link on the offer's page.
    client.force_login(people["aude"])
    offer_page = client.get(reverse("offers:detail", args=[offer.pk])).content.decode()
    assert "MSA v2, page 7" in offer_page
    # The notice deadline is procurement's item in My work, due that day.
    client.force_login(people["priya"])
    dashboard = client.get(reverse("approvals:dashboard")).content.decode()
    assert "Give notice by" in dashboard
    assert reverse("contracts:documents", args=[offer.pk]) in dashboard
    client.force_login(people["tariq"])
    assert "Give notice by" not in client.get(reverse("approvals:dashboard")).content.decode()
    # The daily reminders remind the case's owner of it, once.
    sent = [r for r in reminders_send(today=today) if r.object_model == "contracts.contractterms"]
    assert [r.due_on for r in sent] == [deadline]
    assert sent[0].kind == Reminder.Kind.CONTRACT_RENEWAL and sent[0].threshold == 30
    assert not [r for r in reminders_send(today=today) if r.object_model.startswith("contracts")]


def test_the_api_reads_each_clause_link(api_as, world, lena):
    sla = item(world["checklist"], "sla")
    checklist_item_link(actor=lena, item=sla, document=world["msa"], page=2, quote="Credits")
    response = api_as("aude").get(f"/api/v1/clause-checklists/{world['checklist'].pk}/")
    assert response.status_code == 200
    (row,) = [row for row in response.json()["items"] if row["key"] == "sla"]
    assert (row["document"], row["document_page"], row["document_quote"]) == (
        world["msa"].pk,
        2,
        "Credits",
    )


# --- the API: upload, list, download and link --------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_api_upload_per_role(api_as, world, role):
    response = api_as(role).post(
        "/api/v1/contract-documents/",
        {"offer": world["offer"].pk, "kind": "dpa", "file": _upload("dpa.pdf", pdf_bytes(2))},
        format="multipart",
    )
    stored = ContractDocument.objects.filter(offer=world["offer"], kind="dpa")
    if role in UPLOADERS:
        assert response.status_code == 201, response.content
        document = stored.get()
        assert response.json() | {"created_at": None} == {
            "id": document.pk,
            "offer": world["offer"].pk,
            "kind": "dpa",
            "number": 1,
            "name_shown": "DPA v1",
            "name": "dpa.pdf",
            "content_type": "application/pdf",
            "size_bytes": document.size_bytes,
            "sha256": document.sha256,
            "page_count": 2,
            "uploaded_by": role,
            "created_at": None,
        }
    else:
        assert response.status_code == 403 and not stored.exists()


def test_api_list_and_download_per_role(api_as, client, world):
    for role in ROLES:
        listed = api_as(role).get(f"/api/v1/contract-documents/?offer={world['offer'].pk}")
        assert [row["id"] for row in listed.json()["results"]] == [world["msa"].pk], role
        response = api_as(role).get(f"/api/v1/contract-documents/{world['msa'].pk}/file/")
        body = b"".join(response.streaming_content)
        assert hashlib.sha256(body).hexdigest() == world["msa"].sha256
    assert client.get("/api/v1/contract-documents/").status_code in (401, 403)


def test_api_refuses_a_malformed_upload_whole(api_as, world):
    before = stored_names()
    response = api_as("priya").post(
        "/api/v1/contract-documents/",
        {"offer": world["offer"].pk, "kind": "msa", "file": _upload("msa.pdf", b"GIF89a no")},
        format="multipart",
    )
    assert response.status_code == 400
    assert "must be a PDF or a Word (DOCX) file" in str(response.json()["file"])
    assert stored_names() == before
    assert ContractDocument.objects.filter(offer=world["offer"]).count() == 1


@pytest.mark.parametrize("role", ROLES)
def test_api_link_per_role_and_a_stale_version_is_a_conflict(api_as, world, role):
    sla = item(world["checklist"], "sla")
    url = f"/api/v1/clause-checklist-items/{sla.pk}/link/"
    body = {"document": world["msa"].pk, "page": 2, "quote": "Credits", "version": sla.version}
    response = api_as(role).post(url, body, format="json")
    if role not in LEGAL:
        assert response.status_code == 403
        return
    assert response.status_code == 200, response.content
    assert (response.json()["document"], response.json()["document_page"]) == (world["msa"].pk, 2)
    assert api_as(role).post(url, body | {"page": 3}, format="json").status_code == 409
    unversioned = {key: value for key, value in body.items() if key != "version"}
    refused = api_as(role).post(url, unversioned | {"page": 9}, format="json")
    assert refused.status_code == 400 and "MSA v1 has pages 1 to 3." in str(refused.json())


def test_the_packet_names_every_document_version_and_each_clause_source(world, lena):
    sla = item(world["checklist"], "sla")
    checklist_item_link(actor=lena, item=sla, document=world["msa"], page=3, quote="99.9 %")
    section = packet.packet_section(world["case"])
    assert (
        f"contract-{world['offer'].pk}-msa-v1-{world['msa'].name}",
        world["msa"].storage_name,
        world["msa"].sha256,
    ) in section.manifest_files
    html = render_to_string(section.template, section.context)
    assert "Signed contract documents" in html and world["msa"].sha256 in html
    assert "MSA v1, page 3" in html and "“99.9 %”" in html

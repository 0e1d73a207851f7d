"""Waivers on the pages and the API: expiry, evidence files, confirmation and withdrawal,
with every new page and endpoint tested per role."""

import copy
import hashlib
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from apps.contracts.models import RedFlagWaiver
from apps.contracts.selectors import offer_checklist, waiver_expires_on
from apps.contracts.services import checklist_template_publish, red_flag_waive
from apps.core.services import tracked_create
from tests.contracts.factories import item, make_checklist, make_legal, set_statuses, template_rows
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.stored import replace_stored, store_folder, stored_names

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
LEGAL = {"lena", "ada"}
WAIVERS = "/api/v1/red-flag-waivers/"
PDF = b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def stored_files(root) -> list[str]:
    return stored_names()  # on disk under ``root``, or in the test's bucket


@pytest.fixture(scope="module")
def _world(module_people, tmp_path_factory):
    """A red flag on a high-severity item, waived by a third legal reviewer with evidence;
    built once for the module, its evidence stored in a folder of its own."""
    lena = module_people["lena"]
    media = tmp_path_factory.mktemp("waiver-media")
    with override_settings(MEDIA_ROOT=media):
        leo = make_legal("leo")
        checklist_template_publish(
            actor=lena, items=template_rows(high_severity={"sla"}), note="SLA is high-severity"
        )
        case = make_case(module_people["priya"])
        checklist = make_checklist(
            lena, offer=make_offer(module_people["priya"], case, spec=FULL_SPEC)
        )
        set_statuses(lena, checklist, {"sla": "missing", "audit_rights": "missing"})
        waiver = red_flag_waive(
            actor=leo,
            item=item(checklist, "sla"),
            reason="Credits suffice",
            evidence=SimpleUploadedFile("vendor letter.pdf", PDF, "application/pdf"),
        )
    return media, {"case": case, "checklist": checklist, "waiver": waiver, "leo": leo}


@pytest.fixture
def world(_world, people, media_root):
    """The module's world, each test its copy, with the evidence in the test's storage."""
    media, built = _world
    store_folder(media)
    world = copy.deepcopy(built)
    people["leo"] = world["leo"]
    return world


# --- access, per role --------------------------------------------------------------------

PAGES = [
    ("contracts:waiver-confirm", LEGAL),
    ("contracts:waiver-withdraw", LEGAL),
    ("contracts:waiver-evidence", EVERYONE),
]


@pytest.mark.parametrize("name,allowed", PAGES, ids=[p[0] for p in PAGES])
@pytest.mark.parametrize("role", ROLES)
def test_waiver_page_access(browser_as, world, name, allowed, role):
    response = browser_as(role).get(reverse(name, args=[world["waiver"].pk]))
    assert response.status_code == (200 if role in allowed else 403)


@pytest.mark.parametrize("name,allowed", PAGES, ids=[p[0] for p in PAGES])
def test_waiver_pages_send_anonymous_to_login(client, world, name, allowed):
    response = client.get(reverse(name, args=[world["waiver"].pk]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


API = [
    ("post", "confirm/", {"note": "Read the letter"}, LEGAL, 200),
    ("post", "withdraw/", {"reason": "The vendor fixed it"}, LEGAL, 200),
    ("get", "evidence/", None, EVERYONE, 200),
    ("get", "", None, EVERYONE, 200),
]


@pytest.mark.parametrize(
    "method,suffix,body,allowed,success", API, ids=[a[1] or "detail" for a in API]
)
@pytest.mark.parametrize("role", ROLES)
def test_waiver_api_access(api_as, world, method, suffix, body, allowed, success, role):
    url = f"{WAIVERS}{world['waiver'].pk}/{suffix}"
    response = getattr(api_as(role), method)(url, body, format="json")
    assert response.status_code == (success if role in allowed else 403), response.content[:300]


@pytest.mark.parametrize(
    "method,suffix,body,allowed,success", API, ids=[a[1] or "detail" for a in API]
)
def test_waiver_api_refuses_anonymous(client, world, method, suffix, body, allowed, success):
    url = f"{WAIVERS}{world['waiver'].pk}/{suffix}"
    assert getattr(client, method)(url, content_type="application/json").status_code == 401


@pytest.mark.parametrize("role", ROLES)
def test_confirming_on_the_page_per_role(browser_as, world, role):
    url = reverse("contracts:waiver-confirm", args=[world["waiver"].pk])
    response = browser_as(role).post(url, {"note": "Read the vendor's letter"})
    waiver = RedFlagWaiver.objects.get(pk=world["waiver"].pk)
    if role in LEGAL:
        assert response.status_code == 302
        assert waiver.confirmed_by.username == role
    else:
        assert response.status_code == 403 and waiver.confirmed_at is None


@pytest.mark.parametrize("role", ROLES)
def test_withdrawing_on_the_page_per_role(browser_as, world, role):
    url = reverse("contracts:waiver-withdraw", args=[world["waiver"].pk])
    response = browser_as(role).post(url, {"reason": "The vendor fixed the clause"})
    waiver = RedFlagWaiver.objects.get(pk=world["waiver"].pk)
    if role in LEGAL:
        assert response.status_code == 302 and waiver.lapsed_at is not None
        assert waiver.lapse_note.startswith("Withdrawn by ")
    else:
        assert response.status_code == 403 and waiver.lapsed_at is None


def test_the_granter_is_refused_on_the_page_with_the_reason(browser_as, world):
    url = reverse("contracts:waiver-confirm", args=[world["waiver"].pk])
    response = browser_as("leo").post(url, {"note": "My own"})
    assert response.status_code == 200
    assert "You granted this waiver" in response.content.decode()
    assert RedFlagWaiver.objects.get(pk=world["waiver"].pk).confirmed_at is None


def test_a_waiver_of_an_offer_out_of_sight_is_not_found(api_as, browser_as, world, people):
    from apps.contracts import selectors

    assert selectors.waiver_list_for(people["aude"]).filter(pk=world["waiver"].pk).exists()
    missing = api_as("lena").post(f"{WAIVERS}999999/confirm/", {"note": "x"}, format="json")
    assert missing.status_code == 404
    page = browser_as("lena").get(reverse("contracts:waiver-evidence", args=[999999]))
    assert page.status_code == 404


# --- evidence ----------------------------------------------------------------------------


def test_evidence_is_stored_under_a_server_name_and_served_checked(api_as, browser_as, world):
    waiver = world["waiver"]
    assert waiver.evidence_name == "vendor letter.pdf"
    assert waiver.evidence_sha256 == hashlib.sha256(PDF).hexdigest()
    assert waiver.evidence_storage_name.startswith(f"contracts/waivers/{waiver.item_id}/")
    assert "letter" not in waiver.evidence_storage_name
    page = browser_as("aude").get(reverse("contracts:waiver-evidence", args=[waiver.pk]))
    assert page.status_code == 200 and b"".join(page.streaming_content) == PDF
    assert page["X-Content-SHA256"] == waiver.evidence_sha256
    api = api_as("tariq").get(f"{WAIVERS}{waiver.pk}/evidence/")
    assert api.status_code == 200 and b"".join(api.streaming_content) == PDF
    listed = api_as("aude").get(f"{WAIVERS}{waiver.pk}/").json()
    assert listed["evidence"] == {
        "name": "vendor letter.pdf",
        "content_type": "application/pdf",
        "size_bytes": len(PDF),
        "sha256": waiver.evidence_sha256,
    }


def test_changed_evidence_is_refused_and_raised_on_the_case(browser_as, world, media_root):
    waiver = world["waiver"]
    replace_stored(waiver.evidence_storage_name, b"%PDF-1.4 altered")
    response = browser_as("aude").get(reverse("contracts:waiver-evidence", args=[waiver.pk]))
    assert response.status_code == 409
    assert world["case"].file_integrity_alarms.filter(resolved_at__isnull=True).count() == 1


def test_a_waiver_without_evidence_has_nothing_to_download(api_as, browser_as, world, lena):
    other = red_flag_waive(actor=lena, item=item(world["checklist"], "audit_rights"), reason="Ok")
    assert api_as("aude").get(f"{WAIVERS}{other.pk}/evidence/").status_code == 404
    page = browser_as("aude").get(reverse("contracts:waiver-evidence", args=[other.pk]))
    assert page.status_code == 404


BAD_FILES = [
    ("empty.pdf", b"", "file is empty"),
    ("setup.exe", b"MZ\x90\x00", "Files of this type are not taken here"),
    ("letter.pdf", b"MZ\x90\x00 renamed executable", "not a PDF file"),
    ("scan.png", b"PK\x03\x04 an archive", "not a PNG file"),
    ("README", b"plain words", "Files of this type are not taken here"),
    ("../../../../etc/passwd", b"root:x:0:0", "Files of this type are not taken here"),
    (".htaccess", b"Deny from all", "Files of this type are not taken here"),
]


@pytest.mark.parametrize("name,content,reason", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_evidence_is_refused_through_the_api_and_nothing_is_stored(
    api_as, world, media_root, name, content, reason
):
    target = item(world["checklist"], "audit_rights")
    before = (stored_files(media_root), RedFlagWaiver.objects.count())
    response = api_as("lena").post(
        WAIVERS,
        {"item": target.pk, "reason": "Ok", "evidence": SimpleUploadedFile(name, content)},
        format="multipart",
    )
    assert response.status_code == 400, response.content[:300]
    assert reason in str(response.json()["evidence"])
    assert (stored_files(media_root), RedFlagWaiver.objects.count()) == before


def test_bad_evidence_is_refused_on_the_page_next_to_the_field(browser_as, world, media_root):
    target = item(world["checklist"], "audit_rights")
    before = stored_files(media_root)
    response = browser_as("lena").post(
        reverse("contracts:waive", args=[target.pk]),
        {"reason": "Ok", "evidence": SimpleUploadedFile("letter.pdf", b"GIF89a not a pdf")},
    )
    assert response.status_code == 200
    assert "not a PDF file" in response.content.decode()
    assert stored_files(media_root) == before and not target.waivers.exists()


def test_evidence_over_the_limit_is_refused_before_a_byte_is_read(
    api_as, lena, world, media_root, settings
):
    settings.WAIVER_EVIDENCE_MAX_BYTES = 1024
    target = item(world["checklist"], "audit_rights")
    before = stored_files(media_root)
    big = SimpleUploadedFile("letter.pdf", PDF + b"x" * 1024)
    response = api_as("lena").post(
        WAIVERS, {"item": target.pk, "reason": "Ok", "evidence": big}, format="multipart"
    )
    assert response.status_code == 400 and "larger than 1.0" in str(response.json())
    # Declared over the limit and its envelope: refused before CSRF or the parser reads it.
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(lena)
    url = reverse("contracts:waive", args=[target.pk])
    browser.get(url)
    for path in (url, WAIVERS):
        refused = browser.generic(
            "POST",
            path,
            b"",
            content_type="multipart/form-data; boundary=x",
            HTTP_X_CSRFTOKEN=browser.cookies["csrftoken"].value,
            CONTENT_LENGTH=str(1024 + 1024 * 1024),
        )
        assert refused.status_code == 413
    assert stored_files(media_root) == before and not target.waivers.exists()


def test_evidence_and_an_expiry_date_on_the_page(browser_as, world, media_root):
    target = item(world["checklist"], "audit_rights")
    until = timezone.localdate() + timedelta(days=30)
    response = browser_as("lena").post(
        reverse("contracts:waive", args=[target.pk]),
        {
            "reason": "Our own monitoring covers it",
            "expires_on": until.isoformat(),
            "evidence": SimpleUploadedFile("minute.txt", b"Committee minute FR-7"),
        },
    )
    assert response.status_code == 302
    waiver = target.waivers.get()
    assert waiver.expires_on == until and waiver.evidence_content_type == "text/plain"
    page = browser_as("aude").get(reverse("offers:detail", args=[world["checklist"].offer_id]))
    html = page.content.decode()
    assert f"in force until {until.isoformat()}" in html
    assert reverse("contracts:waiver-evidence", args=[waiver.pk]) in html
    assert "minute.txt" in html


def test_a_past_expiry_date_is_refused_on_the_page(browser_as, world):
    target = item(world["checklist"], "audit_rights")
    yesterday = timezone.localdate() - timedelta(days=1)
    response = browser_as("lena").post(
        reverse("contracts:waive", args=[target.pk]),
        {"reason": "Ok", "expires_on": yesterday.isoformat()},
    )
    assert response.status_code == 200
    assert f"{yesterday.isoformat()} is in the past" in response.content.decode()
    assert not target.waivers.exists()


# --- what the pages show -----------------------------------------------------------------


def test_the_offer_page_shows_the_pending_confirmation_and_its_link(browser_as, world):
    offer_url = reverse("offers:detail", args=[world["checklist"].offer_id])
    confirm = reverse("contracts:waiver-confirm", args=[world["waiver"].pk])
    lena_page = browser_as("lena").get(offer_url).content.decode()
    assert "the waiver awaits a second legal confirmation" in lena_page
    assert confirm in lena_page
    # The granter is not offered the confirmation; a reader is not offered it either.
    assert confirm not in browser_as("leo").get(offer_url).content.decode()
    assert confirm not in browser_as("aude").get(offer_url).content.decode()


def test_a_waiver_recorded_before_expiry_dates_expires_ninety_days_after_it_was_granted(
    lena, world
):
    target = item(world["checklist"], "audit_rights")
    granted = timezone.now() - timedelta(days=91)
    legacy = tracked_create(
        RedFlagWaiver,
        actor=lena,
        reason="Recorded before waivers had an expiry date",
        item=target,
        waived_status="missing",
        justification="Old waiver",
        waived_by=lena,
        waived_at=granted,
    )
    assert legacy.expires_on is None
    assert waiver_expires_on(legacy) == timezone.localdate(granted) + timedelta(days=90)
    state = offer_checklist(world["checklist"].offer)
    row = next(r for r in state.rows if r.item.key == "audit_rights")
    assert row.current_waiver is None
    assert row.flag_label.startswith("6. Audit rights (the waiver expired on ")


def test_a_template_item_is_marked_high_severity_on_the_publish_page(browser_as, world):
    from apps.contracts.models import ChecklistTemplate

    latest = ChecklistTemplate.objects.order_by("-number").first()
    items = list(latest.items.order_by("number"))
    data = {"items-TOTAL_FORMS": len(items), "items-INITIAL_FORMS": len(items), "note": "v3"}
    for index, each in enumerate(items):
        data |= {
            f"items-{index}-key": each.key,
            f"items-{index}-title": each.title,
            f"items-{index}-sub_points": "\n".join(each.sub_points),
            f"items-{index}-guidance": each.guidance,
            f"items-{index}-required": "on",
        }
        if each.key == "prepayment":
            data[f"items-{index}-high_severity"] = "on"
    response = browser_as("lena").post(reverse("contracts:template-publish"), data)
    assert response.status_code == 302
    newest = ChecklistTemplate.objects.order_by("-number").first()
    assert {i.key for i in newest.items.all() if i.high_severity} == {"prepayment"}
    listing = browser_as("aude").get(reverse("contracts:templates")).content.decode()
    assert "high severity" in listing

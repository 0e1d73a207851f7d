"""Stored files leave only through permission-checked downloads that re-check their SHA-256.

For each kind of stored file (evidence bundle, audit packet, acceptance attachment,
data-export assessment attachment, cost bill file): every role that may read it
gets the exact bytes, a user without a role gets 403, an anonymous visitor is sent
to log in; a file changed on disk is refused (409), logged at CRITICAL with both
digests, and raised on its case, where the case page shows it. The storage folder
itself is never served, not even with DEBUG on.
"""

import hashlib
import importlib
import logging
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import clear_url_caches, reverse
from rest_framework.test import APIClient

from apps.acceptance.services import acceptance_attachment_add
from apps.assessments.services import assessment_create
from apps.core.models import FileIntegrityAlarm
from tests.evidence.factories import make_bundle_record, make_token
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.pages import whole_case
from tests.stored import StoredObject, replace_stored

ROLES = ["priya", "lena", "tariq", "aude", "ada"]


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def nobody(db):
    return get_user_model().objects.create_user(username="nobody", password="pw")


def _evidence(people) -> dict:
    tariq = people["tariq"]
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    token = make_token(tariq, case, offer).record
    bundle = make_bundle_record(case, offer, token, n=1, content=b'{"evidence": 1}\n')
    return {
        "case": case,
        "name": bundle.storage_name,
        "bytes": b'{"evidence": 1}\n',
        "page": reverse("evidence:raw", args=[bundle.pk]),
        "api": f"/api/v1/evidence-bundles/{bundle.pk}/raw/",
        "record": f"Evidence bundle {bundle.sha256[:12]}…",
    }


def _packet(people) -> dict:
    from tests.packets.factories import make_packet_case, make_stored_packet

    priya = people["priya"]
    case = make_packet_case(priya, offers=1)
    packet = make_stored_packet(priya, case)
    return {
        "case": case,
        "name": packet.file.name,
        "bytes": packet.file.open("rb").read(),
        "page": reverse("packets:download", args=[packet.pk]),
        "api": f"/api/v1/packets/{packet.pk}/download/",
        "record": f"Audit packet {packet.number}",
    }


def _acceptance(people) -> dict:
    from tests.acceptance.factories import approved_offer, make_plan, record_faults

    tariq = people["tariq"]
    case, offer = approved_offer(people)
    [result] = record_faults(tariq, make_plan(tariq, offer), kinds=("network",))
    attachment = acceptance_attachment_add(
        actor=tariq, result=result, upload=SimpleUploadedFile("net.log", b"link down\n")
    )
    return {
        "case": case,
        "name": attachment.storage_name,
        "bytes": b"link down\n",
        "page": reverse("acceptance:attachment_download", args=[attachment.pk]),
        "api": None,
        "record": "Acceptance attachment net.log",
    }


def _assessment(people) -> dict:
    lena = people["lena"]
    case = make_case(people["priya"])
    assessment = assessment_create(
        actor=lena,
        case=case,
        attachments={"lawful_source": SimpleUploadedFile("letter.pdf", b"%PDF-1.4 letter")},
    )
    answer = assessment.answers.get(question_key="lawful_source")
    return {
        "case": case,
        "name": answer.attachment.name,
        "bytes": b"%PDF-1.4 letter",
        "page": reverse("assessments:attachment", args=[assessment.pk, "lawful_source"]),
        "api": None,
        "record": f"Data-export assessment {assessment.pk}, attachment to lawful_source",
    }


def _cost_bill(people) -> dict:
    from tests.costs.factories import CLEAN, bill_csv, make_budget, make_import

    priya = people["priya"]
    case = make_case(priya)
    make_budget(priya, case)
    cost_import = make_import(priya, case, ("2026-01", CLEAN))
    return {
        "case": case,
        "name": cost_import.storage_name,
        "bytes": bill_csv(("2026-01", CLEAN)),
        "page": reverse("costs:import-file", args=[cost_import.pk]),
        "api": None,
        "record": "Cost import bill.csv",
    }


KINDS = {
    "evidence": _evidence,
    "packet": _packet,
    "acceptance": _acceptance,
    "assessment": _assessment,
    "cost-bill": _cost_bill,
}


@pytest.fixture(params=list(KINDS))
def stored(request, people) -> dict:
    return KINDS[request.param](people)


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def alter(media: Path, stored: dict) -> None:
    # One byte more behind the app's back, on disk or in the bucket.
    replace_stored(stored["name"], StoredObject(stored["name"]).read_bytes() + b" ")


# --- who may download -----------------------------------------------------------


def test_every_role_gets_the_exact_bytes_and_the_digest(browser_as, stored):
    for role in ROLES:
        response = browser_as(role).get(stored["page"])
        assert response.status_code == 200, role
        assert body(response) == stored["bytes"]
        assert response["X-Content-SHA256"] == hashlib.sha256(stored["bytes"]).hexdigest()
        assert response["Content-Disposition"].startswith("attachment")
    assert not FileIntegrityAlarm.objects.exists()


def test_a_user_without_a_role_gets_403(client, nobody, stored):
    client.force_login(nobody)
    assert client.get(stored["page"]).status_code == 403


def test_anonymous_visitors_are_sent_to_log_in(client, stored):
    response = client.get(stored["page"])
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


API_KINDS = ["evidence", "packet"]


@pytest.fixture(params=API_KINDS)
def api_stored(request, people) -> dict:
    return KINDS[request.param](people)


def test_api_downloads_for_every_role_roleless_and_anonymous(api_as, api_stored, nobody):
    from rest_framework.authtoken.models import Token

    for role in ROLES:
        response = api_as(role).get(api_stored["api"])
        assert response.status_code == 200, role
        assert body(response) == api_stored["bytes"]
    assert APIClient().get(api_stored["api"]).status_code == 401
    roleless = APIClient()
    roleless.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=nobody).key}")
    assert roleless.get(api_stored["api"]).status_code == 403


# --- a file changed on disk -------------------------------------------------------


def test_a_file_changed_on_disk_is_refused_logged_and_raised_on_its_case(
    browser_as, stored, media, caplog
):
    expected = hashlib.sha256(stored["bytes"]).hexdigest()
    alter(media, stored)
    found = hashlib.sha256(stored["bytes"] + b" ").hexdigest()
    with caplog.at_level(logging.CRITICAL, logger="apps.core.downloads"):
        response = browser_as("aude").get(stored["page"])
    assert response.status_code == 409
    text = response.content.decode()
    assert "no longer matches its recorded checksum" in text
    assert expected in text and found in text
    assert stored["bytes"].decode() not in text
    [alarm] = FileIntegrityAlarm.objects.all()
    assert (alarm.case, alarm.record, alarm.storage_name) == (
        stored["case"],
        stored["record"],
        stored["name"],
    )
    assert (alarm.expected_sha256, alarm.found_sha256) == (expected, found)
    assert alarm.resolved_at is None
    history = alarm.history.get()
    assert history.history_user.username == "aude"
    [record] = [r for r in caplog.records if r.name == "apps.core.downloads"]
    assert record.levelno == logging.CRITICAL
    message = record.getMessage()
    assert stored["record"] in message and expected in message and found in message
    # Asked again: refused again, logged again, still one alarm for that change.
    assert browser_as("priya").get(stored["page"]).status_code == 409
    assert FileIntegrityAlarm.objects.count() == 1


def test_the_case_page_shows_the_open_alarm(browser_as, stored, media):
    client = browser_as("lena")
    pk = stored["case"].pk
    assert "no longer matches its recorded checksum" not in whole_case(client, pk).content.decode()
    alter(media, stored)
    assert client.get(stored["page"]).status_code == 409
    text = whole_case(client, pk).content.decode()
    assert (
        f"Stored file changed on disk: {stored['record']} no longer matches its recorded checksum."
        in text.replace("&#x27;", "'")
    )
    assert hashlib.sha256(stored["bytes"] + b" ").hexdigest() in text


def test_api_refuses_a_changed_file_with_409(api_as, api_stored, media):
    alter(media, api_stored)
    response = api_as("tariq").get(api_stored["api"])
    assert response.status_code == 409
    assert "no longer matches its recorded checksum" in response.json()["detail"]
    assert FileIntegrityAlarm.objects.get().case == api_stored["case"]


def test_a_missing_file_is_404_without_an_alarm(browser_as, stored, media):
    default_storage.delete(stored["name"])
    assert browser_as("aude").get(stored["page"]).status_code == 404
    assert not FileIntegrityAlarm.objects.exists()


# --- the storage folder is not served ---------------------------------------------


def test_the_storage_folder_is_not_served_even_with_debug_on(client, settings, media, people):
    import config.urls

    stored = _evidence(people)
    assert StoredObject(stored["name"]).read_bytes() == stored["bytes"]
    settings.DEBUG = True  # the embedded default's setting, where it used to be served
    importlib.reload(config.urls)
    clear_url_caches()
    try:
        response = client.get(settings.MEDIA_URL + stored["name"])
        assert response.status_code == 404
        client.force_login(people["ada"])
        assert client.get(settings.MEDIA_URL + stored["name"]).status_code == 404
    finally:
        settings.DEBUG = False
        importlib.reload(config.urls)
        clear_url_caches()

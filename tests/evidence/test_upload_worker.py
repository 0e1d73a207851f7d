"""POST /api/v1/evidence/ where a Celery worker reads the upload: 202, then the status URL.

The embedded default reads the upload before answering (``test_upload.py``);
here Celery is not eager, as in production: the upload answers 202 as soon
as the bytes are stored, and the task the worker runs ends it verified (with
the bundle) or refused (with the reason, and the bytes removed).
"""

import hashlib
import uuid

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from apps.evidence import services, tasks
from apps.evidence.models import EvidenceBundle, EvidenceUpload, SpecVerification
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres

URL = "/api/v1/evidence/"


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    return {"case": case, "offer": offer, "token": issued.token, "record": issued.record}


def client_for(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def post(raw: bytes, token: str, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return client_for(token).post(URL, data=raw, content_type="application/json")


def test_the_upload_answers_202_at_once_and_the_worker_verifies_it(
    world, worker, stored_files, cpu_bundle, django_capture_on_commit_callbacks
):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    response = post(raw, world["token"], django_capture_on_commit_callbacks)
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["state"] == "received" and body["bundle"] is None
    assert body["evidence_url"] is None  # no page before the bundle is verified
    assert body["sha256"] == hashlib.sha256(raw).hexdigest() and body["size"] == len(raw)
    assert response["Location"] == body["status_url"]
    assert body["status_url"].endswith(f"/api/v1/evidence/uploads/{body['id']}/")
    # Stored byte for byte, not yet read: no bundle, no verification.
    [path] = stored_files()
    assert path.read_bytes() == raw
    assert EvidenceBundle.objects.count() == 0
    assert worker.queued == [body["id"]]

    status = client_for(world["token"]).get(body["status_url"])
    assert status.status_code == 200 and status.json()["state"] == "received"

    assert worker.run() == ["verified"]
    status = client_for(world["token"]).get(body["status_url"]).json()
    bundle = EvidenceBundle.objects.get()
    assert status["state"] == "verified" and status["bundle"] == bundle.pk
    assert status["verdict"] == bundle.verification.verdict
    # The bundle's page for people, where the harness sends whoever ran it.
    assert status["evidence_url"] == f"http://testserver/evidence/{bundle.pk}/"
    assert status["finished_at"] and status["detail"] == ""
    assert bundle.storage_name == EvidenceUpload.objects.get().storage_name
    assert bundle.received_at == EvidenceUpload.objects.get().received_at
    assert [p.read_bytes() for p in stored_files()] == [raw]

    # Sending the same bytes again answers with the bundle, as before workers.
    again = post(raw, world["token"], django_capture_on_commit_callbacks)
    assert again.status_code == 200 and again.json()["id"] == bundle.pk
    assert again.json()["evidence_url"] == f"http://testserver/evidence/{bundle.pk}/"
    assert worker.queued == [] and EvidenceUpload.objects.count() == 1


def test_a_second_delivery_of_the_task_reads_the_upload_once(
    world, worker, cpu_bundle, django_capture_on_commit_callbacks
):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    upload_pk = post(raw, world["token"], django_capture_on_commit_callbacks).json()["id"]
    assert worker.run() == ["verified"]
    assert tasks.verify_upload_task.apply(args=(upload_pk,)).get() == "verified"
    assert EvidenceBundle.objects.count() == 1 and SpecVerification.objects.count() == 1


def test_sent_again_while_being_read_asks_the_worker_again_for_the_same_upload(
    world, worker, cpu_bundle, django_capture_on_commit_callbacks
):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    first = post(raw, world["token"], django_capture_on_commit_callbacks).json()
    second = post(raw, world["token"], django_capture_on_commit_callbacks)
    assert second.status_code == 202 and second.json()["id"] == first["id"]
    assert worker.queued == [first["id"], first["id"]]  # a lost message is asked for again
    assert worker.run() == ["verified", "verified"]
    assert EvidenceBundle.objects.count() == 1 and EvidenceUpload.objects.count() == 1


def test_a_bundle_the_worker_refuses_keeps_the_reason_and_not_the_bytes(
    world, worker, stored_files, cpu_bundle, django_capture_on_commit_callbacks
):
    raw = serialise(bundle_for(cpu_bundle, world["record"], nonce="not-this-tokens"))
    body = post(raw, world["token"], django_capture_on_commit_callbacks).json()
    assert len(stored_files()) == 1
    assert worker.run() == ["refused"]
    status = client_for(world["token"]).get(body["status_url"]).json()
    assert status["state"] == "refused" and status["bundle"] is None
    assert status["field"] == "nonce" and status["http_status"] == 400
    assert "nonce was not issued for this token" in status["detail"]
    assert stored_files() == [] and EvidenceBundle.objects.count() == 0

    # A refused upload is not held: the same bytes are read again (and refused again).
    again = post(raw, world["token"], django_capture_on_commit_callbacks)
    assert again.status_code == 202 and again.json()["id"] != body["id"]
    assert worker.run() == ["refused"]
    assert stored_files() == []


def test_malformed_bytes_are_refused_by_the_worker_too(
    world, worker, stored_files, django_capture_on_commit_callbacks
):
    body = post(
        b'{"format_version": "diligence-evidence/1",',
        world["token"],
        django_capture_on_commit_callbacks,
    ).json()
    assert worker.run() == ["refused"]
    status = client_for(world["token"]).get(body["status_url"]).json()
    assert status["state"] == "refused"
    assert "not a UTF-8 JSON document" in status["detail"]
    assert stored_files() == []


def test_a_changed_body_is_refused_before_anything_is_stored(
    world, worker, stored_files, cpu_bundle, django_capture_on_commit_callbacks
):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(world["token"]).post(
            URL, data=raw, content_type="application/json", HTTP_X_BUNDLE_SHA256="0" * 64
        )
    assert response.status_code == 400 and response.json()["field"] == "X-Bundle-Sha256"
    assert stored_files() == [] and EvidenceUpload.objects.count() == 0 and worker.queued == []


def test_an_upload_that_breaks_the_server_ends_failed_with_nothing_kept(
    world, worker, stored_files, cpu_bundle, monkeypatch, django_capture_on_commit_callbacks
):
    from apps.evidence import services

    def broken(*args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(services, "headline", broken)
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    body = post(raw, world["token"], django_capture_on_commit_callbacks).json()
    assert worker.run() == [None]
    status = client_for(world["token"]).get(body["status_url"]).json()
    assert status["state"] == "failed" and status["http_status"] == 500
    assert "Send the same bundle again later" in status["detail"]
    assert stored_files() == [] and EvidenceBundle.objects.count() == 0


STATUS_READERS = ["priya", "lena", "tariq", "aude", "ada"]


@pytest.mark.parametrize("role", STATUS_READERS)
def test_every_role_reads_an_uploads_status(
    world, worker, cpu_bundle, api_as, role, django_capture_on_commit_callbacks
):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    body = post(raw, world["token"], django_capture_on_commit_callbacks).json()
    response = api_as(role).get(body["status_url"])
    assert response.status_code == 200 and response.json()["state"] == "received"


def test_only_the_token_that_sent_it_reads_an_upload_and_others_learn_nothing(
    world, worker, tariq, cpu_bundle, django_capture_on_commit_callbacks
):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    url = post(raw, world["token"], django_capture_on_commit_callbacks).json()["status_url"]
    other = make_token(tariq, world["case"], world["offer"])
    response = client_for(other.token).get(url)
    unknown = client_for(other.token).get(url.rsplit("/", 2)[0] + "/999999/")
    # Another token's upload and no upload at all answer alike: an id tells a token nothing.
    assert response.status_code == unknown.status_code == 404
    assert response.json() == unknown.json()
    assert response.json()["detail"] == "No upload with this id was sent with this harness token."
    assert APIClient().get(url).status_code == 401
    assert client_for(world["token"]).get(url).status_code == 200


def test_a_bundle_stored_before_uploads_were_kept_is_found_not_stored_again(
    world, worker, stored_files, cpu_bundle, django_capture_on_commit_callbacks
):
    from apps.evidence.services import bundle_receive

    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    bundle, _ = bundle_receive(token=world["record"], raw=raw)
    EvidenceUpload.objects.all().delete()  # as a bundle from before the upload receipts
    body = post(raw, world["token"], django_capture_on_commit_callbacks).json()
    assert len(stored_files()) == 2  # a second copy, until the worker finds the first
    assert worker.run() == ["verified"]
    status = client_for(world["token"]).get(body["status_url"]).json()
    assert status["state"] == "verified" and status["bundle"] == bundle.pk
    assert [p.name for p in stored_files()] == [bundle.storage_name.rsplit("/", 1)[1]]
    assert EvidenceBundle.objects.count() == 1 and SpecVerification.objects.count() == 1
    assert EvidenceUpload.objects.get().storage_name == bundle.storage_name


def test_without_a_worker_a_bundle_stored_before_answers_200(world, stored_files, cpu_bundle):
    from apps.evidence.services import bundle_receive

    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    bundle, _ = bundle_receive(token=world["record"], raw=raw)
    EvidenceUpload.objects.all().delete()
    response = client_for(world["token"]).post(URL, data=raw, content_type="application/json")
    assert response.status_code == 200 and response.json()["id"] == bundle.pk
    assert len(stored_files()) == 1


def test_the_case_evidence_page_lists_uploads_being_read_and_refused(
    world, worker, cpu_bundle, browser_as, django_capture_on_commit_callbacks
):
    good = serialise(bundle_for(cpu_bundle, world["record"]))
    bad = serialise(bundle_for(cpu_bundle, world["record"], nonce="not-this-tokens"))
    post(bad, world["token"], django_capture_on_commit_callbacks)
    worker.run()
    post(good, world["token"], django_capture_on_commit_callbacks)
    page = browser_as("lena").get(f"/cases/{world['case'].pk}/evidence/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "Uploads not stored as evidence" in text
    assert "nonce was not issued for this token" in text and "Refused" in text
    being_read = '<span class="badge">Received, being verified</span>'  # not the filter's
    assert being_read in text

    worker.run()
    text = browser_as("lena").get(f"/cases/{world['case'].pk}/evidence/").content.decode()
    assert being_read not in text  # verified: listed with the bundles now
    assert "nonce was not issued for this token" in text


def test_uploads_left_waiting_are_asked_for_again(
    world, worker, cpu_bundle, monkeypatch, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    old = serialise(bundle_for(cpu_bundle, world["record"]))
    new = serialise(bundle_for(cpu_bundle, world["record"]))
    lost = post(old, world["token"], django_capture_on_commit_callbacks).json()["id"]
    EvidenceUpload.objects.filter(pk=lost).update(
        received_at=timezone.now() - timedelta(minutes=16)
    )
    post(new, world["token"], django_capture_on_commit_callbacks)
    worker.queued.clear()  # as if both messages were lost with the broker

    assert tasks.requeue_waiting_uploads_task.apply().get() == 1
    assert worker.queued == [lost]  # the recent one may still be in a worker's hands
    assert worker.run() == ["verified"]
    assert tasks.requeue_waiting_uploads_task.apply().get() == 0


def test_the_requeue_runs_on_a_schedule(settings):
    [entry] = [
        e
        for e in settings.CELERY_BEAT_SCHEDULE.values()
        if e["task"] == "apps.evidence.tasks.requeue_waiting_uploads_task"
    ]
    assert entry["schedule"].minute == set(range(0, 60, 10))


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_claim_commits_on_its_own_and_a_resend_finds_it(
    world, worker, stored_files, cpu_bundle
):
    """The request path: no transaction is open, so the INSERT is its own."""
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    assert not connection.in_atomic_block
    first = services.upload_receive(token=world["record"], raw=raw)
    assert first.created and first.upload.state == "received"
    assert worker.queued == [first.upload.pk]  # queued at once: the row is already committed
    again = services.upload_receive(token=world["record"], raw=raw)
    assert again.upload.pk == first.upload.pk and not again.created
    assert EvidenceUpload.objects.count() == 1 and len(stored_files()) == 1
    assert worker.run() == ["verified", "verified"]
    assert EvidenceBundle.objects.count() == 1


def test_inside_a_transaction_a_lost_claim_leaves_the_callers_transaction_usable(
    world, worker, stored_files, cpu_bundle
):
    raw = serialise(bundle_for(cpu_bundle, world["record"]))
    with transaction.atomic():
        first = services.upload_receive(token=world["record"], raw=raw)
        again = services.upload_receive(token=world["record"], raw=raw)  # unique constraint hit
        assert again.upload.pk == first.upload.pk
        assert EvidenceUpload.objects.count() == 1  # the transaction still answers
    assert len(stored_files()) == 1


def test_refused_and_failed_uploads_are_forgotten_after_the_keep_period(
    world, worker, cpu_bundle, settings, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    settings.EVIDENCE_UPLOAD_KEEP_DAYS = 90
    good = serialise(bundle_for(cpu_bundle, world["record"]))
    post(good, world["token"], django_capture_on_commit_callbacks)
    for n in range(3):
        post(b'{"not": "a bundle %d"}' % n, world["token"], django_capture_on_commit_callbacks)
    waiting = serialise(bundle_for(cpu_bundle, world["record"], bundle_id=str(uuid.uuid4())))
    post(waiting, world["token"], django_capture_on_commit_callbacks)
    worker.queued.pop()  # this one stays being read
    assert sorted(worker.run()) == ["refused", "refused", "refused", "verified"]
    refused = list(EvidenceUpload.objects.filter(state="refused").order_by("pk"))
    long_ago = timezone.now() - timedelta(days=91)
    EvidenceUpload.objects.filter(pk=refused[0].pk).update(finished_at=long_ago)
    EvidenceUpload.objects.filter(pk=refused[1].pk).update(state="failed", finished_at=long_ago)
    EvidenceUpload.objects.exclude(state__in=["refused", "failed"]).update(
        received_at=long_ago, finished_at=long_ago
    )

    assert tasks.prune_finished_uploads_task.apply().get() == 2
    left = dict(EvidenceUpload.objects.values_list("pk", "state"))
    assert refused[0].pk not in left and refused[1].pk not in left
    assert left[refused[2].pk] == "refused"  # recent: kept
    assert sorted(left.values()) == ["received", "refused", "verified"]
    assert EvidenceBundle.objects.count() == 1
    assert tasks.prune_finished_uploads_task.apply().get() == 0


def test_the_prune_runs_nightly(settings):
    [entry] = [
        e
        for e in settings.CELERY_BEAT_SCHEDULE.values()
        if e["task"] == "apps.evidence.tasks.prune_finished_uploads_task"
    ]
    assert entry["schedule"].hour == {3}

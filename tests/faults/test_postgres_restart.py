"""PostgreSQL restarted during an evidence upload (issue #8, item 5).

Real processes: gunicorn serving Diligence on PostgreSQL (persistent
connections, health-checked), a Celery worker reading the uploads (Redis
broker), the verification harness program uploading with its retries and
polling the upload's status, ``pg_ctlcluster`` restarting the database server.
Whatever the moment (while the upload is received, or while the worker writes
the bundle), the retries and the de-duplication by SHA-256 end in exactly one
stored bundle: one row, one verification, one file in storage.
"""

import contextlib
import hashlib
import json
import re
import sys
import uuid

import psycopg
import pytest

from tests.faults.stack import HARNESS, wait_for

pytestmark = pytest.mark.faults

TOKEN = """
import json
from django.contrib.auth import get_user_model
from apps.cases.models import ProcurementCase
from apps.evidence.services import harness_token_create

lead = get_user_model().objects.get(username="tariq")
case = ProcurementCase.objects.order_by("pk").first()
offer = case.offers.order_by("pk").first()
issued = harness_token_create(actor=lead, case=case, offer=offer, label="fault test")
print(json.dumps({"token": issued.token, "nonce": issued.record.nonce}))
"""

UPLOAD_PATH = "/api/v1/evidence/"


@pytest.fixture(scope="module")
def server(stack):
    worker = stack.start_worker()
    service, base = stack.start_server()
    yield service, base + UPLOAD_PATH
    service.stop()
    worker.stop()


@pytest.fixture(scope="module")
def token(stack):
    return stack.shell(TOKEN)


@pytest.fixture(scope="module")
def bundle(stack, token):
    """One real bundle, measured by the harness on this machine's CPU against its mock endpoint."""
    mock = stack.start(
        "mock-endpoint",
        [sys.executable, "-m", "diligence_harness", "mock-server", "--port", "0"]
        + ["--ttft-ms", "15", "--itl-ms", "1", "--max-seconds", "300"],
        env={**stack.env, "PYTHONPATH": str(HARNESS)},
    )
    try:
        listening = wait_for(
            "the mock endpoint to listen",
            lambda: re.search(r'"port": (\d+)', mock.log()) or not mock.alive(),
            timeout_s=30,
        )
        assert mock.alive(), mock.log()
        out = stack.workdir / "bundle.json"
        fixture = HARNESS / "tests" / "fixtures" / "nvidia-smi" / "rtx-4090-1x-v12.xml"
        result = stack.harness(
            *["run", "--case", "1", "--endpoint", f"http://127.0.0.1:{listening[1]}/v1"],
            *["--model", "mock", "--ladder", "1,2", "--rounds", "2", "--prompt-sets", "short"],
            *["--max-tokens", "16", "--requests-per-stream", "2", "--min-requests-per-cell", "4"],
            *["--min-requests-per-level", "0"],
            *["--warmup-requests", "1", "--quick", "--bench-rounds", "2", "--sustained-s", "0.2"],
            *["--skip", "calibrate", "--net-count", "3", "--no-alloc-probe"],
            *["--nvidia-smi-xml", str(fixture), "--nonce", token["nonce"], "--out", str(out)],
        )
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    finally:
        mock.stop()
    return out


def another_run(bundle_path, name: str):
    """The same measurements as another run (a new bundle id), written as the harness writes."""
    document = json.loads(bundle_path.read_bytes())
    document["bundle_id"] = str(uuid.uuid4())
    path = bundle_path.with_name(name)
    path.write_bytes(json.dumps(document, sort_keys=True, separators=(",", ":")).encode())
    return path


def upload(stack, path, url, token):
    """The harness's own ``upload`` sub-command, in its own process, retrying with back-off."""
    return stack.start(
        "harness-upload",
        [sys.executable, "-m", "diligence_harness", "upload", str(path), "--upload", url]
        + ["--token", token["token"], "--upload-attempts", "6"],
        env={**stack.env, "PYTHONPATH": str(HARNESS)},
    )


def receipt(process) -> dict:
    process.process.wait(timeout=120)
    assert process.process.returncode == 0, process.log()
    process.stop()
    # The receipt is the JSON document the harness writes to stdout; the log holds its
    # console lines too (retries before it, the verdict and evidence page after it).
    text = process.log()
    start = re.search(r"^\{", text, re.MULTILINE)
    assert start is not None, text
    return json.JSONDecoder().raw_decode(text, start.start())[0]


def bundles_with(stack, sha256: str) -> list[tuple]:
    return stack.query(
        "SELECT b.id, b.storage_name, b.size, count(v.id) FROM evidence_evidencebundle b"
        " LEFT JOIN evidence_specverification v ON v.bundle_id = b.id"
        " WHERE b.sha256 = %s GROUP BY b.id",
        (sha256,),
    )


def blocked_insert(stack, table: str) -> bool:
    return bool(
        stack.value(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query LIKE %s",
            (f'INSERT INTO "{table}"%%',),
        )
    )


def assert_stored_once(stack, path, server_log: str) -> int:
    data = path.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    rows = bundles_with(stack, sha256)
    assert len(rows) == 1, server_log[-4000:]
    pk, storage_name, size, verifications = rows[0]
    assert (size, verifications) == (len(data), 1)
    matching = [p for p in stack.stored("evidence") if p.read_bytes() == data]
    assert [p.relative_to(stack.media).as_posix() for p in matching] == [storage_name]
    return pk


def evidence_posts(server_log: str, status: int) -> int:
    return len(re.findall(rf'"POST {UPLOAD_PATH} HTTP/1\.1" {status} ', server_log))


def test_a_restart_inside_the_upload_transaction_ends_in_one_bundle(stack, server, token, bundle):
    service, url = server
    files_before = stack.stored("evidence")
    # Hold the upload table so the upload stops inside its transaction, right
    # after it stored the file and before its row is written: then restart.
    holder = psycopg.connect(stack.db_url, connect_timeout=5)
    try:
        holder.execute("LOCK TABLE evidence_evidenceupload IN EXCLUSIVE MODE")
        harness = upload(stack, bundle, url, token)
        wait_for(
            "the upload to wait inside its transaction",
            lambda: blocked_insert(stack, "evidence_evidenceupload") or not harness.alive(),
            timeout_s=60,
            every_s=0.05,
        )
        assert harness.alive(), harness.log()
        assert len(stack.stored("evidence")) == len(files_before) + 1  # its file, not yet a row
        # End the waiting INSERT's session while the lock is still held, then restart.
        # A restart alone races: its shutdown may end the holder first, and the INSERT,
        # granted the lock, can commit before it sees its own termination.
        holder.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            " AND query LIKE %s",
            ('INSERT INTO "evidence_evidenceupload"%%',),
        )
        wait_for(
            "the waiting INSERT's session to end",
            lambda: not blocked_insert(stack, "evidence_evidenceupload"),
            timeout_s=30,
            every_s=0.05,
        )
        stack.cluster.restart()
    finally:
        with contextlib.suppress(psycopg.Error):
            holder.close()

    result = receipt(harness)
    assert (result["outcome"], result["http_status"]) == ("uploaded", 202), result
    assert result["upload"]["state"] == "verified", result
    assert result["attempts"][0]["status"] == 500  # the INSERT died with its session
    assert len(result["attempts"]) >= 2
    pk = assert_stored_once(stack, bundle, service.log())
    assert len(stack.stored("evidence")) == len(files_before) + 1  # the first file was removed

    # A retry whose answer was lost re-sends the same bytes: the same record comes back.
    again = receipt(upload(stack, bundle, url, token))
    assert (again["outcome"], again["http_status"]) == ("uploaded", 200), again
    assert assert_stored_once(stack, bundle, service.log()) == pk


def test_an_upload_while_postgresql_is_down_is_stored_once_it_is_back(stack, server, token, bundle):
    service, url = server
    second = another_run(bundle, "second-run.json")
    failures_before = evidence_posts(service.log(), 500)
    stack.cluster.ctl("stop")
    try:
        harness = upload(stack, second, url, token)
        wait_for(
            "the server to refuse an attempt while the database is down",
            lambda: evidence_posts(service.log(), 500) > failures_before or not harness.alive(),
            timeout_s=60,
            every_s=0.05,
        )
        assert harness.alive(), harness.log()
    finally:
        stack.cluster.ctl("start")
        stack.cluster.wait_ready()

    result = receipt(harness)
    assert (result["outcome"], result["http_status"]) == ("uploaded", 202), result
    assert result["attempts"][0]["status"] == 500
    assert_stored_once(stack, second, service.log())
    assert_stored_once(stack, bundle, service.log())  # the earlier bundle is untouched
    # The server's persistent connections came back by themselves.
    assert service.alive()


def test_a_restart_between_uploads_costs_no_failed_request(stack, server, token, bundle):
    """The server's idle persistent connection dies with the restart; the health
    check before its next use replaces it, so the next upload needs no retry."""
    service, url = server
    warm = receipt(upload(stack, bundle, url, token))  # the connection is opened and kept
    assert warm["http_status"] in {200, 201}, warm
    stack.cluster.restart()

    result = receipt(upload(stack, bundle, url, token))
    assert [a["status"] for a in result["attempts"]] == [200], result
    assert_stored_once(stack, bundle, service.log())


def test_a_restart_while_the_worker_writes_the_bundle_ends_in_one_bundle(
    stack, server, token, bundle
):
    """The upload is received (202); the worker's transaction dies with the restart; the
    task is retried with back-off and the harness, polling through the restart, gets
    the verdict."""
    service, url = server
    third = another_run(bundle, "third-run.json")
    holder = psycopg.connect(stack.db_url, connect_timeout=5)
    try:
        # SHARE: no row is written into the table, but the receipt's foreign-key check
        # (row share) passes, so the upload is received and the worker's insert waits.
        holder.execute("LOCK TABLE evidence_evidencebundle IN SHARE MODE")
        harness = upload(stack, third, url, token)
        wait_for(
            "the worker to wait inside its transaction",
            lambda: blocked_insert(stack, "evidence_evidencebundle") or not harness.alive(),
            timeout_s=60,
            every_s=0.05,
        )
        assert harness.alive(), harness.log()
        stack.cluster.restart()
    finally:
        with contextlib.suppress(psycopg.Error):
            holder.close()

    result = receipt(harness)
    assert (result["outcome"], result["http_status"]) == ("uploaded", 202), result
    assert [a["status"] for a in result["attempts"]] == [202]  # received once; no re-send
    assert result["upload"]["state"] == "verified"
    assert_stored_once(stack, third, service.log())
    upload_states = stack.query(
        "SELECT state FROM evidence_evidenceupload WHERE sha256 = %s",
        (hashlib.sha256(third.read_bytes()).hexdigest(),),
    )
    assert upload_states == [("verified",)]

"""The development server on PostgreSQL serves a bounded number of requests at once, so its
database connections stay within PostgreSQL's max_connections whatever the number of people
(README, "Web server and database connections")."""

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection

from tests.core import busy_urls

ROOT = Path(__file__).resolve().parents[2]
POSTGRES = "postgres://someone@db.example.org:5432/diligence"

SHOW = """
import json, sys
sys.argv = {argv!r}
import django
django.setup()
from django.conf import settings
print(json.dumps({{
    "max_requests": settings.RUNSERVER_MAX_REQUESTS,
    "conn_max_age": settings.DATABASES["default"]["CONN_MAX_AGE"],
}}))
"""


def settings_under(argv: list[str], **env: str) -> subprocess.CompletedProcess:
    ignored = {"DATABASE_URL", "RUNSERVER_MAX_REQUESTS", "DATABASE_CONN_MAX_AGE"}
    clean = {k: v for k, v in os.environ.items() if k not in ignored}
    return subprocess.run(
        [sys.executable, "-c", SHOW.format(argv=argv)],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def shown(argv: list[str], **env: str) -> dict:
    result = settings_under(argv, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


RUNSERVER = ["manage.py", "runserver", "0.0.0.0:8000"]


def test_runserver_on_postgresql_serves_ten_requests_at_once_without_kept_connections():
    assert shown(RUNSERVER, DATABASE_URL=POSTGRES, DATABASE_CONN_MAX_AGE="60") == {
        "max_requests": 10,
        "conn_max_age": 0,
    }
    assert shown(RUNSERVER, DATABASE_URL=POSTGRES, RUNSERVER_MAX_REQUESTS="4") == {
        "max_requests": 4,
        "conn_max_age": 0,
    }


@pytest.mark.parametrize(
    "argv,env",
    [
        (["gunicorn", "config.wsgi:application"], {"DATABASE_URL": POSTGRES}),
        (["manage.py", "migrate"], {"DATABASE_URL": POSTGRES}),
        (RUNSERVER, {}),  # SQLite, the embedded default: one writer at a time anyway
    ],
    ids=["gunicorn", "another command", "SQLite"],
)
def test_elsewhere_nothing_is_bounded_and_kept_connections_are_kept(argv, env):
    assert shown(argv, DATABASE_CONN_MAX_AGE="60", **env) == {
        "max_requests": 0,
        "conn_max_age": 60,
    }


def test_a_negative_bound_names_its_variable():
    result = settings_under(RUNSERVER, DATABASE_URL=POSTGRES, RUNSERVER_MAX_REQUESTS="-1")
    assert result.returncode != 0
    assert "RUNSERVER_MAX_REQUESTS" in result.stderr


def _serve_at_once(app: WSGIHandler, people: int) -> list[tuple[str, dict]]:
    """``people`` requests at once, each in a thread of its own as runserver serves them;
    each response is closed when sent, as a WSGI server does."""
    answers: list[tuple[str, dict]] = []

    def one() -> None:
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": "/busy/",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "443",
            "HTTPS": "on",
            "wsgi.url_scheme": "https",
            "wsgi.input": io.BytesIO(b""),
        }
        status: list[str] = []
        body = app(environ, lambda code, headers: status.append(code))
        try:
            content = b"".join(body)
        finally:
            body.close()
        answers.append((status[0], json.loads(content) if status[0].startswith("200") else {}))

    threads = [threading.Thread(target=one) for _ in range(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("bound", [3, 0], ids=["bounded", "unbounded"])
def test_requests_beyond_the_bound_wait_for_a_slot_and_connections_stay_within_it(settings, bound):
    settings.RUNSERVER_MAX_REQUESTS = bound
    settings.ROOT_URLCONF = "tests.core.busy_urls"
    busy_urls.in_flight.update(now=0, most=0)
    people = 12
    answers = _serve_at_once(WSGIHandler(), people)
    assert [status for status, _body in answers] == ["200 OK"] * people
    most = busy_urls.in_flight["most"]
    if bound:
        assert most <= bound
    else:
        assert most > 3  # without the bound, they all run at once (the machine permitting)
    if connection.vendor == "postgresql":
        seen = max(body["connections"] for _status, body in answers)
        # This test's own connection, and one per request in flight; a slot is freed only
        # after its request's connection is closed.
        assert seen <= (bound or people) + 1, seen

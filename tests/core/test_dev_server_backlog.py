"""The development server answers a crowd arriving at once: a request with a body (a form,
an API write) gets its answer, never a connection reset (apps/core/devserver.py)."""

import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from http.client import HTTPConnection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEOPLE = 100


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(tmp_path: Path) -> dict:
    ignored = {"DATABASE_URL", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in ignored}
    return {
        **clean,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DILIGENCE_VAR_DIR": str(tmp_path / "var"),
        "MEDIA_ROOT": str(tmp_path / "media"),
    }


def test_only_the_development_server_listens_with_the_wider_backlog(tmp_path):
    show = (
        "import sys; sys.argv = {argv!r}; import django; django.setup(); "
        "from django.core.servers.basehttp import WSGIServer; print(WSGIServer.request_queue_size)"
    )
    for argv, backlog in ((["manage.py", "runserver"], "1024"), (["manage.py", "check"], "10")):
        done = subprocess.run(
            [sys.executable, "-c", show.format(argv=argv)],
            cwd=ROOT,
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[-1] == backlog, argv


def _post(port: int, outcomes: list) -> None:
    try:
        connection = HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request(
            "POST", "/healthz", body=b'{"note": "a form sent"}',
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        response = connection.getresponse()
        response.read()
        outcomes.append(response.status)
        connection.close()
    except OSError as error:
        outcomes.append(type(error).__name__)


def test_a_hundred_people_sending_at_once_all_get_an_answer(tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", "--skip-checks"]
        + [f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the development server did not start"
                time.sleep(0.2)
        outcomes: list = []
        crowd = [threading.Thread(target=_post, args=(port, outcomes)) for _ in range(PEOPLE)]
        for person in crowd:
            person.start()
        for person in crowd:
            person.join(timeout=90)
        answered = Counter(outcomes)
        assert sum(n for status, n in answered.items() if isinstance(status, int)) == PEOPLE, (
            answered
        )
    finally:
        server.terminate()
        server.wait(timeout=30)

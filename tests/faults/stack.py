"""The real stack for fault tests: a PostgreSQL database of their own, a Redis
broker, and Diligence's own processes (Celery worker, gunicorn, the harness).

Everything here talks to those processes from outside, as an operator would:
SQL through psycopg, files in the storage directory, signals to process
groups, ``pg_ctlcluster`` for the database server. Every wait is bounded.
"""

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "harness"
DATABASE = "diligence_faults"
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"
# Short enough for a test; longer than a small packet takes to render, so the
# restarted worker is not handed the message again while it renders it.
VISIBILITY_TIMEOUT_S = 10


class StackUnavailable(Exception):
    """PostgreSQL, Redis or the cluster tools are not there."""


def wait_for(what: str, predicate: Callable[[], object], *, timeout_s: float, every_s=0.05):
    """Poll until ``predicate`` returns something truthy; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(every_s)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


class Service:
    """A process started in its own session, so a signal reaches all of it (pool children too)."""

    def __init__(self, name: str, command: list[str], *, env: dict, log: Path):
        self.name, self.log_path = name, log
        self._log = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def children(self) -> list[int]:
        """Process ids whose parent is this process (a worker's pool processes)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:
                found.append(int(stat.parent.name))
        return found

    def alive(self) -> bool:
        return self.process.poll() is None

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)

    def kill(self) -> None:
        """SIGKILL to the whole group: nothing gets to clean up."""
        self.signal_group(signal.SIGKILL)
        self.process.wait(timeout=15)
        self._log.close()

    def stop(self) -> None:
        if self.alive():
            self.signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
        self.signal_group(signal.SIGKILL)  # stragglers of the group, if any
        try:
            self.process.wait(timeout=10)
        finally:
            self._log.close()


class Cluster:
    """The local PostgreSQL cluster serving ``url``, driven with ``pg_ctlcluster``."""

    def __init__(self, url: str):
        self.url = url
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 5432
        if shutil.which("pg_ctlcluster") is None or shutil.which("pg_lsclusters") is None:
            raise StackUnavailable("pg_ctlcluster is not installed (Debian's postgresql-common)")
        listing = subprocess.run(
            ["pg_lsclusters", "--no-header"], capture_output=True, text=True, timeout=20
        ).stdout
        matches = [
            cols
            for cols in (line.split() for line in listing.splitlines())
            if len(cols) >= 5 and cols[2] == str(self.port)
        ]
        if not matches:
            raise StackUnavailable(f"no local PostgreSQL cluster listens on port {self.port}")
        self.version, self.name, _port, _status, self.owner = matches[0][:5]

    def ctl(self, action: str) -> None:
        command = ["pg_ctlcluster", "--skip-systemctl-redirect", self.version, self.name, action]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"{' '.join(command)}: {result.stdout}{result.stderr}"

    def ready(self) -> bool:
        try:
            with psycopg.connect(self.url, connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def wait_ready(self, timeout_s: float = 60) -> None:
        wait_for("PostgreSQL to accept connections", self.ready, timeout_s=timeout_s, every_s=0.2)

    def restart(self) -> None:
        # pg_ctlcluster restarts in "fast" mode: every session is terminated,
        # open transactions are rolled back.
        self.ctl("restart")
        self.wait_ready()

    def ensure_running(self) -> None:
        if not self.ready():
            self.ctl("start")
            self.wait_ready()


class Stack:
    """One database, one broker database, one storage directory, for one test session."""

    def __init__(self, *, pg_url: str, redis_url: str, workdir: Path):
        self.cluster = Cluster(pg_url)
        self.admin_url, self.redis_url, self.workdir = pg_url, redis_url, workdir
        self.db_url = with_database(pg_url, DATABASE)
        self.media = workdir / "media"
        self.tmp = workdir / "tmp"
        for folder in (self.media, self.tmp, workdir / "logs"):
            folder.mkdir(parents=True, exist_ok=True)
        self.services: list[Service] = []
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_ALLOW")},
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": self.db_url,
            "CELERY_BROKER_URL": redis_url,
            "CELERY_BROKER_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_S),
            "MEDIA_ROOT": str(self.media),
            "DILIGENCE_VAR_DIR": str(workdir / "var"),
            "PACKET_SIGNING_DIR": str(workdir / "signing"),
            "TMPDIR": str(self.tmp),
            "PYTHONUNBUFFERED": "1",
        }

    # --- the database -------------------------------------------------------
    def create_database(self, template: str) -> bool:
        """Create the database, as a copy of ``template`` where that exists (a database
        migrated by an earlier test run: tests/database.py); whether it was copied."""
        self.drop_database()
        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
            if found.fetchone() is not None:
                try:
                    conn.execute(f'CREATE DATABASE "{DATABASE}" TEMPLATE "{template}"')
                    return True
                except psycopg.Error:  # in use by another session: migrate instead
                    pass
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
            return False

    def drop_database(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with psycopg.connect(self.db_url, autocommit=True, connect_timeout=5) as conn:
            return conn.execute(sql, params).fetchall()

    def value(self, sql: str, params: tuple = ()):
        rows = self.query(sql, params)
        return rows[0][0] if rows else None

    def _redis(self):
        import redis

        return redis.Redis.from_url(self.redis_url, socket_connect_timeout=3, socket_timeout=5)

    def flush_broker(self) -> None:
        with self._redis() as client:
            client.flushdb()

    def broker_backlog(self) -> tuple[int, int]:
        """(messages waiting in the default queue, messages delivered but not acknowledged)."""
        with self._redis() as client:
            return client.llen("celery"), client.hlen("unacked")

    # --- Diligence's own processes -----------------------------------------
    def manage(self, *args: str, timeout_s: float = 180) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        assert result.returncode == 0, f"manage.py {args[0]}: {result.stdout}{result.stderr}"
        return result.stdout

    def shell(self, code: str, timeout_s: float = 60) -> dict:
        """Run Django code in a separate process; it prints one JSON line, returned here."""
        out = self.manage("shell", "--no-imports", "-c", code, timeout_s=timeout_s)
        return json.loads(out.strip().splitlines()[-1])

    def start(self, name: str, command: list[str], env: dict | None = None) -> Service:
        log = self.workdir / "logs" / f"{name}-{len(self.services)}.log"
        service = Service(name, command, env=env or self.env, log=log)
        self.services.append(service)
        return service

    def start_worker(self, concurrency: int = 1) -> Service:
        index = len(self.services)
        worker = self.start(
            "worker",
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO"]
            + ["--pool=prefork", f"--concurrency={concurrency}", f"--hostname=faults{index}@%h"]
            + ["--without-gossip", "--without-mingle", "--without-heartbeat"],
        )
        wait_for(
            "the Celery worker to be ready",
            lambda: " ready." in worker.log() or not worker.alive(),
            timeout_s=90,
            every_s=0.2,
        )
        assert worker.alive(), worker.log()[-4000:]
        return worker

    def start_server(self) -> tuple[Service, str]:
        """gunicorn with one worker, so every request meets the same persistent connection."""
        port = free_port()
        env = {**self.env, "DATABASE_CONN_MAX_AGE": "60"}
        server = self.start(
            "gunicorn",
            [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}"]
            + ["--workers", "1", "--timeout", "60", "--access-logfile", "-"],
            env=env,
        )
        base = f"http://127.0.0.1:{port}"
        wait_for(
            "the server's /healthz to answer 200",
            lambda: _healthy(base) or not server.alive(),
            timeout_s=90,
            every_s=0.2,
        )
        assert server.alive(), server.log()[-4000:]
        return server, base

    def harness(self, *args: str, timeout_s: float = 150) -> subprocess.CompletedProcess:
        env = {**self.env, "PYTHONPATH": str(HARNESS)}
        return subprocess.run(
            [sys.executable, "-m", "diligence_harness", *args],
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )

    def stop_all(self) -> None:
        for service in reversed(self.services):
            if not service._log.closed:
                service.stop()

    # --- storage -------------------------------------------------------------
    def stored(self, folder: str) -> list[Path]:
        root = self.media / folder
        return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=3) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def reachable(pg_url: str, redis_url: str) -> str | None:
    """None when the stack can be used, else why not."""
    try:
        with psycopg.connect(pg_url, connect_timeout=3):
            pass
    except psycopg.Error as error:
        return f"PostgreSQL is not reachable at {pg_url}: {str(error).strip().splitlines()[0]}"
    import redis

    client = redis.Redis.from_url(redis_url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.RedisError as error:
        return f"Redis is not reachable at {redis_url}: {error}"
    finally:
        client.close()
    try:
        cluster = Cluster(pg_url)
    except StackUnavailable as error:
        return str(error)
    if os.geteuid() != 0 and pwd.getpwuid(os.geteuid()).pw_name != cluster.owner:
        return f"restarting PostgreSQL needs root or the cluster's owner ({cluster.owner})"
    return None

"""The test database, migrated once and then copied.

Migrating a database from scratch takes the better part of half a minute,
most of it Django rendering the migration states, and every test process
needs a database of its own. So the migrations run once, into a template
named by a digest of everything that shapes the schema (the migration files,
the permissions each app grants the roles, and the pinned requirements); each
test process then starts from a copy of it. A changed migration (or a role's
changed permissions) changes the digest, and the next run builds a new
template; older templates are removed when a new one is built.

On SQLite the template is a file under ``var/test-db/``; on PostgreSQL it is a
database (``diligence_template_<digest>``), and each process's test database is
created from it with ``CREATE DATABASE … TEMPLATE``.
"""

import fcntl
import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connections

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PREFIX = "diligence_template_"


def schema_digest() -> str:
    """A digest of the migration files, the roles' permissions (written to the role groups
    after every migrate) and the pinned requirements, 12 hex digits."""
    digest = hashlib.sha256()
    sources = sorted((ROOT / "apps").glob("*/migrations/*.py"))
    sources += sorted((ROOT / "apps").glob("*/roles.py"))
    sources.append(ROOT / "requirements.txt")
    for path in sources:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@contextmanager
def _exclusive(lock_path: Path):
    """One process at a time builds a template; the others wait and then use it."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _migrate(database_url: str) -> None:
    """Run the migrations into the database at ``database_url``, in a process of its own."""
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"migrating the test database template failed:\n{result.stderr}")
    print(f"\nTest database template migrated in {time.monotonic() - started:.1f} s")


# --- SQLite -------------------------------------------------------------------


def _sqlite_template() -> Path:
    folder = Path(settings.VAR_DIR) / "test-db"
    template = folder / f"sqlite-{schema_digest()}.sqlite3"
    with _exclusive(folder / "sqlite.lock"):
        if not template.exists():
            for stale in folder.glob("sqlite-*.sqlite3*"):
                stale.unlink()
            building = template.with_suffix(".building")
            building.unlink(missing_ok=True)
            _migrate(f"sqlite:///{building}")
            _sqlite_copy(building, template)
            building.unlink()
    return template


def _sqlite_copy(source: Path, target: Path) -> None:
    """Copy a SQLite database with SQLite's own backup (a write-ahead log included)."""
    aside = target.with_name(target.name + ".part")
    aside.unlink(missing_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(aside) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    os.replace(aside, target)


# --- PostgreSQL ---------------------------------------------------------------


def _postgres_admin(settings_dict: dict):
    import psycopg

    return psycopg.connect(
        dbname="postgres",
        user=settings_dict.get("USER") or None,
        password=settings_dict.get("PASSWORD") or None,
        host=settings_dict.get("HOST") or None,
        port=settings_dict.get("PORT") or None,
        autocommit=True,
    )


def _postgres_url(settings_dict: dict, name: str) -> str:
    user = settings_dict.get("USER") or ""
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    host = settings_dict.get("HOST") or ""
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{name}"


def _postgres_template(settings_dict: dict) -> str:
    name = f"{TEMPLATE_PREFIX}{schema_digest()}"
    with _exclusive(Path(settings.VAR_DIR) / "test-db" / "postgres.lock"):
        with _postgres_admin(settings_dict) as admin:
            found = {
                row[0]
                for row in admin.execute(
                    "SELECT datname FROM pg_database WHERE datname LIKE %s",
                    [TEMPLATE_PREFIX + "%"],
                )
            }
            if name in found:
                return name
            for stale in found:
                admin.execute(f'DROP DATABASE IF EXISTS "{stale}"')
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            _migrate(_postgres_url(settings_dict, name))
        except Exception:
            with _postgres_admin(settings_dict) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            raise
    return name


def _postgres_clone(settings_dict: dict, template: str, target: str) -> None:
    with _postgres_admin(settings_dict) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
        # Two processes cloning one template at once: PostgreSQL refuses the second
        # while the first copies, so it tries again.
        for attempt in range(40):
            try:
                admin.execute(f'CREATE DATABASE "{target}" TEMPLATE "{template}"')
                return
            except Exception as error:  # psycopg.errors.ObjectInUse
                if "being accessed by other users" not in str(error) or attempt == 39:
                    raise
                time.sleep(0.25)


def _postgres_drop(settings_dict: dict, name: str) -> None:
    with _postgres_admin(settings_dict) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- the test process's database -----------------------------------------------


def _test_name(settings_dict: dict) -> str:
    test_name = settings_dict.get("TEST", {}).get("NAME")
    return test_name or f"test_{settings_dict['NAME']}"


def _point_at(alias: str, name: str) -> None:
    """Point the connection at ``name``, as Django's own test database set-up does."""
    connection = connections[alias]
    connection.close()
    settings.DATABASES[alias]["NAME"] = name
    connection.settings_dict["NAME"] = name


def set_up(alias: str = "default"):
    """Give this process its test database, a copy of the migrated template.

    Returns what ``tear_down`` needs to remove it again.
    """
    settings_dict = connections[alias].settings_dict
    original, test_name = settings_dict["NAME"], _test_name(settings_dict)
    vendor = connections[alias].vendor
    if vendor == "sqlite":
        target = Path(test_name)
        for leftover in target.parent.glob(target.name + "*"):
            leftover.unlink()
        _sqlite_copy(_sqlite_template(), target)
    elif vendor == "postgresql":
        _postgres_clone(settings_dict, _postgres_template(settings_dict), test_name)
    else:  # pragma: no cover - the project runs on these two
        raise RuntimeError(f"no test database template for {vendor}")
    _point_at(alias, test_name)
    return alias, vendor, original, test_name


def restore(state) -> None:
    """Put the database back as the template has it.

    A transactional test ends by emptying every table (Django's flush), which also
    takes what the migrations wrote (the roles, the published clause templates).
    In one process the tests that need those run first; with tests handed out to
    several processes, one may follow a flush, so each flush is undone here.
    """
    alias, vendor, _original, test_name = state
    connection = connections[alias]
    connection.close()
    if vendor == "sqlite":
        for journal in Path(test_name).parent.glob(Path(test_name).name + "-*"):
            journal.unlink()
        _sqlite_copy(_sqlite_template(), Path(test_name))
    else:
        settings_dict = connection.settings_dict
        _postgres_clone(settings_dict, _postgres_template(settings_dict), test_name)


def emptied(alias: str = "default") -> bool:
    """Whether the tables were emptied: a fixture that outlives one test may flush too,
    at the end of its module. The published clause templates tell: a data migration
    writes them, and nothing after a flush writes them again (the roles come back at
    once, from the signal that follows every migrate and flush)."""
    from apps.contracts.models import ChecklistTemplate

    connection = connections[alias]
    if connection.connection is None:  # nothing touched the database since it was set up
        return False
    table = connection.ops.quote_name(ChecklistTemplate._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {table} LIMIT 1")
        return cursor.fetchone() is None


def is_transactional(item) -> bool:
    """Whether a test runs outside a rolled-back transaction (pytest-django's own rule)."""
    marker = item.get_closest_marker("django_db")
    if marker is not None and (marker.kwargs.get("transaction") or marker.args[:1] == (True,)):
        return True
    return bool({"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ())))


def tear_down(state) -> None:
    alias, vendor, original, test_name = state
    settings_dict = dict(connections[alias].settings_dict)
    _point_at(alias, original)
    if vendor == "sqlite":
        for leftover in Path(test_name).parent.glob(Path(test_name).name + "*"):
            leftover.unlink()
    else:
        _postgres_drop(settings_dict, test_name)


def main() -> None:
    """``python -m tests.database``: migrate the template of the database named by
    ``DATABASE_URL`` now, if it is not there yet. CI builds PostgreSQL's while the SQLite
    run's own migration keeps only one of the machine's cores busy; the PostgreSQL run
    then finds it made."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    settings_dict = connections["default"].settings_dict
    vendor = connections["default"].vendor
    if vendor == "sqlite":
        print(f"Test database template: {_sqlite_template()}")
    else:
        print(f"Test database template: {_postgres_template(settings_dict)}")


if __name__ == "__main__":
    main()

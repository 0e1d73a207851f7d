"""The demo, seeded once per test run and then copied into each test that asks for it.

Seeding the demo runs the product's own services for four cases (a harness run on
each offer, the clause checklists, the assessments, the cost imports) and takes the
better part of a minute; a score of tests read it. So the first test process that
needs it seeds it once, with ``manage.py seed_demo``'s own code, into a copy of the
migrated template (tests/database.py) in a process of its own, and records what the
seeding added: the new rows of every table and the stored files. Each test that asks
for the demo then gets those rows inserted inside its own transaction (rolled back
at its end, as ever) and the files copied under its media root: the same records,
ids and digests as a seeding in the test itself, in a fraction of a second.

The record is kept per test run (a run's processes share it; the next run seeds
afresh, as the demo's dates are relative to the day it is seeded). Where the demo
cannot be copied this way, on PostgreSQL, the fixtures seed it in the test as before;
with the files in an S3 bucket, they are stored there under the same names.
"""

import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction

from tests import database

RUN_ENV = "DILIGENCE_TEST_RUN"
STALE_AFTER_S = 6 * 3600


def run_id() -> str:
    """One id per test run, shared by its processes (pytest-xdist names the run)."""
    found = os.environ.get("PYTEST_XDIST_TESTRUNUID") or os.environ.get(RUN_ENV)
    if not found:
        found = uuid.uuid4().hex
        os.environ[RUN_ENV] = found
    return found


def copyable() -> bool:
    """Whether this test process can take the recorded demo: its rows are SQLite's."""
    return connection.vendor == "sqlite"


def _folder() -> Path:
    return Path(settings.VAR_DIR) / "test-db" / f"demo-{database.schema_digest()}-{run_id()}"


def _record() -> Path:
    """The recorded demo of this run, seeded by whichever process asks first."""
    folder = _folder()
    done = folder / "rows.pickle"
    with database._exclusive(folder.parent / "demo.lock"):
        if not done.exists():
            _remove_stale(folder.parent)
            _build(folder)
    return folder


def _remove_stale(parent: Path) -> None:
    for old in parent.glob("demo-*"):
        if old.is_dir() and time.time() - old.stat().st_mtime > STALE_AFTER_S:
            shutil.rmtree(old, ignore_errors=True)


def _build(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    template = database._sqlite_template()
    seeded = folder / "seeded.sqlite3"
    database._sqlite_copy(template, seeded)
    started = time.monotonic()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{seeded}",
        "MEDIA_ROOT": str(folder / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    result = subprocess.run(
        [sys.executable, "-m", "tests.demo_snapshot", str(folder)],
        cwd=database.ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"seeding the demo failed:\n{result.stdout}\n{result.stderr}")
    rows = _added_rows(seeded, template)
    with open(folder / "rows.part", "wb") as handle:
        pickle.dump(rows, handle)
    # The seeded database itself is kept too, for a test that serves it from a process of
    # its own (``seeded_files``).
    os.replace(folder / "rows.part", folder / "rows.pickle")
    print(f"\nDemo seeded once for this run in {time.monotonic() - started:.1f} s")


def _added_rows(seeded: Path, template: Path) -> list[tuple[str, list[str], list[tuple]]]:
    """Per table, the rows the seeding added or changed; a row it removed is refused."""
    tables: list[tuple[str, list[str], list[tuple]]] = []
    with sqlite3.connect(seeded) as db:
        db.execute("ATTACH DATABASE ? AS template", (str(template),))
        names = [
            row[0]
            for row in db.execute(
                "SELECT name FROM main.sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        for name in names:
            quoted = '"' + name.replace('"', '""') + '"'
            columns = [row[1] for row in db.execute(f"PRAGMA main.table_info({quoted})")]
            added = db.execute(
                f"SELECT * FROM main.{quoted} EXCEPT SELECT * FROM template.{quoted}"
            ).fetchall()
            gone = db.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM template.{quoted} "
                f"EXCEPT SELECT rowid FROM main.{quoted})"
            ).fetchone()[0]
            if gone:
                raise RuntimeError(f"seeding the demo removed {gone} rows of {name}")
            if added:
                tables.append((name, columns, added))
    return tables


def restore() -> str:
    """Put the recorded demo into this test's database and media root; return what
    ``seed_demo`` printed. Call it inside the test's (or the module's) transaction."""
    folder = _record()
    with open(folder / "rows.pickle", "rb") as handle:
        tables = pickle.load(handle)
    with connection.cursor() as cursor:
        for name, columns, rows in tables:
            names = ", ".join(connection.ops.quote_name(column) for column in columns)
            marks = ", ".join(["%s"] * len(columns))
            cursor.executemany(
                f"INSERT OR REPLACE INTO {connection.ops.quote_name(name)} ({names}) "
                f"VALUES ({marks})",
                rows,
            )
    _store_files(folder / "media")
    return json.loads((folder / "output.json").read_text())


def seeded_files() -> tuple[Path, Path]:
    """The run's seeded demo as files: its SQLite database and its stored files' folder,
    for a process that serves the demo itself (copy them; they are the run's own)."""
    folder = _record()
    return folder / "seeded.sqlite3", folder / "media"


def _store_files(media: Path) -> None:
    """The demo's stored files, under the names its rows give them (``store_folder``)."""
    from tests.stored import store_folder

    store_folder(media)


def seed_demo_here() -> str:
    """The demo's four cases in this test's database, as ``make run`` seeds them: copied
    from the run's one seeding where it can be, seeded here where it cannot; returns
    what the command printed."""
    if copyable():
        with transaction.atomic():
            return restore()
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def _seed(folder: Path) -> None:
    """In the seeding process: ``seed_demo`` as the tests run it (fast password hashes,
    tasks inline), printing into ``output.json``."""
    from django.test import override_settings

    hashers = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    out = StringIO()
    with override_settings(PASSWORD_HASHERS=hashers, BACKGROUND_TASKS=False):
        call_command("seed_demo", stdout=out)
    (folder / "output.json").write_text(json.dumps(out.getvalue()))


if __name__ == "__main__":
    import django

    django.setup()
    _seed(Path(sys.argv[1]))

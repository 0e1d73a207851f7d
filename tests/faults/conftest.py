"""Fault tests run only when asked for: ``pytest tests/faults -m faults``.

They restart PostgreSQL and kill processes, which would disturb every other
test using the same database server, so a run whose ``-m`` expression does not
name ``faults`` leaves them out (deselected), whatever else it selects.

Where: ``DILIGENCE_FAULTS_PG_URL`` (a superuser on the local cluster that will
be restarted; default ``postgres://postgres@127.0.0.1:5432/postgres``) and
``DILIGENCE_FAULTS_REDIS_URL`` (a Redis database the tests may flush; default
``redis://127.0.0.1:6379/14``). The tests create the database
``diligence_faults`` and drop it afterwards. Without PostgreSQL or Redis they
are skipped, saying why, except with ``CI`` set: there they fail.
When a fault test fails, the logs of every process it started are copied to
``test-artifacts/faults/`` (CI keeps them); ``DILIGENCE_FAULTS_KEEP=1`` keeps
the whole working directory.
"""

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.database import TEMPLATE_PREFIX, schema_digest
from tests.faults.stack import DEFAULT_PG_URL, DEFAULT_REDIS_URL, ROOT, Stack, reachable

ARTIFACTS = ROOT / "test-artifacts" / "faults"
_failed: list[str] = []


def pytest_collection_modifyitems(config, items):
    if "faults" in (config.getoption("markexpr") or ""):
        return  # the -m expression decides
    left_out = [item for item in items if item.get_closest_marker("faults")]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.get_closest_marker("faults")]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed and item.get_closest_marker("faults"):
        _failed.append(item.nodeid)
    return report


def _terminate(signum, frame):
    # `timeout` (CI) sends SIGTERM: unwind, so every `finally` stops its processes
    # and PostgreSQL is started again.
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def stack():
    pg_url = os.environ.get("DILIGENCE_FAULTS_PG_URL", DEFAULT_PG_URL)
    redis_url = os.environ.get("DILIGENCE_FAULTS_REDIS_URL", DEFAULT_REDIS_URL)
    why_not = reachable(pg_url, redis_url)
    if why_not:
        if os.environ.get("CI"):
            pytest.fail(f"fault tests must run in CI: {why_not}")
        pytest.skip(why_not)
    previous = signal.signal(signal.SIGTERM, _terminate)
    workdir = Path(tempfile.mkdtemp(prefix="diligence-faults-"))
    stack = Stack(pg_url=pg_url, redis_url=redis_url, workdir=workdir)
    try:
        # The migrated template of the tests on PostgreSQL, where they ran first (as in
        # CI); migrated from scratch otherwise.
        copied = stack.create_database(TEMPLATE_PREFIX + schema_digest())
        stack.flush_broker()
        if not copied:
            stack.manage("migrate", "--noinput", "-v0", timeout_s=300)
        stack.manage("seed_demo", timeout_s=180)
        yield stack
    finally:
        try:
            stack.stop_all()
            if _failed:
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                for log in (workdir / "logs").glob("*.log"):
                    shutil.copy(log, ARTIFACTS / log.name)
        finally:
            stack.cluster.ensure_running()
            stack.drop_database()
            stack.flush_broker()
            signal.signal(signal.SIGTERM, previous)
            if not os.environ.get("DILIGENCE_FAULTS_KEEP"):
                shutil.rmtree(workdir, ignore_errors=True)

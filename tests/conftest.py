"""Personas: one person per role, as in the demo.

priya reviews procurement, pablo is a second procurement reviewer, lena is the
legal reviewer, tariq the tech lead, fiona the finance approver, aude the auditor
and ada the admin.
"""

import os
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.core.roles import Role
from tests import database as test_database
from tests import demo_snapshot
from tests.s3 import ACCESS_KEY, REGION, SECRET_KEY, MotoServer, bucket_keys, empty_bucket
from tests.stored import StoredObject, stored_names

PERSONAS = {
    "priya": Role.PROCUREMENT,
    "pablo": Role.PROCUREMENT,
    "lena": Role.LEGAL,
    "tariq": Role.TECH_LEAD,
    "fiona": Role.FINANCE,
    "aude": Role.AUDITOR,
    "ada": Role.ADMIN,
}
ROLE_PERSONA = {
    Role.PROCUREMENT: "priya",
    Role.LEGAL: "lena",
    Role.TECH_LEAD: "tariq",
    Role.FINANCE: "fiona",
    Role.AUDITOR: "aude",
    Role.ADMIN: "ada",
}


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """On SQLite, test in a database file, as the embedded default runs.

    Django's in-memory test database locks whole tables and fails at once where
    a file database waits: concurrency tests would test the wrong thing. The
    file lives in memory-backed storage where there is one, one per test run.
    """
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        folder = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
        database.setdefault("TEST", {})["NAME"] = str(
            folder / f"diligence-test-{os.getpid()}.sqlite3"
        )


_database_state: list = []  # this process's test database, once set up


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker, django_db_modify_db_settings):
    """Each test process starts from a copy of a database migrated once (tests/database.py)."""
    with django_db_blocker.unblock():
        _database_state.append(test_database.set_up())
    yield
    with django_db_blocker.unblock():
        test_database.tear_down(_database_state.pop())


def template_again() -> None:
    """This process's test database as the migrated template has it: a module fixture
    that commits (a live server's world) starts there, never from what other modules
    left (a flush another module's fixture did at its end, after its last test, makes
    the roles again as rows other than the template's, which the recorded demo's rows
    refer to)."""
    if _database_state:
        test_database.restore(_database_state[0])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a flush (a transactional test's, or a module fixture's at its end), the
    database is the migrated template again."""
    try:
        return (yield)
    finally:
        if _database_state:
            from pytest_django.plugin import blocking_manager_key

            with item.config.stash[blocking_manager_key].unblock():
                if test_database.is_transactional(item) or test_database.emptied():
                    test_database.restore(_database_state[0])


@pytest.fixture(scope="session", autouse=True)
def _media_root_per_process(tmp_path_factory):
    """Stored files go to a folder of this test process's own, never to ``var/``: test
    processes running side by side each see only their own files."""
    from django.test import override_settings

    with override_settings(MEDIA_ROOT=tmp_path_factory.mktemp("media")):
        yield


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # The production hasher is deliberately slow; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _tasks_inline(settings):
    """Tasks started from a page run inside the request, as the tests expect their
    results when it returns; the background runner's own tests turn it on."""
    settings.BACKGROUND_TASKS = False


@pytest.fixture(autouse=True)
def _clear_throttle_cache():
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _language_reset():
    """A test that requests a page in Chinese leaves the next test in the default language.

    Django's test client activates the response's language in this thread and
    leaves it active after the request.
    """
    from django.utils import translation

    yield
    translation.deactivate()


# --- Where stored files go -------------------------------------------------
# DILIGENCE_TEST_STORAGE=s3 runs every test on an S3 bucket of a local moto server
# (`make test-s3`); a test marked `s3` always does; a test marked `local_storage`
# (it reads the folder on disk itself) runs on the file system only.
TEST_STORAGE = os.environ.get("DILIGENCE_TEST_STORAGE", "local").strip().lower() or "local"
if TEST_STORAGE not in {"local", "s3"}:
    raise RuntimeError(f"DILIGENCE_TEST_STORAGE must be local or s3, got {TEST_STORAGE!r}")


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server on a free 127.0.0.1 port, for the whole run."""
    server = MotoServer().start()
    yield server
    server.stop()


class S3Bucket:
    """The bucket a test's default storage writes to, and what it holds."""

    def __init__(self, server: MotoServer, name: str) -> None:
        self.server, self.name = server, name
        self.client = server.client()

    def names(self) -> list[str]:
        return bucket_keys(self.client, self.name)

    def read(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=key)["Body"].read()

    def write(self, key: str, body: bytes) -> None:
        self.client.put_object(Bucket=self.name, Key=key, Body=body)

    def remove(self, key: str) -> None:
        self.client.delete_object(Bucket=self.name, Key=key)


def use_s3_storage(settings, server: MotoServer, bucket: str) -> None:
    """Point the default storage at ``bucket`` (Django resets its storages on the change)."""
    from config.settings import s3_storage

    settings.STORAGES = {
        **settings.STORAGES,
        "default": s3_storage(
            bucket=bucket,
            endpoint_url=server.endpoint_url,
            region=REGION,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
        ),
    }


@pytest.fixture
def s3_bucket(settings, s3_server):
    """A fresh bucket as the default storage for this test; emptied and removed after it."""
    bucket = S3Bucket(s3_server, s3_server.new_bucket())
    use_s3_storage(settings, s3_server, bucket.name)
    yield bucket
    if s3_server.process is not None:
        empty_bucket(bucket.client, bucket.name)


@pytest.fixture
def lone_s3(settings):
    """A store of the test's own, which it may take away (``lone_s3.server.stop()``)."""
    server = MotoServer().start()
    try:
        bucket = S3Bucket(server, server.new_bucket())
        use_s3_storage(settings, server, bucket.name)
        yield bucket
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _storage_under_test(request):
    on_s3 = TEST_STORAGE == "s3" or request.node.get_closest_marker("s3") is not None
    if not on_s3:
        return
    if request.node.get_closest_marker("local_storage") is not None:
        pytest.skip("reads the storage folder on disk")
    request.getfixturevalue("s3_bucket")


@pytest.fixture
def stored_files():
    """What the default storage holds now, as ``StoredObject``s (disk or bucket alike)."""

    def files() -> list[StoredObject]:
        return [StoredObject(name) for name in stored_names()]

    return files


def _personas() -> dict:
    """One user per persona, with the role's group; those already made are read again."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    users = {user.username: user for user in model.objects.filter(username__in=PERSONAS)}
    for username, role in PERSONAS.items():
        if username not in users:
            user = model.objects.create_user(
                username=username, password="pw", first_name=username.title()
            )
            user.groups.add(Group.objects.get(name=role))
            users[username] = user
    return users


@pytest.fixture
def people(db):
    return _personas()


@pytest.fixture(scope="module")
def module_db(django_db_setup, django_db_blocker):
    """A transaction around all the tests of a module, rolled back after its last one:
    what a module-scoped fixture builds in it is built once for them (as Django's
    ``setUpTestData``), while each test's own writes are undone at its end, as ever (a
    savepoint within it). Its tests must not be transactional, and a fixture that hands
    them records should hand each test a copy (``copy.deepcopy``), as a test may change
    the instances it is given.
    """
    from django.db import transaction
    from django.test import override_settings

    hashers = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    fast = override_settings(PASSWORD_HASHERS=hashers, BACKGROUND_TASKS=False)  # as each test
    with django_db_blocker.unblock(), fast:
        # The module's world is built on the migrated template, whatever ran before in
        # this process (a flush it did not undo would leave no roles or clause templates).
        if _database_state:
            from django.db import connection

            connection.ensure_connection()  # closed after a flush, it would say nothing
            if test_database.emptied():
                test_database.restore(_database_state[0])
        outer = transaction.atomic()
        outer.__enter__()
        try:
            yield
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture(scope="module")
def module_people(module_db):
    """The personas, made once for the module (``people`` then reads the same users)."""
    return _personas()


@pytest.fixture
def priya(people):
    return people["priya"]


@pytest.fixture
def pablo(people):
    return people["pablo"]


@pytest.fixture
def lena(people):
    return people["lena"]


@pytest.fixture
def tariq(people):
    return people["tariq"]


@pytest.fixture
def aude(people):
    return people["aude"]


@pytest.fixture
def ada(people):
    return people["ada"]


@pytest.fixture
def browser_as(client, people):
    """A Django test client signed in as the named persona."""

    def sign_in(username):
        client.force_login(people[username])
        return client

    return sign_in


@pytest.fixture
def api_as(people):
    """A DRF client authenticated by token as the named persona."""

    def sign_in(username):
        api = APIClient()
        token, _ = Token.objects.get_or_create(user=people[username])
        api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return api

    return sign_in


@pytest.fixture(scope="module")
def demo_once(module_db, tmp_path_factory):
    """The demo's four cases, seeded once for all the tests of a module (``module_db``);
    a test using it also asks for ``db``. Returns what the command printed."""
    from django.test import override_settings

    with override_settings(MEDIA_ROOT=tmp_path_factory.mktemp("demo-media")):
        yield demo_snapshot.seed_demo_here()


@pytest.fixture
def seeded_demo(db, settings, tmp_path):
    """The demo's four cases, as ``make run`` seeds them, with its files in a temporary folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    demo_snapshot.seed_demo_here()


@pytest.fixture
def demo_case(seeded_demo):
    """The demo's first case, the one that can be approved (what ``seed_demo()`` returns)."""
    from apps.cases.models import ProcurementCase
    from apps.casework.demo import DEMO_CASE_NAME

    return ProcurementCase.objects.get(name=DEMO_CASE_NAME)

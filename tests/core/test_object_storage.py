"""Stored files in an S3-compatible bucket (moto's server on 127.0.0.1).

The bucket is private: nothing hands out a URL to an object, names are never
reused (a taken name gets another, even when two saves race for it), a file
read back is checked against its SHA-256 as on disk, and a store that cannot
be reached answers 503 with a plain reason, not a 500.
"""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage, storages

from apps.core import s3, storage
from apps.core.models import FileIntegrityAlarm
from tests.core.test_settings import PRODUCTION_ENV, manage
from tests.evidence.factories import make_bundle_record, make_token
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.stored import replace_stored

pytestmark = pytest.mark.s3

UNAVAILABLE = "The file store cannot be reached just now"


def test_the_default_storage_is_the_private_bucket(s3_bucket):
    assert isinstance(storages["default"], s3.PrivateS3Storage)
    name = default_storage.save("evidence/ab/one.json", ContentFile(b'{"a": 1}'))
    assert s3_bucket.names() == ["evidence/ab/one.json"] == [name]
    assert s3_bucket.read(name) == b'{"a": 1}'
    acl = s3_bucket.client.get_object_acl(Bucket=s3_bucket.name, Key=name)
    assert not [g for g in acl["Grants"] if "AllUsers" in str(g.get("Grantee", {}))]
    with pytest.raises(NotImplementedError, match="permission-checked downloads"):
        default_storage.url(name)


def test_a_taken_name_is_never_overwritten(s3_bucket):
    first = default_storage.save("costs/1/bill.csv", ContentFile(b"first"))
    second = default_storage.save("costs/1/bill.csv", ContentFile(b"second"))
    assert first == "costs/1/bill.csv" and second != first
    assert s3_bucket.read(first) == b"first" and s3_bucket.read(second) == b"second"


def test_two_saves_racing_for_one_name_both_keep_their_bytes(s3_bucket, monkeypatch):
    """The second save looked before the first wrote: its conditional PUT is refused,
    and it takes another name instead of replacing the first one's object."""
    default_storage.save("evidence/ab/race.json", ContentFile(b"winner"))
    real_exists = s3.PrivateS3Storage.exists
    looked = []

    def stale_exists(self, name):
        if not looked:  # the look that happened before the other save wrote
            looked.append(name)
            return False
        return real_exists(self, name)

    monkeypatch.setattr(s3.PrivateS3Storage, "exists", stale_exists)
    other = default_storage.save("evidence/ab/race.json", ContentFile(b"loser"))
    assert other != "evidence/ab/race.json"
    assert s3_bucket.read("evidence/ab/race.json") == b"winner"
    assert s3_bucket.read(other) == b"loser"


def test_a_prefix_keeps_every_object_under_it(settings, s3_server):
    from tests.conftest import REGION, S3Bucket

    bucket = S3Bucket(s3_server, s3_server.new_bucket())
    from config.settings import s3_storage

    settings.STORAGES = {
        **settings.STORAGES,
        "default": s3_storage(
            bucket=bucket.name,
            endpoint_url=s3_server.endpoint_url,
            region=REGION,
            location="diligence/prod",
            access_key="k",
            secret_key="s",
        ),
    }
    name = default_storage.save("packets/DD-1.pdf", ContentFile(b"%PDF"))
    assert name == "packets/DD-1.pdf"
    assert bucket.names() == ["diligence/prod/packets/DD-1.pdf"]
    assert default_storage.listdir("packets") == ([], ["DD-1.pdf"])
    assert storage.storage_location(default_storage, name) == (
        f"s3://{bucket.name}/diligence/prod/packets/DD-1.pdf"
    )


@pytest.fixture
def bundle(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    token = make_token(tariq, case, offer).record
    return make_bundle_record(case, offer, token, n=1, content=b'{"evidence": 1}\n')


def test_a_changed_object_is_refused_with_409_and_raised_on_its_case(browser_as, bundle):
    replace_stored(bundle.storage_name, b'{"forged": true}')
    response = browser_as("aude").get(f"/evidence/{bundle.pk}/raw/")
    assert response.status_code == 409
    alarm = FileIntegrityAlarm.objects.get()
    assert alarm.case == bundle.case and alarm.storage_name == bundle.storage_name


def test_a_download_while_the_store_is_down_is_503_with_the_reason(
    lone_s3, browser_as, api_as, bundle
):
    page = browser_as("aude").get(f"/evidence/{bundle.pk}/raw/")
    assert page.status_code == 200
    lone_s3.server.stop()
    page = browser_as("aude").get(f"/evidence/{bundle.pk}/raw/")
    assert page.status_code == 503 and page["Retry-After"]
    assert UNAVAILABLE in page.content.decode()
    api = api_as("aude").get(f"/api/v1/evidence-bundles/{bundle.pk}/raw/")
    assert api.status_code == 503 and UNAVAILABLE in api.json()["detail"]
    assert not FileIntegrityAlarm.objects.exists()  # unreachable is not changed


def test_check_deploy_is_clean_with_the_bucket_settings():
    env = {
        **PRODUCTION_ENV,
        "DILIGENCE_STORAGE": "s3",
        "AWS_STORAGE_BUCKET_NAME": "diligence-files",
        "AWS_S3_ENDPOINT_URL": "https://s3.example.org",
        "AWS_S3_REGION_NAME": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "key-id",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_LOCATION": "diligence",
    }
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(
    "env,message",
    [
        ({"DILIGENCE_STORAGE": "s3"}, "needs AWS_STORAGE_BUCKET_NAME"),
        ({"DILIGENCE_STORAGE": "ftp"}, "DILIGENCE_STORAGE must be local or s3"),
        (
            {
                "DILIGENCE_STORAGE": "s3",
                "AWS_STORAGE_BUCKET_NAME": "b",
                "AWS_S3_ADDRESSING_STYLE": "sideways",
            },
            "AWS_S3_ADDRESSING_STYLE must be",
        ),
    ],
)
def test_a_storage_setting_that_cannot_work_stops_start_up(env, message):
    result = manage("check", env={"AWS_STORAGE_BUCKET_NAME": "", **env})
    assert result.returncode != 0
    assert message in result.stderr


def test_a_store_without_conditional_writes_still_stores(s3_bucket):
    """Some S3-compatible stores answer 501 to If-None-Match: the object is then written
    plainly, under a name that was free when looked up."""
    from botocore.exceptions import ClientError

    plain = []

    def no_conditions(params, **kwargs):
        if "IfNoneMatch" in params:
            raise ClientError({"Error": {"Code": "NotImplemented"}}, "PutObject")
        plain.append(params["Key"])

    client = storages["default"].connection.meta.client
    client.meta.events.register("before-parameter-build.s3.PutObject", no_conditions)
    first = default_storage.save("costs/1/plain.csv", ContentFile(b"first"))
    second = default_storage.save("costs/1/plain.csv", ContentFile(b"second"))
    assert first != second and plain == [first, second]
    assert s3_bucket.read(first) == b"first" and s3_bucket.read(second) == b"second"
    assert storages["default"].conditional_writes is False
    assert s3.PrivateS3Storage.conditional_writes is True  # this storage's, not every one's

import os
from unittest import mock

import pytest

pytestmark = pytest.mark.postgres


@pytest.mark.django_db
def test_healthz_answers_200_when_the_database_answers(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": True}}


@pytest.mark.django_db
def test_healthz_answers_503_when_the_database_does_not(client):
    with mock.patch("apps.core.views.connection.cursor", side_effect=OSError("down")):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] is False


@pytest.mark.django_db
def test_healthz_answers_503_when_the_broker_is_unreachable(client, settings):
    # Port 9 (discard) on loopback: nothing listens there.
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    from config.celery import app

    app.conf.broker_url = settings.CELERY_BROKER_URL
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = None
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": True, "broker": False}


@pytest.mark.django_db
@pytest.mark.skipif(
    not os.environ.get("DILIGENCE_TEST_REDIS_URL"), reason="needs a Redis (CI provides one)"
)
def test_healthz_answers_200_with_a_reachable_broker(client, settings):
    settings.CELERY_BROKER_URL = os.environ["DILIGENCE_TEST_REDIS_URL"]
    from config.celery import app

    app.conf.broker_url = settings.CELERY_BROKER_URL
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = None
    assert response.status_code == 200
    assert response.json()["checks"] == {"database": True, "broker": True}


@pytest.mark.django_db
def test_an_impossible_id_is_not_found_not_a_server_error(browser_as, api_as, people):
    huge = "50495773885108338688"
    assert browser_as("aude").get(f"/cases/{huge}/").status_code == 404
    assert api_as("aude").get(f"/api/v1/cases/{huge}/").status_code == 404
    assert api_as("aude").get(f"/api/v1/declared-specs/{huge}/").status_code == 404

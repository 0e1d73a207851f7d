"""Without a broker, "Verify now" answers at once and the check runs in the background."""

import threading

import pytest
from django.urls import reverse

from apps.audit import tasks
from apps.audit.models import ChainVerification
from apps.core import background
from tests.factories import make_case

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def test_verify_now_runs_the_check_in_the_background(priya, browser_as, settings, monkeypatch):
    settings.BACKGROUND_TASKS = True
    make_case(priya)
    threads = []
    original = tasks.chain_verification_run

    def recording(**kwargs):
        threads.append(threading.current_thread().name)
        return original(**kwargs)

    monkeypatch.setattr(tasks, "chain_verification_run", recording)
    try:
        response = browser_as("aude").post(reverse("audit:chain-verify"), {"next": "/cases/"})
        assert response.status_code == 302 and response["Location"] == "/cases/"
    finally:
        background.wait_for_all()

    assert threads and threads[0].startswith("background-task-")
    record = ChainVerification.objects.get()
    assert record.requested_by.username == "aude"
    page = browser_as("aude").get(reverse("audit:chain"))
    assert page.status_code == 200


def test_only_auditors_may_start_it(priya, browser_as, settings):
    settings.BACKGROUND_TASKS = True
    response = browser_as("priya").post(reverse("audit:chain-verify"))
    background.wait_for_all()
    assert response.status_code == 403
    assert not ChainVerification.objects.exists()

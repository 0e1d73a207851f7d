"""The harness re-sends a bundle it is unsure about: identical re-sends at once store it once.

Each request comes from its own thread and database connection, as from a harness
retrying over several connections; on SQLite and on PostgreSQL none answers 5xx.
"""

import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from apps.evidence.models import EvidenceBundle, EvidenceUpload
from tests.evidence.factories import bundle_for, make_token, serialise
from tests.factories import FULL_SPEC, make_case, make_offer

pytestmark = pytest.mark.postgres

URL = "/api/v1/evidence/"


@pytest.mark.django_db(transaction=True)
def test_ten_identical_resends_at_once_store_one_bundle(tariq, cpu_bundle, stored_files):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    issued = make_token(tariq, case, offer)
    raw = serialise(bundle_for(cpu_bundle, issued.record))
    barrier = threading.Barrier(10)
    responses = [None] * 10

    def send(index: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {issued.token}")
        try:
            barrier.wait(timeout=30)
            responses[index] = client.post(URL, data=raw, content_type="application/json")
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * 9 + [201], codes  # one stored it; the others were given it
    assert len({r.json()["id"] for r in responses}) == 1
    assert EvidenceBundle.objects.count() == 1
    assert EvidenceUpload.objects.count() == 1
    assert len(stored_files()) == 1

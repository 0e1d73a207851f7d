"""POST /api/v1/cases/<pk>/costs/imports/ and the Costs page with every bad bill file.

A bad file is refused whole with its reason, and nothing is stored: no import, no
month, no history row, no file.
"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.badinput.corpus import CSV, Payload
from tests.badinput.refusal import api_reason, assert_refused, stored_state
from tests.costs.factories import CLEAN, IDLE, bill_csv, make_budget
from tests.factories import make_case, make_offer

pytestmark = pytest.mark.postgres

VALID = bill_csv(("2026-09", CLEAN), ("2026-10", IDLE))
# A byte-order mark is how spreadsheet programs mark UTF-8: read, not refused (below).
REFUSED = {name: build(VALID) for name, build in CSV.items() if name != "utf8_bom"}


@pytest.fixture
def case(priya):
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    return case


def api_send(api_as, case):
    client = api_as("priya")  # signed in (its token made) before anything is snapshotted

    def send(payload: Payload):
        url = f"/api/v1/cases/{case.pk}/costs/imports/"
        return client.generic("POST", url, payload.body, content_type=payload.content_type)

    return send


def page_send(browser_as, case):
    client = browser_as("priya")

    def send(payload: Payload):
        upload = SimpleUploadedFile(payload.filename, payload.body, payload.content_type)
        return client.post(reverse("costs:import", args=[case.pk]), {"file": upload})

    return send


def page_reason(response) -> str:
    assert response.status_code in (200, 400, 413), response.status_code
    page = response.content.decode()
    assert "errorlist" in page or "refused" in page.lower(), page[:500]
    return page


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_bill_files_are_refused_by_the_api_and_nothing_is_stored(
    api_as, case, media_root, name
):
    assert_refused(
        REFUSED[name],
        send=api_send(api_as, case),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )


@pytest.mark.parametrize("name", ["empty", "truncated_mid_row", "utf16_with_bom", "amount_nan"])
def test_bad_bill_files_are_refused_on_the_page_and_nothing_is_stored(
    browser_as, case, media_root, name
):
    assert_refused(
        REFUSED[name],
        send=page_send(browser_as, case),
        snapshot=lambda: stored_state(media_root),
        reason=page_reason,
    )


def test_a_byte_order_mark_is_read_as_utf8(api_as, case):
    response = api_send(api_as, case)(CSV["utf8_bom"](VALID))
    assert response.status_code == 201, response.content[:300]
    assert response.json()["row_count"] == 2

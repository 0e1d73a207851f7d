"""No link leads a reader to a page they may not open.

Each demo person walks the demo from their dashboard and every case page,
following every link on the site (one page per URL shape: a list, a record).
A page linked for a reader answers; a page the reader's role may not open is
not linked for them (the page says who may instead). Nothing answers 5xx.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.cases.models import ProcurementCase
from tests.test_plain_language import _Reader, walk

SHAPE_LIMIT = 1  # one list and one record of each kind
DEMO_PEOPLE = ("priya", "lena", "tariq", "fiona", "aude", "admin")


def _walk(client: Client, start: list[str]) -> tuple[int, list[str]]:
    refused: list[str] = []
    pages = 0

    def visit(url, response):
        nonlocal pages
        pages += 1
        if response.status_code in (403, 404) or response.status_code >= 500:
            refused.append(f"{url} answered {response.status_code}")
            return None
        if response.status_code != 200 or getattr(response, "streaming", False):
            return None
        if response.get("Content-Type", "").split(";")[0] != "text/html":
            return None
        reader = _Reader()
        reader.feed(response.content.decode())
        return reader

    walk(client, start, visit, shape_limit=SHAPE_LIMIT)
    return pages, refused


@pytest.mark.whole_case
@pytest.mark.parametrize("username", DEMO_PEOPLE)
def test_no_link_leads_a_demo_reader_to_a_refusal(demo_once, db, username):
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    start = ["/dashboard/"] + [f"/cases/{case.pk}/" for case in ProcurementCase.objects.all()]
    pages, refused = _walk(client, start)
    assert pages > 20, f"the walk reached only {pages} pages"
    assert refused == [], "\n".join(refused)

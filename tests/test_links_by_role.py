"""No link leads a reader to a page they may not open.

Each demo person walks the demo from their dashboard and every case page,
following every link on the site (one page per URL shape: a list, a record).
A page linked for a reader answers; a page the reader's role may not open is
not linked for them (the page says who may instead). Nothing answers 5xx.
"""

import re
from collections import deque
from io import StringIO
from urllib.parse import urldefrag, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from apps.cases.models import ProcurementCase
from tests.test_plain_language import SKIP_PREFIXES, _Reader

SHAPE_LIMIT = 1
PAGE_LIMIT = 400
DEMO_PEOPLE = ("priya", "lena", "tariq", "aude", "admin")


def _shape(path: str) -> str:
    return re.sub(r"\d+", "N", path)


def _walk(client: Client, start: list[str]) -> tuple[int, list[str]]:
    queue = deque(start)
    seen, shapes, refused, pages = set(queue), {}, [], 0
    linked_from: dict[str, str] = {}
    while queue and pages < PAGE_LIMIT:
        url = queue.popleft()
        response = client.get(url)
        pages += 1
        if response.status_code in (403, 404) or response.status_code >= 500:
            refused.append(
                f"{url} answered {response.status_code} (linked from {linked_from.get(url)})"
            )
            continue
        if response.status_code != 200 or getattr(response, "streaming", False):
            continue
        if response.get("Content-Type", "").split(";")[0] != "text/html":
            continue
        reader = _Reader()
        reader.feed(response.content.decode())
        for href in reader.links:
            link = urldefrag(href)[0]
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not link.startswith("/"):
                continue
            if link.startswith(SKIP_PREFIXES) or link in seen:
                continue
            shape = _shape(parts.path)
            if shapes.get(shape, 0) >= SHAPE_LIMIT:
                continue
            shapes[shape] = shapes.get(shape, 0) + 1
            seen.add(link)
            linked_from[link] = url
            queue.append(link)
    return pages, refused


@pytest.fixture
def demo(db, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("seed_demo", stdout=StringIO())


@pytest.mark.slow
@pytest.mark.parametrize("username", DEMO_PEOPLE)
def test_no_link_leads_a_demo_reader_to_a_refusal(demo, username):
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    start = ["/dashboard/"] + [f"/cases/{case.pk}/" for case in ProcurementCase.objects.all()]
    pages, refused = _walk(client, start)
    assert pages > 20, f"the walk reached only {pages} pages"
    assert refused == [], "\n".join(refused)

"""What users and auditors read names no internal document, source file or stored slug.

The demo is walked as a browser would: from the dashboard, every link on every
page (pages, CSV and JSON exports, downloads that are text) is followed, as the
administrator, who may open every page, in English and in Chinese. The packet
of each demo case and the reminder e-mails are read too. None may say "seed",
"DESIGN", "§", a ``.py`` path, "harness-anchors", or show a snake_case slug
where a label belongs.
"""

import re
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.utils import timezone, translation

from apps.cases.models import ProcurementCase
from apps.casework.reminders import reminders_send
from apps.evidence.services import TOKEN_PREFIX
from apps.packets.document import packet_document
from apps.packets.signing import get_signer

INTERNAL = re.compile(r"\b[Ss]eed\b|DESIGN|§|\b[\w/]+\.py\b|harness-anchors")
# A stored value shown raw: lower-case words joined by underscores ("needs_negotiation").
SLUG = re.compile(r"(?<![\w./:=-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w./(=-])")
# Names that are spelled with an underscore in the world outside.
ALLOWED = {"x86_64"}
# A harness token is shown by its first characters ("dlh_tH91LBfT…") so people can tell
# tokens apart; random letters and digits after the prefix can look like a slug.
SHOWN_PREFIXES = (TOKEN_PREFIX,)
# Where a slug is the thing shown: a command line, a field of the API, a code sample.
VERBATIM_TAGS = {"code", "pre", "kbd", "samp", "script", "style", "textarea"}
SKIP_PREFIXES = ("/admin/", "/api/", "/static/", "/media/", "/i18n/", "/accounts/logout")
TEXT_TYPES = ("text/html", "text/csv", "text/plain", "application/json")
SHAPE_LIMIT = 2  # pages per URL shape (its path with numbers blanked): one list, one record
PAGE_LIMIT = 500
LANGUAGES = {"en": "en", "zh-hans": "zh-CN,zh;q=0.9"}


class _Reader(HTMLParser):
    """The text a reader sees (with the titles and labels a screen reader says) and links."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.links: list[str] = []
        self._verbatim = 0

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag in VERBATIM_TAGS:
            self._verbatim += 1
        if tag == "a" and values.get("href"):
            self.links.append(values["href"])
        for name in ("title", "alt", "aria-label", "placeholder"):
            if values.get(name):
                self.text.append(values[name])

    def handle_endtag(self, tag):
        if tag in VERBATIM_TAGS and self._verbatim:
            self._verbatim -= 1

    def handle_data(self, data):
        if not self._verbatim:
            self.text.append(data)


def _problems(where: str, text: str) -> list[str]:
    found = []
    for pattern, kind in ((INTERNAL, "internal reference"), (SLUG, "raw slug")):
        for match in pattern.finditer(text):
            if match[0] in ALLOWED or match[0].startswith(SHOWN_PREFIXES):
                continue
            start = max(match.start() - 50, 0)
            found.append(f"{where}: {kind} {match[0]!r} in …{text[start : match.end() + 50]!r}")
    return found


def _shape(path: str) -> str:
    return re.sub(r"\d+", "N", path)


def walk(client: Client, start: list[str], visit, *, shape_limit: int = SHAPE_LIMIT, **headers):
    """Open the site's own pages breadth-first from ``start``, ``shape_limit`` per URL shape.

    ``visit(url, response)`` reads each page and returns its ``_Reader`` when its links
    are to be followed (None otherwise).
    """
    queue = deque(start)
    seen, shapes, opened = set(queue), {}, 0
    while queue and opened < PAGE_LIMIT:
        url = queue.popleft()
        reader = visit(url, client.get(url, **headers))
        opened += 1
        for href in reader.links if reader is not None else ():
            link = urldefrag(href)[0]
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not link.startswith("/"):
                continue
            if link.startswith(SKIP_PREFIXES) or link in seen:
                continue
            shape = _shape(parts.path)
            if shapes.get(shape, 0) >= shape_limit:
                continue
            shapes[shape] = shapes.get(shape, 0) + 1
            seen.add(link)
            queue.append(link)


def _walk(client: Client, accept_language: str) -> tuple[int, list[str]]:
    problems: list[str] = []
    pages = 0

    def visit(url, response):
        nonlocal pages
        if response.status_code != 200 or getattr(response, "streaming", False):
            return None
        kind = response.get("Content-Type", "").split(";")[0]
        if kind not in TEXT_TYPES:
            return None
        pages += 1
        body = response.content.decode()
        if kind != "text/html":
            problems.extend(p for p in _problems(url, body) if "internal reference" in p)
            return None
        reader = _Reader()
        reader.feed(body)
        problems.extend(_problems(url, " ".join(reader.text)))
        return reader

    start = ["/dashboard/", "/cases/", "/vendors/", "/search/?q=H200", "/portfolio/"]
    walk(client, start, visit, HTTP_ACCEPT_LANGUAGE=accept_language)
    return pages, problems


@pytest.fixture
def demo(seeded_demo):
    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    return client


@pytest.mark.whole_case
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_of_the_demo_reads_plainly(demo, language):
    pages, problems = _walk(demo, LANGUAGES[language])
    assert pages > 60, f"the walk reached only {pages} pages"
    assert problems == [], "\n".join(problems[:40])


@pytest.mark.whole_case
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_demo_packets_and_reminders_read_plainly(demo, language):
    auditor = get_user_model().objects.get(username="aude")
    problems = []
    with translation.override(language):
        for case in ProcurementCase.objects.all():
            document = packet_document(
                case,
                number="DIL-2026-000001",
                requested_by=auditor,
                packet_signer=get_signer(),
                generated_at=timezone.now(),
            )
            reader = _Reader()
            reader.feed(document.html)
            problems += _problems(f"packet of {case}", " ".join(reader.text))
        mail.outbox.clear()
        reminders_send(today=timezone.localdate() + timezone.timedelta(days=3 * 365))
        assert mail.outbox, "no reminder was sent"
        for message in mail.outbox:
            text = f"{message.subject}\n{message.body}"
            problems += _problems(f"e-mail {message.subject!r}", text)
    assert problems == [], "\n".join(problems[:40])

"""The renderer reaches nothing but data: URIs and our own static files; user text is escaped."""

import pytest
from django.utils import timezone

from apps.packets.document import packet_document
from apps.packets.rendering import BASE_URL, StaticOnlyFetcher
from apps.packets.signing import get_signer
from tests.factories import make_case


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "https://example.com/style.css",
        "file:///etc/passwd",
        BASE_URL + "static/../../settings.py",
        BASE_URL + "media/packets/secret.pdf",
        "ftp://example.com/x",
    ],
)
def test_the_fetcher_refuses_everything_but_data_and_static(url):
    with pytest.raises(ValueError):
        StaticOnlyFetcher().fetch(url)


def test_the_fetcher_serves_data_uris_and_our_stylesheet():
    assert StaticOnlyFetcher().fetch("data:text/plain,hello").read() == b"hello"
    css = StaticOnlyFetcher().fetch(BASE_URL + "static/packets/packet.css")
    assert b"@page" in css.read()
    assert css.content_type == "text/css"


def test_user_text_is_escaped_in_the_packet(priya):
    case = make_case(priya, name='<img src="http://evil.example/x.png"> 采购')
    document = packet_document(
        case,
        number="DIL-2026-000001",
        requested_by=priya,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )
    assert "<img src" not in document.html
    assert "&lt;img src=&quot;http://evil.example/x.png&quot;&gt; 采购" in document.html

"""The one PDF renderer: WeasyPrint with a fetcher that cannot reach the network.

WeasyPrint has had server-side request forgery bugs, and packet content is
user text, so the fetcher answers only ``data:`` URIs and Diligence's own
static files; anything else is refused and logged, never fetched. Redirects
are never followed. Templates autoescape user text as everywhere else.
"""

import mimetypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from weasyprint import HTML, Attachment
from weasyprint.urls import URLFetcher, URLFetcherResponse

# A reserved, never-resolvable origin (RFC 6761) under which our static files
# are addressed while rendering; nothing under it is ever requested on a network.
BASE_URL = "https://packet.diligence.invalid/"


class StaticOnlyFetcher(URLFetcher):
    """Serves ``data:`` URIs and files found by Django's static finders; refuses the rest."""

    def __init__(self) -> None:
        super().__init__(allowed_protocols=("data",), allow_redirects=False, timeout=1)

    def fetch(self, url: str, headers=None) -> URLFetcherResponse:
        if url.startswith("data:"):
            return super().fetch(url, headers)
        static_prefix = BASE_URL + settings.STATIC_URL.lstrip("/")
        if url.startswith(static_prefix):
            relative = url[len(static_prefix) :].split("?")[0].split("#")[0]
            found = finders.find(relative) if ".." not in relative.split("/") else None
            if found:
                content_type = mimetypes.guess_type(found)[0] or "application/octet-stream"
                return URLFetcherResponse(
                    url, Path(found).read_bytes(), headers={"Content-Type": content_type}
                )
        raise ValueError(f"packet rendering does not fetch {url!r}")


@dataclass(frozen=True)
class PdfAttachment:
    name: str
    content: bytes
    description: str


def render_pdf(
    html: str,
    target: Path,
    *,
    attachments: Sequence[PdfAttachment] = (),
    on_laid_out: Callable[[int], None] | None = None,
) -> int:
    """Render ``html`` to a PDF file at ``target``; returns the page count.

    ``on_laid_out(pages)`` is called between layout and writing, the two long steps.
    """
    fetcher = StaticOnlyFetcher()
    document = HTML(string=html, base_url=BASE_URL, url_fetcher=fetcher).render()
    if on_laid_out is not None:
        on_laid_out(len(document.pages))
    files = [
        Attachment(
            string=item.content,
            name=item.name,
            description=item.description,
            relationship="Data",
            url_fetcher=fetcher,
        )
        for item in attachments
    ]
    document.write_pdf(target, attachments=files)
    return len(document.pages)

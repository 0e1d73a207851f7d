"""The signed demo packet, read as an auditor reads it: the executive summary on the page
after the cover, the contents after it, and every digest of the engineers' results whole."""

import re

import pytest
from django.contrib.auth import get_user_model
from pypdf import PdfReader

from apps.acceptance.models import AcceptanceAttachment
from tests.packets.factories import issue_packet
from tests.packets.pdftools import pdfsig, pdftotext

pytestmark = pytest.mark.whole_case


def test_the_summary_follows_the_cover_and_no_digest_is_cut(
    demo_case, django_capture_on_commit_callbacks, tmp_path
):
    priya = get_user_model().objects.get(username="priya")
    packet = issue_packet(priya, demo_case, django_capture_on_commit_callbacks)
    path = tmp_path / "packet.pdf"
    path.write_bytes(packet.file.read())
    assert pdfsig(path).valid

    # Page by page: pdftotext ends each page with a form feed.
    pages = pdftotext(path).split("\f")[: packet.page_count]
    assert len(pages) == packet.page_count
    assert "SIGNED AUDIT PACKET" in pages[0].upper()
    # Under the running header (the case and the packet's number), the summary's heading.
    assert "\n1. Executive summary\n" in pages[1]
    contents = next(n for n, text in enumerate(pages) if "\nContents\n" in text)
    assert contents > 1
    listed = [" ".join(line.split()) for line in pages[contents].splitlines() if line.strip()]
    # The contents list the summary first, at page 2.
    assert re.fullmatch(r"1\. Executive summary \.+ ?2", listed[listed.index("Contents") + 1])

    # Its entry there leads to it, as every other entry leads to its chapter.
    reader = PdfReader(path)
    page_of = {page.indirect_reference.idnum: n for n, page in enumerate(reader.pages)}
    targets = [
        page_of[annotation.get_object()["/Dest"][0].idnum]
        for annotation in reader.pages[contents].get("/Annots", [])
        if annotation.get_object().get("/Subtype") == "/Link"
    ]
    assert targets and targets[0] == 1 and targets == sorted(targets)

    # The engineers' results print each attachment's SHA-256 whole, on the page.
    attachments = AcceptanceAttachment.objects.filter(plan__case=demo_case, result__isnull=False)
    assert attachments
    printed = [digest for text in pages for digest in _digests(text)]
    for attachment in attachments:
        # Broken across lines where it must be, never cut at the page's edge.
        assert attachment.sha256 in printed, (attachment.sha256, printed)


def _digests(text: str) -> list[str]:
    """Each digest printed after "SHA-256", its lines put back together."""
    digests: list[str] = []
    for line in (line.strip() for line in text.splitlines()):
        started = re.search(r"SHA-256 ([0-9a-f]+)\)?$", line)
        if started:
            digests.append(started.group(1))
        elif digests and len(digests[-1]) < 64 and re.fullmatch(r"[0-9a-f]+\)?", line):
            digests[-1] += line.rstrip(")")
    return digests

"""Chapters laid out side by side make the same packet as laid out one after the other.

The serial path (one process: ``PACKET_RENDER_PROCESSES=1``) and the parallel
path (forked processes, each taking the next chapter, the heaviest first, so
a process's PDF holds its chapters out of the packet's order) lay out the same
chapter documents; the joined packets have the same pages, the same text, the
same page numbers, contents, links and structure, in the packet's order.
"""

import os

import pytest
from django.utils import timezone
from pypdf import PdfReader

from apps.packets import rendering
from apps.packets.document import packet_document
from apps.packets.rendering import layout_order, render_packet, render_processes
from apps.packets.signing import get_signer
from tests.packets.factories import make_packet_case
from tests.packets.pdftools import pdftotext

pytestmark = pytest.mark.whole_case


@pytest.mark.parametrize(
    ("weights", "order"),
    [
        ([5, 5, 5, 5], [0, 1, 2, 3]),  # alike: in the packet's order
        ([1, 10, 3, 10], [1, 3, 2, 0]),
        ([3], [0]),
    ],
)
def test_the_heaviest_chapters_are_laid_out_first(weights, order):
    assert layout_order(weights) == order


def test_the_number_of_processes_is_the_setting_or_the_cpus_we_may_use(settings, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    settings.PACKET_RENDER_PROCESSES = 0
    assert render_processes() == 3
    settings.PACKET_RENDER_PROCESSES = 1
    assert render_processes() == 1
    settings.PACKET_RENDER_PROCESSES = 4
    assert render_processes() == 4


@pytest.fixture
def document(priya):
    return packet_document(
        make_packet_case(priya),
        number="DIL-2026-000031",
        requested_by=priya,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )


START_WORKERS = rendering._start_workers


def _render(document, path, processes, monkeypatch):
    forked, laid_out = [], []

    def spy(htmls, order, targets):
        forked.append(len(targets))
        return START_WORKERS(htmls, order, targets)

    monkeypatch.setattr(rendering, "_start_workers", spy)
    pages = render_packet(
        document, path, processes=processes, on_chapter=lambda i, n: laid_out.append((i, n))
    )
    return pages, forked, laid_out


def _same_glyphs(text: str) -> str:
    return text.replace("\u2022", "\u00b7")


def _links(reader: PdfReader, page_index: int) -> list[int]:
    targets = []
    for annotation in reader.pages[page_index].get("/Annots", []):
        annotation = annotation.get_object()
        if annotation.get("/Subtype") == "/Link":
            targets.append(reader.get_page_number(annotation["/Dest"][0].get_object()))
    return targets


def test_parallel_and_serial_layouts_make_the_same_packet(document, tmp_path, monkeypatch):
    serial, parallel = tmp_path / "serial.pdf", tmp_path / "parallel.pdf"
    serial_pages, serial_forked, serial_chapters = _render(document, serial, 1, monkeypatch)
    parallel_pages, parallel_forked, parallel_chapters = _render(document, parallel, 2, monkeypatch)
    assert serial_forked == [] and parallel_forked == [2]

    # Every chapter reported once, with the same page count, whichever way.
    assert sorted(serial_chapters) == sorted(parallel_chapters)
    assert [i for i, _n in sorted(serial_chapters)] == list(range(len(document.chapters)))

    readers = PdfReader(serial), PdfReader(parallel)
    assert serial_pages == parallel_pages == len(readers[0].pages) == len(readers[1].pages)
    # A list's bullet (•) and a middle dot (·) are one glyph of the face: a PDF maps the glyph
    # back to whichever of the two its part met first, so they are read as one.
    assert _same_glyphs(pdftotext(serial)) == _same_glyphs(pdftotext(parallel))
    assert [o.title for o in readers[0].outline if not isinstance(o, list)] == [
        o.title for o in readers[1].outline if not isinstance(o, list)
    ]

    # Page numbers, the contents and its links are those of the whole packet.
    reader = readers[1]
    pages = [page.extract_text() for page in reader.pages]
    for index, text in enumerate(pages):
        assert f"Page {index + 1} of {parallel_pages}" in text, index
    # The executive summary follows the cover; the contents, after it, lead to it too.
    assert "1. Executive summary" in pages[1]
    at = next(index for index, text in enumerate(pages) if "Contents" in text.split("\n", 3)[:3])
    contents = pages[at]
    targets = _links(reader, at)
    listed = document.opening + document.chapters
    assert len(targets) == len(listed)
    for chapter, target in zip(listed, targets, strict=True):
        assert f"{chapter.number}. {chapter.title}" in pages[target]
        assert f"{chapter.title}" in contents
        assert str(target + 1) in contents.split(chapter.title, 1)[1].split("\n", 1)[0]

    # The structure tree follows the pages: its top-level elements in the packet's order.
    for packet in readers:
        page_of = {page.indirect_reference.idnum: n for n, page in enumerate(packet.pages)}
        (document_element,) = packet.root_object["/StructTreeRoot"]["/K"]
        kids = document_element.get_object()["/K"]
        firsts = [page_of[kid.get_object().raw_get("/Pg").idnum] for kid in kids]
        assert firsts == sorted(firsts) and firsts[-1] == len(packet.pages) - 1


def test_a_layout_process_that_fails_fails_the_packet(document, tmp_path, monkeypatch):
    def broken(htmls, target, report):
        raise RuntimeError("layout exploded")

    monkeypatch.setattr(rendering, "lay_out_run", broken)
    with pytest.raises(RuntimeError, match="layout exploded"):
        render_packet(document, tmp_path / "packet.pdf", processes=2)


def test_a_layout_process_that_dies_fails_the_packet(document, tmp_path, monkeypatch):
    def killed(htmls, target, report):
        os._exit(9)  # what the out-of-memory killer leaves

    monkeypatch.setattr(rendering, "lay_out_run", killed)
    with pytest.raises(RuntimeError, match="ended before its chapters were laid out"):
        render_packet(document, tmp_path / "packet.pdf", processes=2)

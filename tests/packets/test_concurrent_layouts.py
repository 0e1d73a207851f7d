"""Documents laid out at the same time, in threads of one process (the background
pool runs them so), each lay out every chapter of their own, and take consecutive
numbers (docs/rules/audit.md#packet-numbers).

Each layout shares its chapters out among forked processes through a counter in
shared memory. It was handed back to the process's shared heap as soon as the
processes were started, so the next layout started meanwhile was handed the
same memory: both layouts' processes counted in one counter, each skipped the
chapters the other took, and the packet failed ("A layout process ended before
its chapters were laid out"), its number unused for good.

Layout processes are forked from a process whose other threads go on: laying
out the front matter of another packet, reading the database. What a thread
holds as they are forked, they inherit held by a thread that is not there.
"""

import gc
import os
import threading

import pytest
from django.db import connection

from apps.cases.models import ProcurementCase
from apps.packets import rendering
from apps.packets.models import AuditPacket, PacketRequest
from apps.packets.rendering import ChapterLayout, render_packet
from apps.packets.services import packet_request_create
from tests.factories import make_case


def _chapter(n: int) -> str:
    return f'<html lang="en"><body><h1>Chapter {n}</h1><p>Text of chapter {n}.</p></body></html>'


def test_two_layouts_at_once_each_lay_out_every_chapter(tmp_path):
    # The second is started while the first one's processes are at work, as another
    # thread's layout would be.
    chapters = [_chapter(n) for n in range(8)]
    first = [tmp_path / "first-0.pdf", tmp_path / "first-1.pdf"]
    second = [tmp_path / "second-0.pdf", tmp_path / "second-1.pdf"]
    with (
        ChapterLayout(chapters, list(range(8)), first, None) as one,
        ChapterLayout(chapters, list(range(8)), second, None) as other,
    ):
        assert one.wait_for_pages() == other.wait_for_pages() == [1] * 8
        for layout in (one, other):
            laid_out = sorted(chapter.index for part in layout.wait() for chapter in part.chapters)
            assert laid_out == list(range(8))


class _Document:
    """The least a packet document is, for ``render_packet``: chapters and a front matter."""

    class Chapter:
        def __init__(self, n: int) -> None:
            self.html, self.weight, self.anchor = _chapter(n), 1, f"chapter-{n}"

    def __init__(self) -> None:
        self.chapters = [self.Chapter(n) for n in range(4)]
        self.attachments: list = []
        self.context = {"pdf_lang": "en"}

    def front_html(self, starts: list[int], total: int) -> str:
        # The cover and the contents, then one page of page numbers per page.
        pages = ["<section>Cover</section>", "<section>Contents</section>"]
        pages += [f"<section>Page {n} of {total}</section>" for n in range(1, total + 1)]
        return (
            '<html lang="en"><head><style>section { page-break-after: always }</style></head>'
            f"<body>{''.join(pages)}</body></html>"
        )


def test_a_layout_process_lost_is_laid_out_again_before_the_packet_fails(tmp_path, monkeypatch):
    lay_out_run, parent, lost = rendering.lay_out_run, os.getpid(), tmp_path / "lost"

    def killed_once(htmls, target, report):
        if os.getpid() != parent and not lost.exists():
            lost.touch()
            os._exit(9)  # what the out-of-memory killer leaves
        lay_out_run(htmls, target, report)

    monkeypatch.setattr(rendering, "lay_out_run", killed_once)
    assert render_packet(_Document(), tmp_path / "packet.pdf", processes=2) == 6
    assert lost.exists()


class _Finalised:
    """Garbage with a finaliser (a closed database connection, say), in a cycle."""

    def __init__(self, marker, parent: int) -> None:
        self.marker, self.parent, self.me = marker, parent, self

    def __del__(self) -> None:
        if os.getpid() != self.parent:
            self.marker.write_text("finalised in a layout process")


def test_garbage_this_process_holds_is_not_finalised_in_the_layout_processes(tmp_path, monkeypatch):
    # Another thread's garbage, still to be collected as the processes are forked, is
    # this process's to finalise: finalised in a layout process, it would take a lock
    # its owner held at the fork, or close a connection this process still uses.
    marker, held = tmp_path / "finalised", [_Finalised(tmp_path / "finalised", os.getpid())]
    lay_out_run, start = rendering.lay_out_run, rendering._RenderProcess.start

    def collected_first(htmls, target, report):
        gc.collect()  # in the layout process: whatever is garbage there is finalised
        lay_out_run(htmls, target, report)

    def start_once_garbage(process):
        held.clear()  # garbage from here on, left to the collector
        start(process)

    monkeypatch.setattr(rendering, "lay_out_run", collected_first)
    monkeypatch.setattr(rendering._RenderProcess, "start", start_once_garbage)
    chapters = [_chapter(n) for n in range(2)]
    paths = [tmp_path / "one.pdf", tmp_path / "two.pdf"]
    with ChapterLayout(chapters, [0, 1], paths, None) as layout:
        assert layout.wait_for_pages() == [1, 1]
        layout.wait()
    assert not marker.exists()


@pytest.mark.whole_case
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_ten_documents_issued_at_once_are_ten_packets_numbered_without_a_gap(people, settings):
    # Ten requests at once, each issuing its packet in its own thread (tasks run
    # inline, as the background pool runs them), each layout in two processes.
    priya = people["priya"]
    cases = [make_case(priya) for _ in range(10)]
    barrier, errors = threading.Barrier(len(cases)), []

    def issue(case: ProcurementCase) -> None:
        try:
            barrier.wait(timeout=30)
            packet_request_create(actor=priya, case=case)
        except Exception as error:  # reported below, with the others
            errors.append(error)
        finally:
            connection.close()

    settings.PACKET_RENDER_PROCESSES = 2
    threads = [threading.Thread(target=issue, args=(case,)) for case in cases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads), "a packet did not finish"
    assert errors == []
    requests = PacketRequest.objects.order_by("sequence")
    assert [r.error for r in requests if r.status != PacketRequest.Status.DONE] == []
    sequences = [r.sequence for r in requests]
    assert sequences == list(range(sequences[0], sequences[0] + 10))
    assert sorted(AuditPacket.objects.values_list("number", flat=True)) == [
        r.number for r in requests
    ]

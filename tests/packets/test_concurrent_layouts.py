"""Documents laid out at the same time, in threads of one process (the background
pool runs them so), each lay out every chapter of their own.

Each layout shares its chapters out among forked processes through a counter in
shared memory. It was handed back to the process's shared heap as soon as the
processes were started, so the next layout started meanwhile was handed the
same memory: both layouts' processes counted in one counter, each skipped the
chapters the other took, and the packet failed ("A layout process ended before
its chapters were laid out"), its number unused for good.
"""

import os

from apps.packets import rendering
from apps.packets.rendering import ChapterLayout, render_packet


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

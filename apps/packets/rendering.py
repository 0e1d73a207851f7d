"""The one PDF renderer: WeasyPrint with a fetcher that cannot reach the network.

WeasyPrint has had server-side request forgery bugs, and packet content is
user text, so the fetcher answers only ``data:`` URIs and Diligence's own
static files; anything else is refused and logged, never fetched. Redirects
are never followed. Templates autoescape user text as everywhere else.

A packet is laid out in parts (``render_packet``). Each chapter is a WeasyPrint
document of its own, laid out by one of a pool of forked processes, one per
CPU the worker may use (``PACKET_RENDER_PROCESSES``; 1 lays every chapter out
in the worker's own process: the same documents, the same pages). Each
process takes the next chapter as soon as it is done with one, the heaviest
first, so the processes finish together; each reports its chapters as they
are laid out, then writes them as one PDF, so they share their embedded fonts.
Once every chapter is counted, the front matter (cover and contents) is laid
out with each chapter's first page, and the page numbers ("Page 3 of 40") as
a layer of their own, while the processes write their PDFs; each PDF is read
back as soon as it is written. The parts are then joined with qpdf, each
chapter's pages in the packet's order: the numbers printed over the pages,
each entry of the contents linked to its chapter, the chapters' bookmarks kept.
A layout process that ends before reporting its chapters (killed from outside,
out of memory most likely) has the chapters laid out once more before the
packet fails: a failed packet leaves its number unused for good.

Every part is written as a tagged PDF, and the joined packet is one too: the
parts' structure trees are joined under one ``Document`` element with one
parent tree (``join_structure``), the page numbers are printed as artifacts,
and the packet declares its language and shows its title.
"""

import contextlib
import ctypes
import gc
import logging
import math
import mimetypes
import multiprocessing
import os
import queue
import signal
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.context import ForkContext, ForkProcess
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from weasyprint import HTML
from weasyprint.urls import URLFetcher, URLFetcherResponse

logger = logging.getLogger(__name__)

# A reserved, never-resolvable origin (RFC 6761) under which our static files
# are addressed while rendering; nothing under it is ever requested on a network.
BASE_URL = "https://packet.diligence.invalid/"
# WeasyPrint lays out in CSS pixels; PDF pages are measured in points.
POINTS_PER_PX = 0.75
# The front matter's length, first guessed (then checked once laid out): the cover,
# the contents, and the attached files at about this many a page.
FRONT_MATTER_PAGES = 2
ATTACHMENTS_A_PAGE = 55
POLL_SECONDS = 1.0

# Pango, HarfBuzz, fontconfig and GLib, under WeasyPrint, keep locks of their own. A
# process forked while another thread of this one holds one inherits it held, by a
# thread that does not exist there, and waits on it for ever. So in this process
# WeasyPrint lays out only under this lock, and layout processes are forked under it.
# (WeasyPrint holds the interpreter's lock while it lays out: threads laying out at
# the same time in one process do not finish sooner.)
_IN_PROCESS = threading.RLock()


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


def render_pdf(html: str, target: Path) -> int:
    """Render ``html`` as one document to a PDF file at ``target``; returns the page count."""
    return render_part(html, str(target))[0]


# --- a packet in parts -------------------------------------------------------------

# A link out of a part to an anchor in another: (page index in the part, anchor, box in CSS px).
Link = tuple[int, str, tuple[float, float, float, float]]


def render_part(html: str, target: str) -> tuple[int, list[Link]]:
    """Lay out one part and write it to ``target``; returns its page count and the links
    to anchors it does not hold (the joined packet resolves them)."""
    with _IN_PROCESS:
        document = HTML(string=html, base_url=BASE_URL, url_fetcher=StaticOnlyFetcher()).render()
        links = _outward_links(document)
        document.write_pdf(target, pdf_tags=True)
    return len(document.pages), links


def render_front(html: str, target: str) -> tuple[int, list[Link], dict[str, int]]:
    """Lay out the front matter and write it to ``target``: its page count, every link of
    it (to a chapter, or to the summary it holds itself: the joined packet places each)
    and the anchors it holds, at their page index."""
    with _IN_PROCESS:
        document = HTML(string=html, base_url=BASE_URL, url_fetcher=StaticOnlyFetcher()).render()
        links = _outward_links(document, every=True)
        anchors: dict[str, int] = {}
        for index, page in enumerate(document.pages):
            for name in page.anchors:
                # A section over several pages holds its anchor on each: the first counts.
                anchors.setdefault(name, index)
        document.write_pdf(target, pdf_tags=True)
    return len(document.pages), links, anchors


def render_processes() -> int:
    """How many chapters are laid out at once: the setting, else one per CPU we may use."""
    configured = settings.PACKET_RENDER_PROCESSES
    if configured > 0:
        return configured
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def layout_order(weights: Sequence[int]) -> list[int]:
    """The order the layout processes take chapters in (by index): the heaviest first.

    Each process takes the next chapter as soon as it is done with one, so the
    last to be laid out are the light ones, and the processes finish together.
    """
    return sorted(range(len(weights)), key=lambda index: -weights[index])


def render_packet(
    document,
    target: Path,
    *,
    processes: int | None = None,
    on_chapter: Callable[[int, int], None] | None = None,
    meanwhile: Callable[[Callable[[], None]], None] | None = None,
) -> int:
    """Lay out ``document`` (a ``PacketDocument``) in parts and join them at ``target``.

    ``on_chapter(index, pages)`` is called as each chapter is laid out (in the
    order they finish). ``meanwhile(poll)`` runs while the chapters are laid
    out in other processes (before they are, with one process); it calls
    ``poll()`` now and then, which reports the chapters laid out so far. The
    front matter is laid out once every chapter is counted, while the layout
    processes write their PDFs. Returns the packet's page count.
    """
    processes = render_processes() if processes is None else processes
    chapters = document.chapters
    with tempfile.TemporaryDirectory(prefix="parts-", dir=target.parent) as tmp:
        parts = Path(tmp)
        runs = max(1, min(processes, len(chapters)))
        front_path = parts / "front.pdf"
        waited: list[bool] = []  # whether ``meanwhile`` ran to its end

        def meanwhile_once(poll: Callable[[], None]) -> None:
            if meanwhile is not None and not waited:
                meanwhile(poll)
            waited.append(True)

        try:
            front_pages, starts, total, front_links, front_anchors, written = _lay_out(
                document, parts / "first", front_path, runs, on_chapter, meanwhile_once
            )
        except LayoutProcessLost:
            # A process killed from outside (out of memory, an operator): the chapters
            # are laid out once more before the packet fails, as its number would be
            # left unused for good.
            logger.warning("A layout process was lost; laying the chapters out again")
            front_pages, starts, total, front_links, front_anchors, written = _lay_out(
                document, parts / "again", front_path, runs, on_chapter, meanwhile_once
            )
        # Each chapter's pages in the PDF its process wrote, in the packet's order; the
        # links out of each chapter, and the anchors each holds, at the packet's pages.
        placed: dict[int, tuple[Part, list[int]]] = {}
        outward = [link for link in front_links if link[0] < front_pages]
        anchors: dict[str, int] = dict(front_anchors)
        for part in written:
            page = 0
            for chapter in part.chapters:
                first = starts[chapter.index] - 1
                placed[chapter.index] = (part, list(range(page, page + chapter.pages)))
                page += chapter.pages
                outward += [(first + index, anchor, box) for index, anchor, box in chapter.links]
                anchors.update({name: first + index for name, index in chapter.anchors.items()})
        anchors.update(
            {chapter.anchor: start - 1 for chapter, start in zip(chapters, starts, strict=True)}
        )
        join_parts(
            front_path,
            front_pages,
            [(placed[index][0].reader, placed[index][1]) for index in range(len(chapters))],
            target,
            links=outward,
            anchors=anchors,
            lang=document.context.get("pdf_lang", "en"),
        )
    return total


def _lay_out(
    document,
    folder: Path,
    front_path: Path,
    runs: int,
    on_chapter: Callable[[int, int], None] | None,
    meanwhile: Callable[[Callable[[], None]], None],
) -> tuple[int, list[int], int, list[Link], dict[str, int], list["Part"]]:
    """Lay out the chapters in ``runs`` PDFs under ``folder``, and the front matter at
    ``front_path``; returns the front matter's length, each chapter's first page, the
    packet's page count, the front matter's links out and the chapters' PDFs."""
    chapters = document.chapters
    folder.mkdir()
    with ChapterLayout(
        [chapter.html for chapter in chapters],
        layout_order([chapter.weight for chapter in chapters]),
        [folder / f"chapters-{n:02d}.pdf" for n in range(runs)],
        on_chapter,
    ) as layout:
        meanwhile(layout.poll)
        counts = layout.wait_for_pages()
        # The front matter and the page numbers: one document laid out once every
        # chapter is counted, and again should the front matter not be as long as
        # assumed; meanwhile the layout processes write their chapters.
        listed = len(document.attachments) + 10  # the heading and the note take some room
        # A chapter printed after the cover (the summary) is guessed a page long.
        opening = len(getattr(document, "opening", ()))
        front_pages = FRONT_MATTER_PAGES + opening + math.ceil(listed / ATTACHMENTS_A_PAGE)
        for _attempt in range(3):
            starts = _first_pages(front_pages, counts)
            total = front_pages + sum(counts)
            laid_out, front_links, front_anchors = render_front(
                document.front_html(starts, total), str(front_path)
            )
            if laid_out == front_pages + total:
                break
            front_pages = laid_out - total  # a long contents or cover: again with its length
        else:
            raise RuntimeError("The front matter's length does not settle.")
        # The summary after the cover is in the front matter: its links land there too.
        held = {name: index for name, index in front_anchors.items() if index < front_pages}
        return front_pages, starts, total, front_links, held, layout.wait()


def _first_pages(front_pages: int, counts: list[int]) -> list[int]:
    starts, page = [], front_pages + 1
    for count in counts:
        starts.append(page)
        page += count
    return starts


@dataclass(frozen=True)
class LaidOut:
    """A chapter in the PDF of the process that laid it out: its index in the packet,
    its pages, its links to anchors it does not hold and the anchors it holds (each
    at a page index in the chapter)."""

    index: int
    pages: int
    links: list[Link]
    anchors: dict[str, int]


def lay_out_run(
    htmls: Iterable[tuple[int, str]], target: str, report: Callable[[tuple], None]
) -> None:
    """Lay out each chapter it is handed as a document of its own, then write them as one PDF.

    ``htmls`` hands out ``(index, html)`` pairs: in a layout process, the next
    chapter no process has taken yet. ``report`` receives ``("chapter", index,
    pages)`` as each chapter is laid out, then ``("run", target, chapters)``
    (each a ``LaidOut``, in the PDF's order) once the PDF is written; a
    process handed no chapter writes none.
    """
    documents, chapters = [], []
    for index, html in htmls:
        document = HTML(string=html, base_url=BASE_URL, url_fetcher=StaticOnlyFetcher()).render()
        report(("chapter", index, len(document.pages)))
        documents.append(document)
        anchors = {
            name: page_index
            for page_index, page in enumerate(document.pages)
            for name in page.anchors
        }
        chapters.append(LaidOut(index, len(document.pages), _outward_links(document), anchors))
    if documents:
        combined = documents[0].copy([page for document in documents for page in document.pages])
        combined.write_pdf(target, pdf_tags=True)
    report(("run", target, chapters))


def _outward_links(document, *, every: bool = False) -> list[Link]:
    """Remove, and return, the links to anchors ``document`` does not hold (``every``:
    all its links to anchors, the ones it holds too)."""
    anchors = set() if every else {name for page in document.pages for name in page.anchors}
    outward: list[Link] = []
    for index, page in enumerate(document.pages):
        kept = []
        for link in page.links:
            kind, anchor, box = link[0], link[1], link[2]
            if kind == "internal" and anchor not in anchors:
                outward.append((index, anchor, tuple(box)))
            else:
                kept.append(link)
        page.links = kept
    return outward


class LayoutProcessLost(RuntimeError):
    """A layout process ended (killed, most likely) before reporting all it was to."""


class Part:
    """The PDF a process wrote, read back as soon as it is written (while other
    chapters may still be laid out), ready to join."""

    def __init__(self, target: str, chapters: list[LaidOut]) -> None:
        import pikepdf

        self.chapters = chapters
        self.reader = pikepdf.Pdf.open(target) if chapters else None


class ChapterLayout:
    """Chapters being laid out: by forked processes, each taking the next chapter in
    ``order`` as it is done with one, or, with one process, in this process, in the
    packet's order, once waited for."""

    def __init__(
        self,
        htmls: list[str],
        order: list[int],
        paths: list[Path],
        on_chapter: Callable[[int, int], None] | None,
    ) -> None:
        self.htmls, self.order = htmls, order
        self.targets = [str(path) for path in paths]
        self.on_chapter = on_chapter
        self.counts: list[int | None] = [None] * len(htmls)
        self.parts: dict[str, Part] = {}
        self.workers: list = []
        self.messages = None
        self.taken = None

    def __enter__(self) -> "ChapterLayout":
        if len(self.targets) > 1:
            self.workers, self.messages, self.taken = _start_workers(
                self.htmls, self.order, self.targets
            )
        return self

    def __exit__(self, *exc) -> None:
        for worker in self.workers:
            if worker.is_alive():
                worker.kill()
            worker.join()
        if self.messages is not None:
            self.messages.close()
        # Only now, with every process ended and what they reported read, is the
        # counter's shared memory given back (``_start_workers``).
        self.taken = None

    def _received(self, message: tuple) -> None:
        if message[0] == "chapter":
            _kind, index, pages = message
            self.counts[index] = pages
            if self.on_chapter is not None:
                self.on_chapter(index, pages)
        elif message[0] == "run":
            self.parts[message[1]] = Part(message[1], message[2])
        else:
            raise RuntimeError(f"A chapter could not be laid out: {message[1]}")

    def poll(self) -> None:
        """Take in what the layout processes reported so far, without waiting."""
        while self.messages is not None:
            try:
                message = self.messages.get_nowait()
            except queue.Empty:
                return
            self._received(message)

    def wait_for_pages(self) -> list[int]:
        """Each chapter's page count, once every chapter is laid out (their PDFs may
        still be being written)."""
        if self.messages is None:
            with _IN_PROCESS:
                lay_out_run(enumerate(self.htmls), self.targets[0], self._received)
        self._wait_until(lambda: None not in self.counts)
        return [count for count in self.counts if count is not None]

    def wait(self) -> list[Part]:
        """The PDFs the processes wrote, read back, once every one is."""
        self._wait_until(lambda: len(self.parts) == len(self.targets))
        return [self.parts[target] for target in self.targets if self.parts[target].chapters]

    def _wait_until(self, done: Callable[[], bool]) -> None:
        while not done():
            assert self.messages is not None
            try:
                message = self.messages.get(timeout=POLL_SECONDS)
            except queue.Empty:
                codes = [worker.exitcode for worker in self.workers]
                if None in codes and all(code in (None, 0) for code in codes):
                    continue  # still at work
                self.poll()  # what a process sent just before it ended
                if not done():
                    raise LayoutProcessLost(
                        f"A layout process ended before its chapters were laid out "
                        f"(exit codes {codes})."
                    ) from None
                return
            self._received(message)


_warmed_up = False


def warm_up() -> None:
    """Load the fonts and the stylesheet in this process once (a worker keeps them).

    Done before forking, so every layout process starts with them loaded
    instead of loading them again, each on its own.
    """
    global _warmed_up
    with _IN_PROCESS:
        if _warmed_up:
            return
        stylesheet = BASE_URL + settings.STATIC_URL.lstrip("/") + "packets/packet.css"
        HTML(
            string=f'<html lang="zh-CN"><link rel="stylesheet" href="{stylesheet}">'
            '<p>Warm 预热 <b>粗体 bold</b> <span class="digest">0a</span></p></html>',
            base_url=BASE_URL,
            url_fetcher=StaticOnlyFetcher(),
        ).write_pdf()
        _warmed_up = True


def _start_workers(htmls: list[str], order: list[int], targets: list[str]):
    """A forked process for each PDF to write, the queue they report on, and the counter
    of the chapters they share out (in ``order``, each taken once).

    The counter lives in memory shared with the processes, allocated from this
    process's shared heap: the caller keeps it referenced until they have
    ended. Released sooner, its block goes back to the heap while they still
    count in it, and the next layout started here (another packet laid out at
    the same time, in another thread) is handed the same block: both layouts'
    processes then count in one counter, and each skips chapters the other took.

    The processes are forked while no thread of this one lays out (``_IN_PROCESS``),
    and with every object this process holds out of their garbage collector's
    reach: what another thread left to be collected (a closed database
    connection, say) would otherwise be finalised in them, in a library whose
    lock that thread may have held as they were forked, or over a connection
    this process still uses.
    """
    with _IN_PROCESS:
        warm_up()
        gc.freeze()
        try:
            return _fork_workers(htmls, order, targets)
        finally:
            gc.unfreeze()


def _fork_workers(htmls: list[str], order: list[int], targets: list[str]):
    context = _RenderContext()
    messages = context.Queue()
    taken = context.Value("i", 0)  # how many chapters of ``order`` are taken
    workers = [
        context.Process(
            target=_run_worker,
            args=(htmls, order, taken, target, messages, os.getpid()),
            daemon=True,
        )
        for target in targets
    ]
    try:
        for worker in workers:
            worker.start()
    except BaseException:
        for worker in workers:
            if worker.is_alive():
                worker.kill()
        raise
    return workers, messages, taken


def _taken_in_turn(htmls: list[str], order: list[int], taken) -> Iterator[tuple[int, str]]:
    """The chapters of ``order`` no process has taken yet, one at a time, as this one is
    ready for the next."""
    while True:
        with taken.get_lock():
            position = taken.value
            taken.value = position + 1
        if position >= len(order):
            return
        yield order[position], htmls[order[position]]


def _run_worker(htmls, order, taken, target: str, messages, parent: int) -> None:
    _render_worker_started(parent)
    try:
        lay_out_run(_taken_in_turn(htmls, order, taken), target, messages.put)
    except Exception as error:  # the parent must hear of it, whatever it was
        logger.exception("Laying out chapters failed")
        messages.put(("error", f"{type(error).__name__}: {error}"))


class _RenderProcess(ForkProcess):
    """A forked layout process, allowed under a Celery worker's (daemonic) pool process.

    multiprocessing refuses children to daemonic processes because they would
    outlive it; these end with their chapters laid out, and with their parent if
    it is killed (``_render_worker_started``).
    """

    def start(self) -> None:
        current = multiprocessing.current_process()
        config = current._config  # type: ignore[attr-defined]
        daemon = config.get("daemon")
        config["daemon"] = False
        try:
            super().start()
        finally:
            config["daemon"] = daemon


class _RenderContext(ForkContext):
    Process = _RenderProcess


PR_SET_PDEATHSIG = 1


def _render_worker_started(parent: int) -> None:
    # Linux: die with the parent (a worker killed mid-render leaves no layout running).
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before we could ask to follow it
        os._exit(1)
    # A Celery pool process's signal handlers are its own, not the layout's.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, signal.SIG_DFL)


def join_parts(
    front: Path,
    front_pages: int,
    chapters: Sequence[tuple[Any, list[int]]],
    target: Path,
    *,
    links: list[Link],
    anchors: dict[str, int],
    lang: str,
) -> None:
    """One PDF: the first ``front_pages`` pages of ``front``, then each chapter's pages.

    ``chapters`` are, in the packet's order, the opened PDF that holds the chapter
    and the indexes of its pages there (a PDF may hold several chapters, in any
    order). The rest of ``front`` is the page-number layer, a page for each page
    of the packet, printed over them. ``links`` point at ``anchors`` (each
    anchor's page index). The result is tagged: one structure tree over every
    page, in language ``lang``.

    The parts are joined by qpdf (through pikepdf): it copies each part's objects
    once, and an object copied again later (a structure element's page, a link's
    annotation) is the copy already made, so the parts' trees land on the pages
    already copied.
    """
    import pikepdf
    from pikepdf import Array, Dictionary, Name

    numbers = pikepdf.Pdf.open(front)
    sources = [(numbers, list(range(front_pages))), *chapters]
    out = pikepdf.Pdf.new()
    for pdf, _pages in sources:
        # Parents are set again once joined; a part's own would drag its whole tree
        # (and the pages no one took) into the packet.
        _forget_parents(pdf)
    for pdf, pages in sources:
        for index in pages:
            out.pages.append(pdf.pages[index])
    layer = numbers.pages[front_pages:]
    if len(layer) != len(out.pages):
        raise RuntimeError(f"{len(layer)} page numbers for {len(out.pages)} pages.")
    for page, numbered in zip(out.pages, layer, strict=True):
        _print_over(out, page, numbered, numbers)
    join_structure(out, sources)
    _join_outlines(out, sources)
    # WeasyPrint gives a link a box per piece of it (the line, its text, its leader): one
    # annotation per entry, over them all.
    boxes: dict[tuple[int, str], tuple[float, float, float, float]] = {}
    for page_index, anchor, (x0, y0, x1, y1) in links:
        if anchor in anchors:
            a0, b0, a1, b1 = boxes.get((page_index, anchor), (x0, y0, x1, y1))
            boxes[page_index, anchor] = (min(a0, x0), min(b0, y0), max(a1, x1), max(b1, y1))
    for (page_index, anchor), box in boxes.items():
        page = out.pages[page_index]
        height = float(page.mediabox[3])
        left, top, right, bottom = (value * POINTS_PER_PX for value in box)
        annotation = out.make_indirect(
            Dictionary(
                Type=Name.Annot,
                Subtype=Name.Link,
                Rect=Array([left, height - bottom, right, height - top]),
                Border=Array([0, 0, 0]),
                Dest=Array([out.pages[anchors[anchor]].obj, Name.Fit]),
            )
        )
        if "/Annots" not in page.obj:
            page.obj.Annots = out.make_indirect(Array())
        page.obj.Annots.append(annotation)
    if "/Info" in numbers.trailer:
        out.trailer.Info = out.copy_foreign(numbers.trailer.Info)
    root = out.Root
    root.Lang = pikepdf.String(lang)
    root.MarkInfo = Dictionary(Marked=True)
    # A reader's title bar shows the packet's title (number and case), not the file name.
    root.ViewerPreferences = Dictionary(DisplayDocTitle=True)
    out.save(target, object_stream_mode=pikepdf.ObjectStreamMode.generate)


def _forget_parents(pdf) -> None:
    """Drop every structure element's parent (``/P``) in an opened part."""
    from pikepdf import Dictionary

    for obj in pdf.objects:
        # A structure element has a type (/S) and a parent (/P); an annotation's /P is
        # its page, and it has no /S.
        if isinstance(obj, Dictionary) and "/S" in obj and "/P" in obj and "/Subtype" not in obj:
            del obj["/P"]


def _print_over(out, page, numbered, numbers) -> None:
    """Print a page of the page-number layer over ``page``, as one artifact.

    Laid out as tagged content, its marks would number their content from 0
    again, over the marks of the page it is printed on; a page number is no
    part of the text (PDF 1.7, 14.8.2.2), so it is unmarked and marked as an artifact.
    """
    import pikepdf
    from pikepdf import Name

    operations = [
        instruction
        for instruction in pikepdf.parse_content_stream(numbered)
        if str(instruction.operator) not in ("BDC", "BMC", "EMC")
    ]
    numbered.obj.Contents = numbers.make_stream(pikepdf.unparse_content_stream(operations))
    form = out.copy_foreign(numbered.as_form_xobject())
    name = page.add_resource(form, Name.XObject, prefix="Fx")
    page.contents_add(out.make_stream(b"q\n"), prepend=True)
    page.contents_add(
        out.make_stream(b"\nQ\n/Artifact BMC q " + bytes(str(name), "ascii") + b" Do Q EMC\n")
    )


def join_structure(out, sources) -> None:
    """One structure tree for the joined packet, from each part's tree.

    ``sources`` are the opened parts the pages were appended from, in order,
    each with the indexes of the pages taken from it (a part may come more than
    once). Each part's top-level elements on pages taken become children of one
    ``Document`` element, in the order the pages were taken; each page's
    marks (``/StructParents``) and each link's (``/StructParent``) get a new,
    packet-wide key in a new parent tree.
    """
    from pikepdf import Array, Dictionary, Name

    top_level = Array()
    document = out.make_indirect(Dictionary(Type=Name.StructElem, S=Name.Document, K=top_level))
    nums = Array()
    parent_tree = out.make_indirect(Dictionary(Nums=nums))
    tree_root = out.make_indirect(
        Dictionary(Type=Name.StructTreeRoot, K=Array([document]), ParentTree=parent_tree)
    )
    document.P = tree_root
    offset, keys_of = 0, {}
    for pdf, pages in sources:
        part_tree = pdf.Root.StructTreeRoot
        if id(pdf) not in keys_of:  # a PDF holding several chapters: read once
            keys_of[id(pdf)] = _number_tree(part_tree.ParentTree)
        part_keys = keys_of[id(pdf)]
        taken_pages = {pdf.pages[index].obj.objgen for index in pages}
        for kid in _kids(_first_element(part_tree)):
            if "/Pg" in kid and kid.Pg.objgen in taken_pages:
                top_level.append(out.copy_foreign(kid))
        for position, index in enumerate(pages):
            page = out.pages[offset + position].obj
            old = pdf.pages[index].obj.get("/StructParents")
            if old is None or int(old) not in part_keys:
                if "/StructParents" in page:
                    del page["/StructParents"]
                continue
            page.StructParents = len(nums) // 2
            # A page's marks, each the element (copied with its tree) it belongs to.
            marks = Array(
                out.copy_foreign(mark) if mark.is_indirect else mark for mark in part_keys[int(old)]
            )
            nums.extend(Array([len(nums) // 2, marks]))
        offset += len(pages)
    _link_parents(out, document, tree_root, nums)
    out.Root.StructTreeRoot = tree_root


def _join_outlines(out, sources) -> None:
    """Each part's bookmarks, in the packet's order, pointing at the packet's pages."""
    from pikepdf import OutlineItem

    offset = 0
    with out.open_outline() as outline:
        for pdf, pages in sources:
            page_of = {pdf.pages[index].obj.objgen: offset + n for n, index in enumerate(pages)}
            with pdf.open_outline() as part:
                for item in part.root:
                    copied = _outline_item(item, page_of, OutlineItem)
                    if copied is not None:
                        outline.root.append(copied)
            offset += len(pages)


def _outline_item(item, page_of, OutlineItem):
    destination = item.destination
    if destination is None or len(destination) == 0 or not hasattr(destination[0], "objgen"):
        return None
    page = page_of.get(destination[0].objgen)
    if page is None:
        return None
    copied = OutlineItem(item.title, page)
    for child in item.children:
        kept = _outline_item(child, page_of, OutlineItem)
        if kept is not None:
            copied.children.append(kept)
    return copied


def _number_tree(tree) -> dict:
    """A number tree's entries (flat or with kids), by key."""
    entries = {}
    nums = tree.get("/Nums", [])
    for index in range(0, len(nums), 2):
        entries[int(nums[index])] = nums[index + 1]
    for kid in tree.get("/Kids", []):
        entries.update(_number_tree(kid))
    return entries


def _kids(element) -> list:
    from pikepdf import Array

    kids = element.get("/K")
    if kids is None:
        return []
    return list(kids) if isinstance(kids, Array) else [kids]


def _first_element(tree_root):
    return _kids(tree_root)[0]


def _link_parents(out, document, tree_root, nums) -> None:
    """Point each element at its parent, and give each link annotation still on its
    page a key in the parent tree; drop references to annotations no page shows."""
    from pikepdf import Array, Dictionary

    on_pages = {}
    for page in out.pages:
        for annotation in page.obj.get("/Annots", []):
            if annotation.is_indirect:
                on_pages[annotation.objgen] = page.obj
                if "/StructParent" in annotation:
                    del annotation["/StructParent"]
    pages_keys = len(nums) // 2
    stack, visited = [(document, tree_root)], set()
    while stack:
        element, parent = stack.pop()
        visited.add(element.objgen)
        element.P = parent
        kept = Array()
        for kid in _kids(element):
            if isinstance(kid, Dictionary) and kid.get("/Type") == "/OBJR":
                target = kid.get("/Obj")
                if target is None or target.objgen not in on_pages:
                    continue
                target.StructParent = len(nums) // 2
                nums.extend([len(nums) // 2, element])
                kid.Pg = on_pages[target.objgen]
            elif (
                isinstance(kid, Dictionary)
                and kid.get("/Type", "/StructElem") == "/StructElem"
                and "/S" in kid
            ):
                stack.append((kid, element))
            kept.append(kid)
        if isinstance(element.get("/K"), Array) or len(kept) != 1:
            element.K = kept
        else:
            element.K = kept[0]
    # Marks outside the tree (a running header's): kept under the document, as
    # WeasyPrint leaves them in a part of its own.
    for index in range(pages_keys):
        for ref in nums[2 * index + 1]:
            if isinstance(ref, Dictionary) and ref.is_indirect and ref.objgen not in visited:
                ref.P = document

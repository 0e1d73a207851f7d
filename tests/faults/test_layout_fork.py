"""Layout processes are forked only while no thread of this process lays out.

WeasyPrint's libraries hold locks of their own while a thread lays out: a process
forked then would wait for ever on one (docs/rules/audit.md#packet-numbers). This
test forks beside a thread held inside a layout, so it runs in the fault step, in a
process of its own: in the shared test processes, threads other tests leave running
(live servers, storage and webhook servers) may hold their own locks at the fork,
which is not what it checks.
"""

import threading
import time

import pytest

from apps.packets import rendering
from apps.packets.rendering import ChapterLayout, render_part

pytestmark = pytest.mark.faults


def _chapter(n: int) -> str:
    return f'<html lang="en"><body><h1>Chapter {n}</h1><p>Text of chapter {n}.</p></body></html>'


def test_layout_processes_are_not_forked_while_another_thread_lays_out(tmp_path, monkeypatch):
    # WeasyPrint's libraries hold locks of their own while a thread lays out: a process
    # forked then would wait for ever on one.
    inside, release, forked = threading.Event(), threading.Event(), []
    outward_links, start = rendering._outward_links, rendering._RenderProcess.start

    def laying_out(document):
        inside.set()
        release.wait(timeout=30)
        return outward_links(document)

    def fork(process):
        forked.append(time.monotonic())
        start(process)

    monkeypatch.setattr(rendering, "_outward_links", laying_out)
    monkeypatch.setattr(rendering._RenderProcess, "start", fork)
    rendering.warm_up()
    front = threading.Thread(target=render_part, args=(_chapter(0), str(tmp_path / "front.pdf")))
    front.start()
    assert inside.wait(timeout=30)
    counts = []

    def chapters_laid_out() -> None:
        chapters = [_chapter(n) for n in range(2)]
        paths = [tmp_path / "one.pdf", tmp_path / "two.pdf"]
        with ChapterLayout(chapters, [0, 1], paths, None) as layout:
            counts.append(layout.wait_for_pages())
            layout.wait()

    chapters = threading.Thread(target=chapters_laid_out)
    chapters.start()
    time.sleep(0.5)
    assert forked == []  # waiting for the other thread's layout
    released = time.monotonic()
    release.set()
    front.join(timeout=180)
    chapters.join(timeout=180)  # laid out on a busy machine
    assert forked and forked[0] >= released
    assert counts == [[1, 1]]

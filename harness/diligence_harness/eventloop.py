"""Event-loop settings that keep the client's own timing error small.

Measured on a 2-core VM against the loopback mock (benchmarks/harness_accuracy.py):
- Python's cyclic garbage collector pauses the loop for milliseconds once a cell
  has allocated a few hundred thousand objects; with it off during a cell the
  mean TTFT error at 256 streams roughly halved. It is switched off only inside
  the measured window and a collection runs right after.
- Busy polling (never sleeping in epoll) removes the wake-up latency of an idle
  CPU, which on a VM is tens to hundreds of microseconds per event, at the price
  of one fully used core. Off by default; `--busy-poll` turns it on.
"""

import asyncio
import contextlib
import gc
import selectors
import time
from collections.abc import Coroutine, Iterator


class BusyPollSelector(selectors.DefaultSelector):
    """A selector that polls with a zero timeout until something is ready or time is up."""

    def select(self, timeout: float | None = None):
        if timeout is not None and timeout <= 0:
            return super().select(0)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            ready = super().select(0)
            if ready or (deadline is not None and time.monotonic() >= deadline):
                return ready


def run(coroutine: Coroutine, busy_poll: bool = False):
    """asyncio.run, optionally on a busy-polling selector loop."""
    if not busy_poll:
        return asyncio.run(coroutine)
    loop = asyncio.SelectorEventLoop(BusyPollSelector())
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic-GC pauses inside a measured window; collect once it is over."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()

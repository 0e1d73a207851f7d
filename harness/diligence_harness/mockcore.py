"""The loopback mock's serving core: one `selectors` (epoll) loop, a timer heap, raw sockets.

Why not asyncio (measured with benchmarks/harness_accuracy.py on a 2-core VM):
the mock is the reference the client's timing error is measured against, so
whatever the mock spends per event delays its own read stamps and counts as the
client's error. With asyncio streams, and still with a tuned asyncio protocol,
every token write cost a timer handle, a callback and a transport layer, and
at 256 streams (about 12,800 token events per second) requests queued behind
the token writes before the mock stamped them. This core keeps the work per
event to a heap pop and a `send()`, and:

- stamps a request's read time right after the `recv()` that returns its bytes,
  and defers parsing and dispatch until after the whole read pass, so one
  request's handling never delays another request's stamp;
- writes every due token of every stream in one pass over the timer heap, and
  polls for readable sockets (and stamps them) every few writes or dispatches
  inside a long pass, so a request that arrives while hundreds of tokens are
  due, or hundreds of requests are being dispatched, is stamped within a
  fraction of a millisecond;
- sets `TCP_NODELAY` on every accepted socket and writes with a plain
  non-blocking `send()`; bytes the kernel does not take at once are queued and
  flushed when the socket is writable.

The core knows nothing about HTTP: a handler object per connection gets
`data_received(t_read_ns, data)` and `connection_lost()` (mockserver.py).
Timestamps are `time.perf_counter_ns` (CLOCK_MONOTONIC), as in the client.
"""

import contextlib
import errno
import heapq
import itertools
import selectors
import socket
import time
from typing import Protocol

from diligence_harness.clock import now_ns

# Between two read polls inside one pass: timer callbacks (a token write each, ~10 us)
# and request dispatches (parse, JSON, log entry, head write: ~40 us each).
READ_POLL_EVERY_TIMERS = 32
READ_POLL_EVERY_DISPATCHES = 8
# Not larger: CPython allocates the whole size for every recv(), and from 128 KiB up
# glibc serves that with mmap/munmap (measured: about 20-60 us more per read).
RECV_BYTES = 65536
_IDLE_TIMEOUT_S = 1.0  # the longest select() when no timer is due (stop is also woken)


class ConnectionHandler(Protocol):
    """What `handler_factory` returns for each connection."""

    def data_received(self, t_ns: int, data: bytes) -> None: ...

    def connection_lost(self) -> None: ...


class Connection:
    """One accepted socket: non-blocking writes with a queue for what the kernel refused."""

    __slots__ = ("core", "sock", "handler", "closed", "last_write_end_ns", "_out", "peer")

    def __init__(self, core: "Core", sock: socket.socket, peer) -> None:
        self.core = core
        self.sock = sock
        self.peer = peer
        self.handler: ConnectionHandler | None = None  # set once accepted
        self.closed = False
        self.last_write_end_ns = 0
        self._out = bytearray()

    def write(self, data: bytes) -> int:
        """Send now; returns the ns just before the send() (the "wrote" time).

        `last_write_end_ns` is stamped after send() returns: a client on another
        core can read the bytes before that second stamp, never before the first.
        If the kernel takes only part of the bytes, the rest is sent when the
        socket is writable (the stamps then say when the mock tried to write).
        """
        t_start = now_ns()
        if not self.closed:
            if self._out:
                self._out += data
            else:
                try:
                    sent = self.sock.send(data)
                except (BlockingIOError, InterruptedError):
                    sent = 0
                except OSError:
                    sent = len(data)
                    self.core.close_connection(self)
                if sent < len(data) and not self.closed:
                    self._out += data[sent:]
                    self.core.want_write(self, True)
        self.last_write_end_ns = now_ns()
        return t_start

    def flush(self) -> None:
        try:
            sent = self.sock.send(self._out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.core.close_connection(self)
            return
        del self._out[:sent]
        if not self._out:
            self.core.want_write(self, False)

    def close(self) -> None:
        """Close now (a stream cut mid-body); queued bytes are dropped."""
        self.core.close_connection(self)


class Core:
    """The loop: accept, read and stamp, then dispatch; timers in deadline order."""

    def __init__(self, handler_factory) -> None:
        """`handler_factory(connection)` returns the connection's handler."""
        self.handler_factory = handler_factory
        self.selector = selectors.DefaultSelector()
        self.listener: socket.socket | None = None
        self._timers: list = []
        self._seq = itertools.count()
        self._received: list = []  # (connection, t_read_ns, bytes), dispatched after a read pass
        self._connections: dict[int, Connection] = {}
        self._stopping = False  # set once by stop(), even before run() has started
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ, None)

    # --- setup and teardown -------------------------------------------------------------

    def listen(self, host: str, port: int) -> int:
        """Bind and listen; returns the bound port (0 picks a free one)."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(1024)
        listener.setblocking(False)
        self.listener = listener
        self.selector.register(listener, selectors.EVENT_READ, self.listener)
        return listener.getsockname()[1]

    def stop(self) -> None:
        """Ask the loop to return; safe from another thread or a signal handler."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")

    def close(self) -> None:
        for connection in list(self._connections.values()):
            self.close_connection(connection)
        if self.listener is not None:
            self.selector.unregister(self.listener)
            self.listener.close()
            self.listener = None
        self.selector.close()
        self._wake_r.close()
        self._wake_w.close()

    # --- timers ---------------------------------------------------------------------------

    def call_at(self, deadline_ns: int, callback, *args) -> None:
        """Run `callback(*args)` once `now_ns()` reaches `deadline_ns`."""
        heapq.heappush(self._timers, (deadline_ns, next(self._seq), callback, args))

    # --- the loop -------------------------------------------------------------------------

    def run(self, max_seconds: float | None = None, busy_poll: bool = False) -> None:
        """Serve until `stop()` or for `max_seconds`; `busy_poll` never sleeps in epoll."""
        end_ns = None if max_seconds is None else now_ns() + int(max_seconds * 1e9)
        timers, select = self._timers, self.selector.select
        while not self._stopping:
            now = now_ns()
            if end_ns is not None and now >= end_ns:
                break
            if busy_poll:
                timeout = 0.0
            elif timers:
                timeout = max(0.0, (timers[0][0] - now) / 1e9)
            else:
                timeout = _IDLE_TIMEOUT_S
            if end_ns is not None:
                timeout = min(timeout, max(0.0, (end_ns - now) / 1e9))
            self._handle_events(select(timeout))
            self._dispatch_received()
            if timers and timers[0][0] <= now_ns():
                self._run_due_timers()
                self._dispatch_received()

    def _run_due_timers(self) -> None:
        timers, pop = self._timers, heapq.heappop
        done = 0
        while timers:
            if timers[0][0] > now_ns():
                break
            _deadline, _seq, callback, args = pop(timers)
            callback(*args)
            done += 1
            if done % READ_POLL_EVERY_TIMERS == 0:
                # Requests that arrived meanwhile: stamp them now, dispatch after the pass.
                self._handle_events(self.selector.select(0))

    def _handle_events(self, events) -> None:
        received = self._received
        for key, mask in events:
            connection = key.data
            if connection is None:
                self._drain_wake()
            elif connection is self.listener:
                self._accept()
            else:
                if mask & selectors.EVENT_READ and not connection.closed:
                    try:
                        data = connection.sock.recv(RECV_BYTES)
                        t_read = now_ns()  # "read off the socket": right after recv returns
                    except (BlockingIOError, InterruptedError):
                        data = None
                    except OSError:
                        data = b""
                    if data:
                        received.append((connection, t_read, data))
                    elif data is not None:
                        received.append((connection, None, b""))
                if mask & selectors.EVENT_WRITE and not connection.closed:
                    connection.flush()

    def _dispatch_received(self) -> None:
        done = 0
        while self._received:
            batch, self._received = self._received, []
            for connection, t_read, data in batch:
                if t_read is None:
                    self.close_connection(connection)
                elif not connection.closed:
                    connection.handler.data_received(t_read, data)
                done += 1
                if done % READ_POLL_EVERY_DISPATCHES == 0:
                    # Stamp what arrived meanwhile; it is dispatched in the next round.
                    self._handle_events(self.selector.select(0))

    def _accept(self) -> None:
        listener = self.listener
        assert listener is not None  # only the listener's readiness event calls this
        while True:
            try:
                sock, peer = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. EMFILE: try again on the next readiness event
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    time.sleep(0.001)
                return
            sock.setblocking(False)
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = Connection(self, sock, peer)
            connection.handler = self.handler_factory(connection)
            self._connections[sock.fileno()] = connection
            self.selector.register(sock, selectors.EVENT_READ, connection)

    def want_write(self, connection: Connection, on: bool) -> None:
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if on else 0)
        self.selector.modify(connection.sock, events, connection)

    def close_connection(self, connection: Connection) -> None:
        if connection.closed:
            return
        connection.closed = True
        self._connections.pop(connection.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(connection.sock)
        connection.sock.close()
        connection._out.clear()
        if connection.handler is not None:  # None: closed before its handler was made
            connection.handler.connection_lost()

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

"""A minimal asyncio HTTP/1.1 streaming client on raw sockets.

Why not aiohttp (or httpx): the load test must measure the server, not itself.
- aiohttp's default 64 KB read buffer collapses throughput at long contexts
  (vLLM #39963) and its TCPConnector caps at 100 connections, which degrades
  TTFT above 100 streams (gpustack PR #2324). Both are avoidable settings, but
  a stdlib client has neither and adds no dependency.
- Timestamps: `t_send_ns` is read immediately before `transport.write`, which
  sends at once when the socket buffer is empty; vLLM's client stamps the start
  before its event loop has written the request (docs/metrics.md#client-accuracy).
- Per-read work is the bare minimum (a timestamp, chunked-framing bookkeeping,
  a list append). SSE parsing and JSON decoding happen after the cell, off the
  event loop, so one stream's parsing never delays another stream's timestamps.
"""

import asyncio
import ssl
import urllib.parse
from dataclasses import dataclass, field

from diligence_harness.clock import now_ns


@dataclass(frozen=True)
class Endpoint:
    scheme: str
    host: str
    port: int
    base_path: str  # without a trailing slash, e.g. "" or "/v1"

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"

    @property
    def display(self) -> str:
        """Scheme, host and port only: user info and query strings may carry secrets."""
        return f"{self.scheme}://{self.host_header}{self.base_path}"


def parse_endpoint(url: str) -> Endpoint:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"endpoint must be an http(s) URL, got {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    base = parts.path.rstrip("/")
    # Accept ".../v1" or the bare server root; the API paths add "/v1" themselves.
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return Endpoint(parts.scheme, parts.hostname, port, base)


def build_request(
    endpoint: Endpoint, method: str, path: str, body: bytes, headers: dict[str, str]
) -> bytes:
    """Serialise a whole request up front so the hot path only writes bytes."""
    lines = [f"{method} {endpoint.base_path}{path} HTTP/1.1", f"Host: {endpoint.host_header}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@dataclass
class ResponseReader:
    """Incremental HTTP/1.1 response parser that keeps (arrival ns, body bytes) per read."""

    done: asyncio.Future
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    t_hdr_ns: int | None = None
    t_end_ns: int | None = None
    body_pieces: list[tuple[int, bytes]] = field(default_factory=list)
    error: str | None = None
    keep_alive: bool = True
    _head: bytes = b""
    _mode: str = "head"  # head | chunked | length | close | done
    _remaining: int = 0
    _pending: bytes = b""
    _need_crlf: bool = False
    _in_trailers: bool = False

    def feed(self, t_ns: int, data: bytes) -> None:
        if self._mode == "head":
            body = self._feed_head(t_ns, data)
            if body is None:
                return
            data = body
        if self._mode == "chunked":
            self._feed_chunked(t_ns, data)
        elif self._mode == "length":
            piece = data[: self._remaining]
            self._remaining -= len(piece)
            if piece:
                self.body_pieces.append((t_ns, piece))
            if self._remaining <= 0:
                self._finish(t_ns)
        elif self._mode == "close" and data:
            self.body_pieces.append((t_ns, data))

    def _feed_head(self, t_ns: int, data: bytes) -> bytes | None:
        self._head += data
        end = self._head.find(b"\r\n\r\n")
        if end < 0:
            return None
        head, rest = self._head[:end].decode("latin-1"), self._head[end + 4 :]
        self._head = b""
        status_line, *header_lines = head.split("\r\n")
        version, _, status_rest = status_line.partition(" ")
        self.status = int(status_rest[:3])
        for line in header_lines:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.t_hdr_ns = t_ns
        connection = self.headers.get("connection", "").lower()
        self.keep_alive = version == "HTTP/1.1" and connection != "close"
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            self._mode = "chunked"
        elif "content-length" in self.headers:
            self._mode, self._remaining = "length", int(self.headers["content-length"])
            if self._remaining == 0:
                self._finish(t_ns)
        else:
            self._mode, self.keep_alive = "close", False
        return rest

    def _feed_chunked(self, t_ns: int, data: bytes) -> None:
        buf = self._pending + data if self._pending else data
        self._pending = b""
        pos, size, out = 0, len(buf), []
        while pos < size and self._mode == "chunked":
            if self._remaining > 0:
                take = min(self._remaining, size - pos)
                out.append(buf[pos : pos + take])
                pos += take
                self._remaining -= take
                self._need_crlf = self._remaining == 0
                continue
            if self._need_crlf:
                if size - pos < 2:
                    self._pending = buf[pos:]
                    break
                pos, self._need_crlf = pos + 2, False
                continue
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                self._pending = buf[pos:]
                break
            line, pos = buf[pos:eol], eol + 2
            if self._in_trailers:
                if not line:
                    self._finish(t_ns)
                continue
            chunk_size = int(line.split(b";", 1)[0], 16)
            if chunk_size == 0:
                self._in_trailers = True
            self._remaining = chunk_size
        if out:
            self.body_pieces.append((t_ns, b"".join(out)))

    def _finish(self, t_ns: int) -> None:
        self._mode = "done"
        self.t_end_ns = t_ns
        if not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, t_ns: int, exc: Exception | None) -> None:
        """EOF: the normal end of a close-delimited body, a truncation otherwise."""
        if self._mode == "done":
            return
        self.keep_alive = False
        if self._mode == "close" and exc is None:
            self._finish(t_ns)
            return
        self.error = f"connection closed mid-response ({self._mode})" + (f": {exc}" if exc else "")
        self._finish(t_ns)

    def fail(self, t_ns: int, reason: str) -> None:
        if self._mode != "done":
            self.keep_alive = False
            self.error = reason
            self._finish(t_ns)


# Bytes per read. asyncio's own default (256 KiB) makes CPython allocate 256 KiB for
# every recv(), which glibc serves with mmap/munmap: measured on a 2-core VM, about
# 20-60 us more per read than a 64 KiB buffer, on every chunk of every stream.
READ_BUFFER_BYTES = 65536


class ClientProtocol(asyncio.BufferedProtocol):
    """Stamps every read first, then hands the bytes to the current response.

    A buffered protocol: the transport reads into this connection's preallocated
    buffer (`recv_into`), so no read allocates more than the bytes it got.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.reader: ResponseReader | None = None
        self.open = False
        self._buffer = bytearray(READ_BUFFER_BYTES)
        self._view = memoryview(self._buffer)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.open = True

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._view

    def buffer_updated(self, nbytes: int) -> None:
        t_ns = now_ns()
        if self.reader is not None:
            self.reader.feed(t_ns, bytes(self._view[:nbytes]))

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if self.reader is not None:
            self.reader.connection_lost(now_ns(), exc)


async def open_connection(endpoint: Endpoint, ssl_context: ssl.SSLContext | None = None):
    """A connected ClientProtocol; asyncio turns Nagle off (TCP_NODELAY) on TCP transports."""
    loop = asyncio.get_running_loop()
    tls = None
    if endpoint.scheme == "https":
        tls = ssl_context or ssl.create_default_context()
    _transport, protocol = await loop.create_connection(
        ClientProtocol,
        endpoint.host,
        endpoint.port,
        ssl=tls,
        server_hostname=endpoint.host if tls else None,
    )
    return protocol


async def exchange(
    protocol: ClientProtocol, payload: bytes, timeout_s: float
) -> tuple[int, ResponseReader]:
    """Send one pre-serialised request; returns (t_send_ns, reader) once the response ends."""
    loop = asyncio.get_running_loop()
    reader = ResponseReader(done=loop.create_future())
    protocol.reader = reader
    timer = loop.call_later(timeout_s, lambda: reader.fail(now_ns(), f"timeout after {timeout_s}s"))
    assert protocol.transport is not None  # connected before its first exchange
    t_send_ns = now_ns()
    protocol.transport.write(payload)
    try:
        await reader.done
    finally:
        timer.cancel()
        protocol.reader = None
    if not reader.keep_alive and protocol.transport is not None:
        protocol.transport.close()
    return t_send_ns, reader

"""Loopback mock of an OpenAI-compatible streaming server with known timings.

Ground truth for the harness's own accuracy (docs/metrics.md#harness-accuracy): each
request gets a deterministic schedule (TTFT, inter-token gap, tokens per SSE
event), optional injected faults (HTTP 500/429, a stream cut mid-body, a
stream without finish_reason) and an optional empty role-only first chunk.
The server logs, per request id (`X-Request-Id`), when it read the request off
the socket (`t_read_ns`) and when it wrote each chunk (`chunks`: [t_write_ns just
before send(), tokens, t_write_end_ns after send()]), in `time.perf_counter_ns` — the same
CLOCK_MONOTONIC the client uses, so the two can be compared event by event.

Chunk model with k tokens per event: chunk j (0-based) carries tokens
[jk, jk+k) and is written at t_read + ttft + j*k*itl. So the first content
arrives exactly at the injected TTFT, and tpot_corrected = itl.

Capacity model (`slots` > 0): the mock serves at most `slots` completions at once,
first come first served. A completion holds a slot for its nominal service time,
S = ttft + (chunks - 1) * k * itl (a stream's last chunk is due then; with one token
per chunk S = ttft + (n - 1) * itl), and a request that finds every slot booked
starts when the first one comes free: its whole schedule shifts to that start
(`t_start_ns` in the log), so its TTFT includes the wait. Slots are booked on the
nominal times, not on when the loop got round to a write, so the mock serves
exactly `slots / S` requests per second (`capacity_rps`): below that rate, with
evenly spaced arrivals, nothing waits; above it every request waits longer than
the one before. That makes the highest rate meeting a TTFT target known in advance
(the rate search's test). `slots` = 0 (the default) starts every request at once.

The sockets, the timer heap and the read stamps are in mockcore.py (one
selectors loop, no asyncio); this module is the HTTP and OpenAI side: routing,
faults, the request log and the SSE frames, which are encoded once per stream
shape and reused.
"""

import gc
import heapq
import json
import math
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from diligence_harness.clock import now_ns
from diligence_harness.mockcore import Core
from diligence_harness.mockinject import Injections, InjectionState

ERROR_KINDS = ("http_500", "http_429", "truncate", "no_finish")


@dataclass
class MockConfig:
    ttft_ms: float = 50.0
    itl_ms: float = 10.0
    tokens_per_chunk: int = 1
    empty_first_chunk: bool = False
    ping_every: int = 0  # an SSE comment line every N chunks (0: never)
    error_every: int = 0  # every Nth streaming request fails (0: never)
    error_kinds: tuple[str, ...] = ("http_500", "truncate")
    default_output_tokens: int = 16
    api_key: str | None = None  # when set, /v1/* requires "Authorization: Bearer <key>"
    # The endpoint's answers to the security probes, right by default: a missing or wrong
    # token gets `unauthenticated_status` (401; 200 serves it: an open endpoint), the
    # `forbidden_key` a 403 (or is served, with `forbidden_allowed`).
    unauthenticated_status: int = 401
    forbidden_key: str | None = None
    forbidden_allowed: bool = False
    rate_limit_rps: float | None = None  # token bucket, burst = one second's worth
    slots: int = 0  # completions served at once; more wait for a slot (0: no limit)
    model: str = "mock-model"
    injections: Injections = Injections()  # downtime, restart, correctness answers

    def service_ns(self, tokens: int, stream: bool = True) -> int:
        """How long one completion of `tokens` holds its slot (the module docstring)."""
        tokens = max(1, tokens)
        if not stream:
            return int((self.ttft_ms + (tokens - 1) * self.itl_ms) * 1e6)
        k = max(1, self.tokens_per_chunk)
        return int(self.ttft_ms * 1e6) + int((math.ceil(tokens / k) - 1) * k * self.itl_ms * 1e6)

    def capacity_rps(self, output_tokens: int) -> float | None:
        """Streamed requests per second the slots serve at this output length (None: no limit)."""
        if not self.slots:
            return None
        return self.slots / (self.service_ns(output_tokens) / 1e9)


@dataclass
class _Request:
    method: str
    path: str
    headers: dict
    body: bytes
    t_read_ns: int


def _parse_request(buf: bytes, t_ns: int) -> tuple[_Request | None, bytes]:
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None, buf
    head = buf[:end].decode("latin-1").split("\r\n")
    method, path, _version = head[0].split(" ", 2)
    headers = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    if len(buf) < end + 4 + length:
        return None, buf
    body = buf[end + 4 : end + 4 + length]
    return _Request(method, path, headers, body, t_ns), buf[end + 4 + length :]


def _json_response(status: int, payload: dict, reason: str = "") -> bytes:
    body = json.dumps(payload).encode()
    head = (
        f"HTTP/1.1 {status} {reason or 'Status'}\r\nContent-Type: application/json\r\n"
        f"Server: diligence-mock\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _chunk(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Server: diligence-mock\r\nTransfer-Encoding: chunked\r\n\r\n"
)


class MockServer:
    """The server state: config, request log, arrival counter and rate-limit bucket."""

    def __init__(self, config: MockConfig) -> None:
        self.config = config
        self.log: list[dict] = []
        self.arrivals = 0
        self._bucket = config.rate_limit_rps or 0.0
        self._bucket_t = time.monotonic()
        self.core: Core | None = None
        self.port: int | None = None
        self._frames: dict[tuple, tuple[list[bytes], bytes]] = {}
        self.injected = InjectionState(config.injections)
        self._slots_free_at = [0] * max(0, config.slots)  # a heap: when each slot comes free

    def slot_start(self, t_read_ns: int, service_ns: int) -> int:
        """Book the slot that comes free first; returns when the completion starts (its read
        time when a slot is free, else when the slot is)."""
        if not self._slots_free_at:
            return t_read_ns
        start = max(t_read_ns, heapq.heappop(self._slots_free_at))
        heapq.heappush(self._slots_free_at, start + service_ns)
        return start

    def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Bind and listen (nothing is served until `serve`); returns the bound port."""
        self.core = Core(lambda connection: _MockProtocol(self, connection))
        self.port = self.core.listen(host, port)
        return self.port

    def serve(self, max_seconds: float | None = None, busy_poll: bool = False) -> None:
        """Serve on this thread until `stop()` or for `max_seconds`, then close."""
        core = self.core
        assert core is not None, "start() binds the server before it serves"
        try:
            core.run(max_seconds, busy_poll=busy_poll)
        finally:
            core.close()

    def stop(self) -> None:
        """Make `serve` return; safe from another thread or a signal handler."""
        if self.core is not None:
            self.core.stop()

    def rate_limited(self) -> bool:
        rate = self.config.rate_limit_rps
        if not rate:
            return False
        now = time.monotonic()
        self._bucket = min(rate, self._bucket + (now - self._bucket_t) * rate)
        self._bucket_t = now
        if self._bucket >= 1.0:
            self._bucket -= 1.0
            return False
        return True

    def next_fault(self) -> str | None:
        self.arrivals += 1
        every, kinds = self.config.error_every, self.config.error_kinds
        if not every or self.arrivals % every or not kinds:
            return None
        return kinds[(self.arrivals // every - 1) % len(kinds)]

    def frames(self, shape: tuple) -> tuple[list[bytes], bytes]:
        """The SSE chunks of one stream shape, encoded once: (chunk j's bytes, the tail).

        Every stream of a shape carries the same bytes, so encoding them per token
        would only add work to the mock's loop (and so to its read stamps).
        """
        cached = self._frames.get(shape)
        if cached is None:
            if len(self._frames) > 256:
                self._frames.clear()
            cached = self._frames[shape] = _encode_frames(self.config, *shape)
        return cached


class _MockProtocol:
    """One connection's HTTP side: parses requests and serves them in order."""

    def __init__(self, server: MockServer, connection) -> None:
        self.server = server
        self.connection = connection
        self.buf = b""
        self.busy = False
        self.queue: list[_Request] = []
        server.injected.connected()

    @property
    def last_write_end_ns(self) -> int:
        return self.connection.last_write_end_ns

    @property
    def open(self) -> bool:
        return not self.connection.closed

    def data_received(self, t_ns: int, data: bytes) -> None:
        """`t_ns`: when the core's recv() of these bytes returned (the read that completes
        a request is its "read off the socket" time); called after the core's read pass."""
        if self.server.injected.down():
            self.connection.close()  # an injected downtime window: nothing is answered
            return
        self.buf += data
        while True:
            request, self.buf = _parse_request(self.buf, t_ns)
            if request is None:
                break
            self.queue.append(request)
        self._serve_next()

    def connection_lost(self) -> None:
        self.queue.clear()

    def _serve_next(self) -> None:
        """Serve queued requests in order (HTTP/1.1 keep-alive, one response at a time)."""
        while self.queue and not self.busy and self.open:
            self._dispatch(self.queue.pop(0))

    def response_finished(self) -> None:
        self.busy = False
        self._serve_next()

    def write(self, data: bytes) -> int:
        """Write now; returns the ns just before the send() (the "wrote" time)."""
        return self.connection.write(data)

    def close(self) -> None:
        self.connection.close()

    def call_at_ns(self, deadline_ns: int, callback, *args) -> None:
        """Run a callback at a perf_counter_ns deadline on the core's timer heap."""
        core = self.server.core
        assert core is not None  # a connection exists only once the server started
        core.call_at(deadline_ns, callback, *args)

    def _dispatch(self, request: _Request) -> None:
        path = request.path.split("?", 1)[0]
        server = self.server
        if path == "/_mock/log":
            self.write(_json_response(200, {"requests": server.log}, "OK"))
        elif path == "/_mock/reset":
            server.log.clear()
            server.arrivals = 0
            gc.collect()  # the only collection while serving (see serve_forever)
            self.write(_json_response(200, {"reset": True}, "OK"))
        elif path == "/metrics":
            self.write(server.injected.metrics_response())
        elif path == "/health":
            self.write(_json_response(200, {"ok": True}, "OK"))
        elif not path.startswith("/v1/"):
            self.write(_json_response(404, {"error": {"message": "not found"}}, "Not Found"))
        elif self._forbidden(request):
            self.write(_json_response(403, {"error": {"message": "not permitted"}}, "Forbidden"))
        elif not self._authorised(request):
            status = server.config.unauthenticated_status
            self.write(_json_response(status, {"error": {"message": "invalid token"}}, "Refused"))
        elif server.rate_limited():
            self.write(_json_response(429, {"error": {"message": "rate limited"}}, "Too Many"))
        elif path == "/v1/models":
            model = {"id": server.config.model, "object": "model", "owned_by": "diligence-mock"}
            self.write(_json_response(200, {"object": "list", "data": [model]}, "OK"))
        elif path in ("/v1/chat/completions", "/v1/completions"):
            self._completion(request, "chat" if "chat" in path else "completions")
        else:
            self.write(_json_response(404, {"error": {"message": "not found"}}, "Not Found"))

    def _authorised(self, request: _Request) -> bool:
        config = self.server.config
        key, sent = config.api_key, request.headers.get("authorization")
        if key is None or sent == f"Bearer {key}":
            return True
        if config.forbidden_key and sent == f"Bearer {config.forbidden_key}":
            return config.forbidden_allowed
        return 200 <= config.unauthenticated_status < 300  # an open endpoint serves anyone

    def _forbidden(self, request: _Request) -> bool:
        """The forbidden key is known but not permitted (unless the mock is told to serve it)."""
        config = self.server.config
        return (
            config.forbidden_key is not None
            and not config.forbidden_allowed
            and request.headers.get("authorization") == f"Bearer {config.forbidden_key}"
        )

    def _completion(self, request: _Request, api: str) -> None:
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            self.write(_json_response(400, {"error": {"message": "bad json"}}, "Bad Request"))
            return
        entry: dict[str, Any] = {
            "request_id": request.headers.get("x-request-id"),
            "path": request.path,
            "t_read_ns": request.t_read_ns,
            "chunks": [],
            "injected": None,
        }
        self.server.log.append(entry)
        fault = self.server.next_fault()
        entry["injected"] = fault
        if fault in ("http_500", "http_429"):
            status = int(fault[5:])
            entry["t_done_ns"] = self.write(
                _json_response(status, {"error": {"message": f"injected {fault}"}}, "Injected")
            )
            return
        tokens = int(body.get("max_tokens") or self.server.config.default_output_tokens)
        self.busy = True
        cfg = self.server.config
        answer = None if body.get("stream") else self.server.injected.answer(body)
        service_ns = self.server.config.service_ns(
            1 if answer is not None else tokens, stream=bool(body.get("stream"))
        )
        start_ns = self.server.slot_start(request.t_read_ns, service_ns)
        if start_ns != request.t_read_ns:
            entry["t_start_ns"] = start_ns  # waited for a slot
        if not body.get("stream"):
            if answer is not None:  # a bundled correctness input
                self.call_at_ns(
                    start_ns + int(cfg.ttft_ms * 1e6),
                    self._complete_whole,
                    api,
                    1,
                    entry,
                    answer,
                )
                return
            self.call_at_ns(start_ns + service_ns, self._complete_whole, api, tokens, entry)
            return
        streamer = _Streamer(self, self.server.config, api, body, tokens, entry, fault)
        if start_ns > request.t_read_ns:
            self.call_at_ns(start_ns, streamer.start, start_ns)
        else:
            streamer.start(request.t_read_ns)

    def _complete_whole(self, api: str, tokens: int, entry: dict, text: str | None = None) -> None:
        if text is None:
            text = "".join(f" t{i}" for i in range(tokens))
        choice = {"index": 0, "finish_reason": "length"}
        if api == "chat":
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        usage = {"prompt_tokens": 1, "completion_tokens": tokens, "total_tokens": tokens + 1}
        payload = {"id": "mock", "object": "completion", "choices": [choice], "usage": usage}
        entry["t_done_ns"] = self.write(_json_response(200, payload, "OK"))
        self.response_finished()


def _usage(completion_tokens: int) -> dict:
    return {
        "prompt_tokens": 1,
        "completion_tokens": completion_tokens,
        "total_tokens": completion_tokens + 1,
    }


def _event(api, model_json, content: str, finish, usage: dict | None, role=False) -> bytes:
    """One SSE event as a chunked-transfer chunk."""
    text = json.dumps(content)
    finish_json = "null" if finish is None else f'"{finish}"'
    kind = "chat.completion.chunk" if api == "chat" else "text_completion"
    if api == "chat":
        role_json = '"role":"assistant",' if role else ""
        delta = f'{{{role_json}"content":{text}}}'
        choice = f'{{"index":0,"delta":{delta},"finish_reason":{finish_json}}}'
    else:
        choice = f'{{"index":0,"text":{text},"finish_reason":{finish_json}}}'
    usage_json = "" if usage is None else ',"usage":' + json.dumps(usage)
    head = f'"id":"mock","object":"{kind}","model":{model_json}'
    event = f'{{{head},"choices":[{choice}]{usage_json}}}'
    return _chunk(b"data: " + event.encode() + b"\n\n")


def _encode_frames(cfg: MockConfig, api, tokens, k, continuous, include_usage, finish):
    """Chunk j carries tokens [jk, jk+k); the last one also ends the stream (usage, [DONE])."""
    model_json = json.dumps(cfg.model)
    frames, sent = [], 0
    n_chunks = math.ceil(tokens / k)
    for j in range(n_chunks):
        count = min(k, tokens - sent)
        text = "".join(f" t{sent + i}" for i in range(count))
        sent += count
        last = j == n_chunks - 1
        usage = _usage(sent) if continuous else None
        data = _event(api, model_json, text, finish if last else None, usage)
        if cfg.ping_every and j % cfg.ping_every == 0:
            data = _chunk(b": ping\n\n") + data
        frames.append(data)
    tail = b""
    if include_usage:
        kind = "chat.completion.chunk" if api == "chat" else "text_completion"
        event = {"id": "mock", "object": kind, "choices": [], "usage": _usage(sent)}
        tail += _chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
    tail += _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
    return frames, tail


class _Streamer:
    """Writes one SSE stream to the schedule in the module docstring."""

    def __init__(self, conn, cfg: MockConfig, api, body: dict, tokens, entry, fault) -> None:
        self.conn, self.cfg, self.api, self.entry, self.fault = conn, cfg, api, entry, fault
        self.tokens = max(1, tokens)
        options = body.get("stream_options") or {}
        self.include_usage = bool(options.get("include_usage"))
        self.continuous = bool(options.get("continuous_usage_stats"))

    def start(self, t_read_ns: int) -> None:
        """Write the head now and schedule the first chunk; the connection is told at the end."""
        cfg, entry, conn = self.cfg, self.entry, self.conn
        entry["t_headers_ns"] = conn.write(STREAM_HEAD)
        if cfg.empty_first_chunk:
            usage = _usage(0) if self.continuous else None
            model_json = json.dumps(cfg.model)
            empty = _event(self.api, model_json, "", None, usage, role=True)
            entry["t_empty_chunk_ns"] = conn.write(empty)
        self.k = max(1, cfg.tokens_per_chunk)
        finish = None if self.fault == "no_finish" else "length"
        shape = (self.api, self.tokens, self.k, self.continuous, self.include_usage, finish)
        self.frames, self.tail = conn.server.frames(shape)
        self.n_chunks = len(self.frames)
        self.cut_after = self.n_chunks // 2 if self.fault == "truncate" else None
        self.j, self.t_read_ns = 0, t_read_ns
        self.ttft_ns, self.gap_ns = int(cfg.ttft_ms * 1e6), cfg.itl_ms * 1e6 * self.k
        self.chunks = entry["chunks"]
        conn.call_at_ns(t_read_ns + self.ttft_ns, self._write_next)

    def _write_next(self) -> None:
        conn, j = self.conn, self.j
        if j == self.cut_after or not conn.open:
            self.entry["t_done_ns"] = now_ns()
            if conn.open:
                conn.close()  # a stream cut mid-body: no terminal chunk
            conn.response_finished()
            return
        last = j == self.n_chunks - 1
        data = self.frames[j] + self.tail if last else self.frames[j]
        t_write = conn.write(data)
        self.chunks.append([t_write, min(self.k, self.tokens - j * self.k), conn.last_write_end_ns])
        self.j = j + 1
        if not last:
            deadline_ns = self.t_read_ns + self.ttft_ns + int(self.j * self.gap_ns)
            conn.call_at_ns(deadline_ns, self._write_next)
            return
        self.entry["t_done_ns"] = t_write
        conn.response_finished()


class MockServerThread:
    """The mock on its own serving loop in a background thread (for tests and `calibrate`)."""

    def __init__(self, config: MockConfig, host: str = "127.0.0.1") -> None:
        self.server = MockServer(config)
        self.host = host
        self._thread = threading.Thread(
            target=self.server.serve, daemon=True, name="diligence-mock"
        )

    def __enter__(self) -> "MockServerThread":
        self.server.start(self.host, 0)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.stop()
        self._thread.join(5)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.server.port}"

    def log_copy(self) -> list[dict]:
        return list(self.server.log)


def serve_forever(
    config: MockConfig, host: str, port: int, max_seconds: float, busy_poll: bool = False
) -> None:
    """`diligence-harness mock-server`: print the bound port as JSON, serve until stopped."""
    # As in the client (eventloop.py): no cyclic-GC pauses while serving; the
    # mock is bounded in time and collects on /_mock/reset between levels.
    gc.disable()
    server = MockServer(config)
    bound = server.start(host, port)
    config_view = asdict(config) | {"api_key": bool(config.api_key)}
    print(json.dumps({"event": "listening", "host": host, "port": bound, "config": config_view}))
    sys.stdout.flush()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _signum, _frame: server.stop())
    server.serve(max_seconds, busy_poll=busy_poll)

"""Loopback mock of an OpenAI-compatible streaming server with known timings.

Ground truth for the harness's own accuracy (harness-anchors §5.2): each
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
"""

import asyncio
import contextlib
import gc
import json
import math
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass

from diligence_harness.clock import now_ns
from diligence_harness.eventloop import run as run_event_loop
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
    rate_limit_rps: float | None = None  # token bucket, burst = one second's worth
    model: str = "mock-model"
    injections: Injections = Injections()  # downtime, restart, correctness answers


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
        self._server: asyncio.AbstractServer | None = None
        self.port: int | None = None
        self.injected = InjectionState(config.injections)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _MockProtocol(self), host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

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


class _MockProtocol(asyncio.Protocol):
    def __init__(self, server: MockServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buf = b""
        self.busy = False
        self.queue: list[_Request] = []
        self.last_write_end_ns = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server.injected.connected()
        if self.server.injected.down():
            transport.abort()  # an injected downtime window: refuse the connection

    def data_received(self, data: bytes) -> None:
        t_ns = now_ns()  # "read off the socket": the read that completes the request
        if self.server.injected.down():
            self.transport.abort()
            return
        self.buf += data
        while True:
            request, self.buf = _parse_request(self.buf, t_ns)
            if request is None:
                break
            self.queue.append(request)
        if self.queue and not self.busy:
            # Deferred with call_soon: the other sockets that are ready in this loop
            # iteration get read (and stamped) before any request is worked on.
            asyncio.get_running_loop().call_soon(self._serve_next)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def _serve_next(self) -> None:
        """Serve queued requests in order, in callbacks rather than a task per request.

        Everything the mock does per request delays its read stamp of requests that
        arrive meanwhile, and that delay counts as the client's error in the accuracy
        benchmark; callbacks cost less than tasks.
        """
        while self.queue and not self.busy and self.transport is not None:
            self._dispatch(self.queue.pop(0))

    def response_finished(self) -> None:
        self.busy = False
        self._serve_next()

    def write(self, data: bytes) -> int:
        """Write now; returns the ns just before the send() (the "wrote" time, §5.2 item 1).

        The stamp after send() returns is kept too (`last_write_end_ns`): a client on
        another core can read the bytes before that second stamp, never before the first.
        """
        t_start = now_ns()
        if self.transport is not None:
            self.transport.write(data)
        self.last_write_end_ns = now_ns()
        return t_start

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
        elif not self._authorised(request):
            self.write(_json_response(401, {"error": {"message": "invalid token"}}, "Unauthorized"))
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
        key = self.server.config.api_key
        return key is None or request.headers.get("authorization") == f"Bearer {key}"

    def _completion(self, request: _Request, api: str) -> None:
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            self.write(_json_response(400, {"error": {"message": "bad json"}}, "Bad Request"))
            return
        entry = {
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
        if not body.get("stream"):
            cfg = self.server.config
            answer = self.server.injected.answer(body)  # a bundled correctness input?
            if answer is not None:
                call_at_ns(
                    request.t_read_ns + int(cfg.ttft_ms * 1e6),
                    self._complete_whole,
                    api,
                    1,
                    entry,
                    answer,
                )
                return
            delay_ns = int((cfg.ttft_ms + (tokens - 1) * cfg.itl_ms) * 1e6)
            call_at_ns(request.t_read_ns + delay_ns, self._complete_whole, api, tokens, entry)
            return
        streamer = _Streamer(self, self.server.config, api, body, tokens, entry, fault)
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


def call_at_ns(deadline_ns: int, callback, *args) -> None:
    """Run a callback at a perf_counter_ns deadline on the running loop.

    A timer callback rather than `await asyncio.sleep`: no future and no task step
    per token, so the mock stays cheap at 256 streams.
    """
    loop = asyncio.get_running_loop()
    loop.call_at(loop.time() + (deadline_ns - now_ns()) / 1e9, callback, *args)


class _Streamer:
    """Writes one SSE stream to the schedule in the module docstring."""

    def __init__(self, conn, cfg: MockConfig, api, body: dict, tokens, entry, fault) -> None:
        self.conn, self.cfg, self.api, self.entry, self.fault = conn, cfg, api, entry, fault
        self.tokens = max(1, tokens)
        options = body.get("stream_options") or {}
        self.include_usage = bool(options.get("include_usage"))
        self.continuous = bool(options.get("continuous_usage_stats"))
        self.kind = "chat.completion.chunk" if api == "chat" else "text_completion"
        self.model_json = json.dumps(cfg.model)

    def _event(self, content: str, finish: str | None, usage: dict | None, role=False) -> bytes:
        # Formatted by hand rather than json.dumps per chunk: the mock must stay cheap
        # at 256 streams, or its own loop lag shows up as the client's error.
        text = json.dumps(content)
        finish_json = "null" if finish is None else f'"{finish}"'
        if self.api == "chat":
            role_json = '"role":"assistant",' if role else ""
            delta = f'{{{role_json}"content":{text}}}'
            choice = f'{{"index":0,"delta":{delta},"finish_reason":{finish_json}}}'
        else:
            choice = f'{{"index":0,"text":{text},"finish_reason":{finish_json}}}'
        usage_json = "" if usage is None else ',"usage":' + json.dumps(usage)
        head = f'"id":"mock","object":"{self.kind}","model":{self.model_json}'
        event = f'{{{head},"choices":[{choice}]{usage_json}}}'
        return _chunk(b"data: " + event.encode() + b"\n\n")

    def _usage(self, completion_tokens: int) -> dict:
        return {
            "prompt_tokens": 1,
            "completion_tokens": completion_tokens,
            "total_tokens": completion_tokens + 1,
        }

    def start(self, t_read_ns: int) -> None:
        """Write the head now and schedule every chunk; the connection is told at the end."""
        cfg, entry = self.cfg, self.entry
        entry["t_headers_ns"] = self.conn.write(STREAM_HEAD)
        if cfg.empty_first_chunk:
            usage = self._usage(0) if self.continuous else None
            entry["t_empty_chunk_ns"] = self.conn.write(self._event("", None, usage, role=True))
        self.k = max(1, cfg.tokens_per_chunk)
        self.n_chunks = math.ceil(self.tokens / self.k)
        self.cut_after = self.n_chunks // 2 if self.fault == "truncate" else None
        self.sent, self.j, self.t_read_ns = 0, 0, t_read_ns
        self._schedule()

    def _schedule(self) -> None:
        cfg = self.cfg
        deadline_ns = self.t_read_ns + int((cfg.ttft_ms + self.j * self.k * cfg.itl_ms) * 1e6)
        call_at_ns(deadline_ns, self._write_next)

    def _write_next(self) -> None:
        cfg, entry, j = self.cfg, self.entry, self.j
        if j == self.cut_after or self.conn.transport is None:
            entry["t_done_ns"] = now_ns()
            if self.conn.transport is not None:
                self.conn.transport.close()  # a stream cut mid-body: no terminal chunk
            self.conn.response_finished()
            return
        count = min(self.k, self.tokens - self.sent)
        text = "".join(f" t{self.sent + i}" for i in range(count))
        self.sent += count
        last = j == self.n_chunks - 1
        finish = "length" if last and self.fault != "no_finish" else None
        usage = self._usage(self.sent) if self.continuous else None
        data = self._event(text, finish, usage)
        if cfg.ping_every and j % cfg.ping_every == 0:
            data = _chunk(b": ping\n\n") + data
        t_write = self.conn.write(data)
        entry["chunks"].append([t_write, count, self.conn.last_write_end_ns])
        self.j += 1
        if not last:
            self._schedule()
            return
        tail = b""
        if self.include_usage:
            event = {
                "id": "mock",
                "object": self.kind,
                "choices": [],
                "usage": self._usage(self.sent),
            }
            tail += _chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
        tail += _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
        entry["t_done_ns"] = self.conn.write(tail)
        self.conn.response_finished()


class MockServerThread:
    """The mock on its own event loop in a background thread (for tests and `calibrate`)."""

    def __init__(self, config: MockConfig, host: str = "127.0.0.1") -> None:
        self.server = MockServer(config)
        self.host = host
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="diligence-mock")

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self.server.start(self.host, 0))
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self) -> "MockServerThread":
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
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

    async def main() -> None:
        # As in the client (eventloop.py): no cyclic-GC pauses while serving; the
        # mock is bounded in time and collects on /_mock/reset between levels.
        gc.disable()
        server = MockServer(config)
        bound = await server.start(host, port)
        config_view = asdict(config) | {"api_key": bool(config.api_key)}
        print(
            json.dumps({"event": "listening", "host": host, "port": bound, "config": config_view})
        )
        sys.stdout.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=max_seconds)
        await server.stop()

    run_event_loop(main(), busy_poll=busy_poll)

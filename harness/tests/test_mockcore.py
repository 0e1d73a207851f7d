"""The mock's serving core (mockcore.py) and the mock process's life cycle."""

import json
import os
import socket
import subprocess
import threading
import time
import urllib.request

import pytest
from diligence_harness.calibrate import MockProcess, process_scheduling
from diligence_harness.clock import now_ns
from diligence_harness.eventloop import run as run_event_loop
from diligence_harness.mockcore import Core
from diligence_harness.mockserver import MockConfig, MockServerThread
from diligence_harness.streamclient import build_request, exchange, open_connection, parse_endpoint


class _Recorder:
    """A handler that records every read and answers b"big" with `size` bytes."""

    def __init__(self, connection, size: int, reads: list) -> None:
        self.connection, self.size, self.reads = connection, size, reads

    def data_received(self, t_read_ns: int, data: bytes) -> None:
        self.reads.append((t_read_ns, data))
        if data.endswith(b"big\n"):
            self.connection.write(b"x" * self.size + b"END")

    def connection_lost(self) -> None:
        self.reads.append((None, b""))


@pytest.fixture
def core_factory():
    running = []

    def start(size: int = 0):
        reads: list = []
        core = Core(lambda connection: _Recorder(connection, size, reads))
        port = core.listen("127.0.0.1", 0)
        thread = threading.Thread(target=core.run, daemon=True)
        thread.start()
        running.append((core, thread))
        return port, reads, core

    yield start
    for core, thread in running:
        core.stop()
        thread.join(5)
        core.close()


def test_a_write_larger_than_the_socket_buffer_arrives_whole_and_in_order(core_factory):
    size = 16 * 1024 * 1024  # far above any loopback socket buffer: send() takes part
    port, _reads, _core = core_factory(size)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(b"big\n")
        time.sleep(0.2)  # the core has queued what the kernel refused; nothing is read yet
        received = bytearray()
        while not received.endswith(b"END"):
            data = client.recv(1 << 20)
            assert data, "connection closed before the whole response arrived"
            received += data
    assert len(received) == size + 3 and received[:size].count(b"x") == size


def test_read_stamp_is_taken_when_the_bytes_are_read(core_factory):
    port, reads, _core = core_factory()
    with socket.create_connection(("127.0.0.1", port)) as client:
        before = now_ns()
        client.sendall(b"hello\n")
        deadline = time.monotonic() + 5
        while not reads and time.monotonic() < deadline:
            time.sleep(0.001)
        after = now_ns()
    assert reads and reads[0][1] == b"hello\n"
    assert before <= reads[0][0] <= after  # one clock with the sender (CLOCK_MONOTONIC)


def test_a_closed_client_connection_reaches_the_handler(core_factory):
    port, reads, _core = core_factory()
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"x")
    client.close()
    deadline = time.monotonic() + 5
    while (None, b"") not in reads and time.monotonic() < deadline:
        time.sleep(0.005)
    assert (None, b"") in reads


def test_timers_run_in_deadline_order_and_not_early():
    core = Core(lambda connection: None)
    fired = []
    start = now_ns()
    for delay_ms in (30, 10, 20, 10):
        core.call_at(start + delay_ms * 1_000_000, lambda d=delay_ms: fired.append((d, now_ns())))
    core.call_at(start + 40_000_000, core.stop)
    core.run(max_seconds=5)
    core.close()
    assert [d for d, _t in fired] == [10, 10, 20, 30]
    assert all(t >= start + d * 1_000_000 for d, t in fired)


def test_pipelined_requests_on_one_connection_are_answered_in_order():
    with MockServerThread(MockConfig()) as mock:
        client = socket.create_connection(("127.0.0.1", mock.server.port), timeout=10)
        request = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        client.sendall(request + b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while received.count(b"HTTP/1.1 ") < 2 or not received.endswith(b"}"):
            received += client.recv(65536)
        client.close()
    first, second = received.index(b"HTTP/1.1 200"), received.index(b"HTTP/1.1 404")
    assert first < second


def test_a_client_that_leaves_mid_stream_does_not_stop_the_mock():
    config = MockConfig(ttft_ms=5, itl_ms=20, default_output_tokens=50)
    with MockServerThread(config) as mock:
        body = json.dumps({"model": "m", "stream": True, "max_tokens": 50}).encode()
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", mock.server.port)) as client:
            client.sendall(head.encode() + body)
            client.recv(65536)  # headers (and perhaps the first token), then leave
        time.sleep(0.1)
        with urllib.request.urlopen(mock.url + "/health", timeout=5) as response:
            assert json.load(response) == {"ok": True}
        deadline = time.monotonic() + 5
        while "t_done_ns" not in mock.log_copy()[0] and time.monotonic() < deadline:
            time.sleep(0.01)
        entry = mock.log_copy()[0]
    assert entry["request_id"] == "gone" and "t_done_ns" in entry
    assert len(entry["chunks"]) < 50  # it stopped writing once the client had gone


def test_the_client_reads_a_body_larger_than_its_read_buffer():
    config = MockConfig(ttft_ms=1, itl_ms=0, default_output_tokens=2)
    with MockServerThread(config) as mock:
        for i in range(400):  # a request log of a few hundred KiB
            mock.server.log.append({"request_id": f"r{i}", "chunks": [[i, 1, i]] * 20})
        endpoint = parse_endpoint(mock.url)
        payload = build_request(endpoint, "GET", "/_mock/log", b"", {})

        async def fetch():
            protocol = await open_connection(endpoint)
            _t_send, reader = await exchange(protocol, payload, 10.0)
            protocol.transport.close()
            return reader

        reader = run_event_loop(fetch())
    body = b"".join(piece for _t, piece in reader.body_pieces)
    assert reader.status == 200 and reader.error is None
    assert len(body) > 64 * 1024 and len(reader.body_pieces) > 1
    assert len(json.loads(body)["requests"]) == 400


def test_mock_process_stops_cleanly_on_sigterm_and_reports_its_scheduling():
    mock = MockProcess(MockConfig(), max_seconds=60)
    with mock:
        with urllib.request.urlopen(mock.url + "/health", timeout=5) as response:
            assert json.load(response) == {"ok": True}
        view = process_scheduling(mock.process.pid)
        assert view["pid"] == mock.process.pid
        assert view["policy"] == process_scheduling()["policy"]  # inherited from the parent
    try:
        assert mock.process.wait(5) == 0
    except subprocess.TimeoutExpired:
        pytest.fail("the mock did not stop on SIGTERM")


def test_a_stop_asked_for_before_the_loop_runs_is_not_lost():
    core = Core(lambda connection: None)
    core.listen("127.0.0.1", 0)
    core.stop()  # e.g. SIGTERM between binding and serving
    started = time.monotonic()
    core.run(max_seconds=30)
    core.close()
    assert time.monotonic() - started < 5


def test_mock_process_can_be_pinned_to_a_cpu():
    cpu = min(os.sched_getaffinity(0))
    with MockProcess(MockConfig(), max_seconds=60, cpus={cpu}) as mock:
        assert process_scheduling(mock.process.pid)["cpus"] == [cpu]


def test_a_mock_process_that_cannot_be_pinned_is_not_left_running(monkeypatch):
    started = []
    original = subprocess.Popen

    def recording_popen(*args, **kwargs):
        started.append(original(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(subprocess, "Popen", recording_popen)
    with pytest.raises(OSError):
        MockProcess(MockConfig(), max_seconds=60, cpus={10_000})  # no such CPU
    assert started and started[0].poll() is not None

"""Between nodes: TCP throughput, RTT, jitter and loss to a peer running `net-serve`, and
the RDMA devices sysfs lists (docs/metrics.md#between-nodes).

`diligence-harness net-serve` on one node answers one request per connection, named by
the first line the client sends:

- `ECHO`: every byte is sent back until the client closes (round trips);
- `SINK`: bytes are read and dropped until the client closes, then the count received is
  answered as one line (the client's send throughput, confirmed by the peer);
- `SOURCE <ms>`: bytes are sent for that long (at most `MAX_TRANSFER_S`), then the
  connection is closed (the client's receive throughput);
- nothing: the connection is closed (a TCP-connect probe, as `netprobe` times it).

Every transfer is bounded in time on both sides, and the server stops by itself after
`--max-seconds`. The raw samples (cumulative bytes against monotonic time, per stream)
travel in the bundle, so the server recomputes the throughput from them.
"""

import glob
import os
import re
import socket
import socketserver
import threading
import time

from diligence_harness import metrics
from diligence_harness.clock import now_ns
from diligence_harness.netprobe import parse_target, rtt_summary

DEFAULT_PORT = 5201
BLOCK_BYTES = 256 * 1024
SAMPLE_INTERVAL_S = 0.05
MAX_TRANSFER_S = 30.0
MAX_STREAMS = 16
IDLE_TIMEOUT_S = 10.0
ECHO_PAYLOAD = b"diligence-echo-payload-64-bytes-".ljust(64, b".")
_HEADER_BYTES = 64


# --- the server ---------------------------------------------------------------------------


def _read_line(sock: socket.socket) -> bytes | None:
    """The request line, read a byte at a time (nothing after it is consumed)."""
    line = b""
    while len(line) < _HEADER_BYTES:
        byte = sock.recv(1)
        if not byte:
            return line or None
        if byte == b"\n":
            return line
        line += byte
    return line


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(IDLE_TIMEOUT_S)
        try:
            line = _read_line(sock)
            if not line:
                return  # a TCP-connect probe
            command, _, argument = line.decode("ascii", "replace").strip().partition(" ")
            if command == "ECHO":
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._echo(sock)
            elif command == "SINK":
                self._sink(sock)
            elif command == "SOURCE":
                self._source(sock, argument)
        except OSError:
            return  # the client went away or went quiet: nothing to answer

    def _echo(self, sock: socket.socket) -> None:
        deadline = time.monotonic() + MAX_TRANSFER_S
        while time.monotonic() < deadline:
            data = sock.recv(4096)
            if not data:
                return
            sock.sendall(data)

    def _sink(self, sock: socket.socket) -> None:
        deadline = time.monotonic() + MAX_TRANSFER_S + IDLE_TIMEOUT_S
        buffer = bytearray(BLOCK_BYTES)
        received = 0
        while time.monotonic() < deadline:
            n = sock.recv_into(buffer)
            if not n:
                break
            received += n
        sock.sendall(f"{received}\n".encode())

    def _source(self, sock: socket.socket, argument: str) -> None:
        try:
            seconds = min(max(int(argument), 0) / 1000, MAX_TRANSFER_S)
        except ValueError:
            return
        block = bytes(BLOCK_BYTES)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            sock.sendall(block)
        sock.shutdown(socket.SHUT_WR)


class NetServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.address_family = family
        super().__init__((host, port), _Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]


class NetServerThread:
    """`net-serve` in a background thread (for tests)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.server = NetServer(host, 0)
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> "NetServerThread":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    @property
    def peer(self) -> str:
        host = self.server.server_address[0]
        return f"{host if isinstance(host, str) else host.decode()}:{self.server.port}"


def serve(host: str, port: int, max_seconds: float) -> None:
    """`diligence-harness net-serve`: print where it listens as JSON, serve until stopped."""
    import json
    import signal
    import sys

    server = NetServer(host, port)
    print(json.dumps({"event": "listening", "host": host, "port": server.port}), flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _signum, _frame: stop.set())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2})
    thread.daemon = True
    thread.start()
    stop.wait(max_seconds)
    server.shutdown()
    server.server_close()
    print(json.dumps({"event": "stopped"}), file=sys.stderr, flush=True)


# --- the client ----------------------------------------------------------------------------


def echo_rtt(
    host: str, port: int, count: int = 20, interval_s: float = 0.05, timeout_s: float = 2.0
) -> dict:
    """Round trips of a 64-byte payload over one connection (TCP_NODELAY); a payload not
    back within the timeout, or a connection that fails, is lost (and the next one
    reconnects). Jitter and loss as `netprobe` defines them."""
    rtts: list[float] = []
    errors: dict[str, int] = {}
    sock: socket.socket | None = None
    for i in range(count):
        try:
            if sock is None:
                sock = socket.create_connection((host, port), timeout=timeout_s)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.sendall(b"ECHO\n")
            start = now_ns()
            sock.sendall(ECHO_PAYLOAD)
            _receive_exactly(sock, len(ECHO_PAYLOAD))
            rtts.append((now_ns() - start) / 1e6)
        except OSError as exc:
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            if sock is not None:
                sock.close()
            sock = None
        if i + 1 < count:
            time.sleep(interval_s)
    if sock is not None:
        sock.close()
    return {
        "host": host,
        "port": port,
        "method": "tcp_echo",
        "payload_bytes": len(ECHO_PAYLOAD),
        "count": count,
        "interval_s": interval_s,
        "timeout_s": timeout_s,
        **rtt_summary(rtts, count),
        "errors": errors,
    }


def _receive_exactly(sock: socket.socket, size: int) -> None:
    got = 0
    while got < size:
        chunk = sock.recv(size - got)
        if not chunk:
            raise ConnectionResetError("the peer closed the connection")
        got += len(chunk)


class _Clock:
    """The common start of every stream of one transfer, set when they are all connected."""

    def __init__(self) -> None:
        self.t0 = 0

    def start(self) -> None:
        self.t0 = now_ns()


def _send_stream(host, port, duration_s, timeout_s, barrier, clock, out: dict) -> None:
    samples, sent = out["samples"], 0
    try:
        sock = socket.create_connection((host, port), timeout=timeout_s)
    except OSError as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        barrier.abort()
        return
    with sock:
        try:
            sock.sendall(b"SINK\n")
            barrier.wait(timeout_s)
            block = bytes(BLOCK_BYTES)
            deadline = clock.t0 + int(duration_s * 1e9)
            next_sample = clock.t0 + int(SAMPLE_INTERVAL_S * 1e9)
            now = now_ns()
            while now < deadline:
                sock.sendall(block)
                sent += BLOCK_BYTES
                now = now_ns()
                if now >= next_sample:
                    samples.append([now - clock.t0, sent])
                    next_sample += int(SAMPLE_INTERVAL_S * 1e9)
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(timeout_s + IDLE_TIMEOUT_S)
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = sock.recv(64)
                if not chunk:
                    break
                answer += chunk
            confirmed = int(answer.strip() or b"-1")
            out["sent_bytes"] = sent
            if confirmed >= 0:
                # The last sample is what the peer confirmed receiving, when it said so.
                out["confirmed_bytes"] = confirmed
                samples.append([now_ns() - clock.t0, confirmed])
        except (OSError, ValueError, threading.BrokenBarrierError) as exc:
            out["sent_bytes"] = sent
            out["error"] = f"{type(exc).__name__}: {exc}"


def _receive_stream(host, port, duration_s, timeout_s, barrier, clock, out: dict) -> None:
    samples, received = out["samples"], 0
    try:
        sock = socket.create_connection((host, port), timeout=timeout_s)
    except OSError as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        barrier.abort()
        return
    with sock:
        try:
            barrier.wait(timeout_s)
            sock.sendall(f"SOURCE {int(duration_s * 1000)}\n".encode())
            buffer = bytearray(BLOCK_BYTES)
            next_sample = clock.t0 + int(SAMPLE_INTERVAL_S * 1e9)
            sock.settimeout(timeout_s + IDLE_TIMEOUT_S)
            while True:
                n = sock.recv_into(buffer)
                now = now_ns()
                if not n:
                    break
                received += n
                if now >= next_sample:
                    samples.append([now - clock.t0, received])
                    next_sample += int(SAMPLE_INTERVAL_S * 1e9)
            samples.append([now - clock.t0, received])
            out["confirmed_bytes"] = received
        except (OSError, threading.BrokenBarrierError) as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"
        out["received_bytes"] = received


def transfer(
    host: str,
    port: int,
    direction: str,
    duration_s: float = 3.0,
    streams: int = 4,
    timeout_s: float = 5.0,
) -> dict:
    """Bytes over time in one direction (`send`: this node to the peer; `receive`: the
    peer to this node), over `streams` parallel connections started together."""
    duration_s = min(max(duration_s, 0.05), MAX_TRANSFER_S)
    streams = min(max(streams, 1), MAX_STREAMS)
    clock = _Clock()
    barrier = threading.Barrier(streams, action=clock.start)
    per_stream: list[dict] = [
        {"samples": [], "confirmed_bytes": None, "error": None} for _ in range(streams)
    ]
    work = _send_stream if direction == "send" else _receive_stream
    threads = [
        threading.Thread(
            target=work, args=(host, port, duration_s, timeout_s, barrier, clock, out), daemon=True
        )
        for out in per_stream
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(duration_s + 2 * timeout_s + IDLE_TIMEOUT_S)
    return {
        "direction": direction,
        "streams": streams,
        "duration_s": duration_s,
        "block_bytes": BLOCK_BYTES,
        "sample_interval_s": SAMPLE_INTERVAL_S,
        "per_stream": per_stream,
        "gbit_s": throughput_gbit_s(per_stream),  # advisory: the server recomputes it
    }


def throughput_gbit_s(per_stream: list[dict]) -> float | None:
    """Every stream's last sample summed, over the latest of their times: bits per
    nanosecond are Gbit/s (docs/metrics.md#between-nodes)."""
    last = [s["samples"][-1] for s in per_stream if s.get("samples")]
    elapsed = max((t for t, _bytes in last), default=0)
    if not last or elapsed <= 0:
        return None
    return sum(b for _t, b in last) * 8 / elapsed


# --- RDMA devices from sysfs ------------------------------------------------------------------

_RATE = re.compile(r"([\d.]+)\s*Gb/sec")


def rate_gbit(text: str | None) -> float | None:
    """'400 Gb/sec (4X NDR)' → 400.0; None when the text carries no rate."""
    match = _RATE.search(text or "")
    return float(match.group(1)) if match else None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def rdma_devices(sysfs_root: str = "/sys") -> dict:
    """Each RDMA device under `<root>/class/infiniband` with its ports: the raw text of
    `rate`, `link_layer`, `state` and `phys_state` (the server parses them itself)."""
    base = os.path.join(sysfs_root, "class", "infiniband")
    devices = []
    for device_dir in sorted(glob.glob(os.path.join(base, "*"))):
        ports = []
        for port_dir in sorted(glob.glob(os.path.join(device_dir, "ports", "*"))):
            fields = {
                name: _read(os.path.join(port_dir, name))
                for name in ("rate", "link_layer", "state", "phys_state")
            }
            port = os.path.basename(port_dir)
            ports.append({"port": port, **fields, "rate_gbit": rate_gbit(fields["rate"])})
        devices.append(
            {
                "name": os.path.basename(device_dir),
                "hca_type": _read(os.path.join(device_dir, "hca_type")),
                "fw_ver": _read(os.path.join(device_dir, "fw_ver")),
                "ports": ports,
            }
        )
    return {
        "sysfs_root": sysfs_root,
        "path": base,
        "present": os.path.isdir(base),
        "devices": devices,
    }


def run_netpeer(
    peer: str,
    *,
    duration_s: float = 3.0,
    streams: int = 4,
    count: int = 20,
    sysfs_root: str = "/sys",
) -> dict:
    host, port = parse_target(peer, DEFAULT_PORT)
    rtt = echo_rtt(host, port, count=count)
    send = transfer(host, port, "send", duration_s=duration_s, streams=streams)
    receive = transfer(host, port, "receive", duration_s=duration_s, streams=streams)
    return {
        "peer": {"host": host, "port": port},
        "rtt": rtt,
        "throughput": [send, receive],
        "rdma": rdma_devices(sysfs_root),
        "summary_method": metrics.PERCENTILE_METHOD,
    }

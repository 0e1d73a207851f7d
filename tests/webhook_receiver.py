"""A webhook receiver for the tests: an HTTP server on 127.0.0.1 in a thread of the test.

It answers each POST with the next status of its script (the last one repeats) and keeps
what it was sent, so a test checks the body and headers as a real receiver would.
"""

import hashlib
import hmac
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses) or [200]
        self.received: list[Received] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                receiver.received.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                script = receiver.statuses
                status = script.pop(0) if len(script) > 1 else script[0]
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok" if status < 300 else b"receiver trouble")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hooks/diligence"

    def start(self) -> "Receiver":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def signature_verifies(secret: str, received: Received) -> bool:
    """Check a delivery as a receiver should: HMAC-SHA256 over ``<timestamp>.<body>``."""
    timestamp = received.headers["x-diligence-timestamp"]
    expected = hmac.new(
        secret.encode(), timestamp.encode() + b"." + received.body, hashlib.sha256
    ).hexdigest()
    return hmac.compare_digest(received.headers["x-diligence-signature"], f"sha256={expected}")

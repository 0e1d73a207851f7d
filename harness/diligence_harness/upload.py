"""POST a written bundle to the app, with retries and exponential backoff.

Retry on connection errors, timeouts, 5xx and 429 (honouring Retry-After up to a
cap); never on other 4xx, which will not change by asking again (a bad token,
a rejected bundle). The body is the exact bytes on disk, so the server's
SHA-256 of the body is the bundle's identity.
"""

import hashlib
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable

MAX_RETRY_AFTER_S = 60.0


def _retry_after(headers) -> float | None:
    value = headers.get("Retry-After") if headers else None
    try:
        return min(float(value), MAX_RETRY_AFTER_S) if value else None
    except ValueError:
        return None


def upload_bundle(
    url: str,
    data: bytes,
    token: str,
    *,
    attempts: int = 5,
    base_delay_s: float = 1.0,
    timeout_s: float = 120.0,
    sleep: Callable[[float], None] = time.sleep,
) -> dict:
    """Returns a receipt: outcome, HTTP status, attempts made and the bundle digest."""
    digest = hashlib.sha256(data).hexdigest()
    history = []
    for attempt in range(1, attempts + 1):
        request = urllib.request.Request(url, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Token {token}")
        request.add_header("X-Bundle-Sha256", digest)
        retry_after = None
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                body = response.read(2000).decode("utf-8", errors="replace")
                history.append({"attempt": attempt, "status": response.status})
                return _receipt("uploaded", response.status, history, digest, body)
        except urllib.error.HTTPError as exc:
            body = exc.read(2000).decode("utf-8", errors="replace")
            history.append({"attempt": attempt, "status": exc.code})
            if exc.code != 429 and exc.code < 500:
                return _receipt("rejected", exc.code, history, digest, body)
            retry_after = _retry_after(exc.headers)
        except (urllib.error.URLError, OSError) as exc:  # refused, reset, timeout, DNS
            history.append({"attempt": attempt, "status": None, "error": str(exc)[:300]})
        if attempt < attempts:
            # Exponential backoff with jitter so many harnesses do not retry in step.
            delay = base_delay_s * 2 ** (attempt - 1) * (0.5 + random.random() / 2)
            sleep(max(delay, retry_after or 0.0))
    return _receipt("failed", history[-1].get("status"), history, digest, None)


def _receipt(outcome: str, status, history: list, digest: str, body: str | None) -> dict:
    return {
        "outcome": outcome,
        "http_status": status,
        "attempts": history,
        "bundle_sha256": digest,
        "response_body": body,
    }

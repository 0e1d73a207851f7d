"""POST a written bundle to the app, with retries and exponential backoff.

Retry on connection errors, timeouts, 5xx and 429 (honouring Retry-After up to a
cap); never on other 4xx, which will not change by asking again (a bad token,
a rejected bundle). The body is the exact bytes on disk, so the server's
SHA-256 of the body is the bundle's identity.

A server whose workers read uploads answers 202 with a status URL as soon as
the bytes are stored; the upload then polls it until the bundle is verified
(outcome "uploaded") or refused ("rejected"). A server that failed to read it
is sent the same bytes again, as after a 5xx. If no answer comes within
``wait_s`` the outcome is "pending", with the status URL to look at later.

``verdict_lines`` says in a few plain lines what came of it: the verdict and the
evidence page where the bundle was verified, else the status URL to look at.
"""

import hashlib
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

MAX_RETRY_AFTER_S = 60.0
MAX_POLL_INTERVAL_S = 5.0


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
    wait_s: float = 600.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict:
    """Returns a receipt: outcome, HTTP status, attempts made and the bundle digest."""
    digest = hashlib.sha256(data).hexdigest()
    history, status = [], {}
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
                location = response.headers.get("Location")
            if response.status != 202:  # verified before the answer: the body is the bundle
                stored = _stored_bundle(body)
                return _receipt("uploaded", response.status, history, digest, body, stored)
            status_url = _status_url(body, location)
            if status_url is None:
                return _receipt("pending", 202, history, digest, body)
            status = _poll(
                urllib.parse.urljoin(url, status_url),
                token,
                timeout_s=timeout_s,
                wait_s=wait_s,
                sleep=sleep,
                clock=clock,
            )
            state = status.get("state")
            if state == "verified":
                return _receipt("uploaded", 202, history, digest, json.dumps(status), status)
            if state == "refused":
                return _receipt("rejected", 202, history, digest, json.dumps(status), status)
            if state != "failed":
                return _receipt("pending", 202, history, digest, json.dumps(status), status)
            # The server could not read it (its fault, not the bundle's): send it again.
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
    return _receipt("failed", history[-1].get("status"), history, digest, None, status)


def _stored_bundle(body: str) -> dict | None:
    """The verdict and evidence page of a bundle the server verified before answering."""
    try:
        bundle = json.loads(body)
    except ValueError:
        return None
    if not isinstance(bundle, dict) or bundle.get("id") is None:
        return None
    return {
        "state": "verified",
        "bundle": bundle["id"],
        "verdict": bundle.get("verdict"),
        "evidence_url": bundle.get("evidence_url"),
    }


def _status_url(body: str, location: str | None) -> str | None:
    try:
        stated = json.loads(body).get("status_url")
    except (ValueError, AttributeError):
        stated = None
    return stated or location


def _poll(url: str, token: str, *, timeout_s, wait_s, sleep, clock) -> dict:
    """The upload's status once it is finished, or the last one seen when ``wait_s`` ran out."""
    deadline, interval, last = clock() + wait_s, 0.25, {"state": "received", "status_url": url}
    while True:
        request = urllib.request.Request(url, method="GET")
        request.add_header("Authorization", f"Token {token}")
        request.add_header("Accept", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                last = {**json.loads(response.read(100_000)), "status_url": url}
        except urllib.error.HTTPError as exc:
            if exc.code != 429 and exc.code < 500:  # the token expired, or no such upload
                return {**last, "state": "unknown", "poll_error": _poll_error(exc)}
        except (urllib.error.URLError, OSError, ValueError):
            pass  # the server is restarting: ask again
        if last.get("state") != "received" or clock() >= deadline:
            return last
        sleep(min(interval, max(deadline - clock(), 0)))
        interval = min(interval * 2, MAX_POLL_INTERVAL_S)


def _poll_error(exc: urllib.error.HTTPError) -> str:
    """What the server said when it would not tell the upload's state (the bundle is
    stored; a person can look it up on the case's evidence page)."""
    try:
        detail = json.loads(exc.read(2000)).get("detail")
    except (ValueError, AttributeError, OSError):
        detail = None
    return f"HTTP {exc.code}: {detail}" if detail else f"HTTP {exc.code}"


def _receipt(
    outcome: str, status, history: list, digest: str, body: str | None, upload=None
) -> dict:
    receipt = {
        "outcome": outcome,
        "http_status": status,
        "attempts": history,
        "bundle_sha256": digest,
        "response_body": body,
    }
    if upload:
        receipt["upload"] = {
            k: upload.get(k)
            for k in (
                "state",
                "status_url",
                "bundle",
                "verdict",
                "evidence_url",
                "detail",
                "field",
                "poll_error",
            )
            if upload.get(k) not in (None, "")
        }
    return receipt


def verdict_lines(receipt: dict, wait_s: float) -> list[str]:
    """What a person reads at the end of a run: the verdict and where to see it."""
    upload = receipt.get("upload") or {}
    outcome = receipt["outcome"]
    if outcome == "uploaded":
        lines = [f"verdict: {upload.get('verdict') or 'not given'}"]
        if upload.get("evidence_url"):
            lines.append(f"evidence page: {upload['evidence_url']}")
        elif upload.get("status_url"):
            lines.append(f"upload status: {upload['status_url']}")
        return lines
    if outcome == "pending":
        if upload.get("poll_error"):
            waited = f"the server would not say how it stands ({upload['poll_error']})"
        else:
            waited = f"no verdict within {wait_s:g} s"
        if upload.get("status_url"):
            return [f"{waited}; the upload's status: {upload['status_url']}"]
        return [f"{waited}; the case's evidence page will show the upload"]
    if outcome == "rejected":
        reason = upload.get("detail") or _detail(receipt.get("response_body"))
        return [
            f"upload refused (HTTP {receipt.get('http_status')}): {reason or 'no reason given'}"
        ]
    return [
        f"upload failed after {len(receipt.get('attempts') or [])} attempts; the bundle is kept"
    ]


def _detail(body: str | None) -> str | None:
    try:
        detail = json.loads(body or "").get("detail")
    except (ValueError, AttributeError):
        return None
    return str(detail) if detail else None

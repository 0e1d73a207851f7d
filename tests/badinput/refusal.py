"""Send one bad upload; check it was refused with a reason and that nothing was stored.

Reusable for any upload: give ``assert_refused`` a callable that sends a Payload and
returns the response, a callable that snapshots what is stored, and a callable that
reads the refusal's reason out of the response (and fails if there is none):

    assert_refused(
        payload,
        send=lambda p: client.post(url, {"file": as_upload(p)}),
        snapshot=lambda: stored_state(media_root),
        reason=api_reason,
    )
"""

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Count, Max

from tests.badinput.corpus import Payload


def stored_state(*roots: Path) -> dict:
    """Rows (count and highest key) of every table, history tables included, and every file."""
    rows = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or not model._meta.managed:
            continue
        rows[model._meta.label] = model._base_manager.aggregate(n=Count("pk"), top=Max("pk"))
    files = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*")) if Path(root).exists() else ():
            if path.is_file():
                files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {"rows": rows, "files": files}


def _difference(before: dict, after: dict) -> dict:
    changed = {}
    for part in ("rows", "files"):
        for key in set(before[part]) | set(after[part]):
            if before[part].get(key) != after[part].get(key):
                changed[key] = (before[part].get(key), after[part].get(key))
    return changed


def assert_refused(
    payload: Payload,
    *,
    send: Callable[[Payload], Any],
    snapshot: Callable[[], Any],
    reason: Callable[[Any], str],
) -> str:
    """Refused (4xx, or a "not valid" verdict), with a stated reason, and nothing stored."""
    before = snapshot()
    response = send(payload)
    assert response.status_code < 500, f"{payload!r} made the server fail"
    stated = reason(response)
    assert stated and stated.strip(), f"{payload!r} was refused without a reason"
    after = snapshot()
    if isinstance(before, dict) and isinstance(after, dict) and before != after:
        raise AssertionError(f"{payload!r} stored something: {_difference(before, after)}")
    assert after == before, f"{payload!r} stored something"
    return stated


def api_reason(response) -> str:
    """The ``detail`` (or first field error) of a 4xx JSON refusal."""
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    body = response.json()
    if "detail" in body:
        return str(body["detail"])
    field, messages = next(iter(body.items()))
    return f"{field}: {messages}"


def as_upload(payload: Payload) -> SimpleUploadedFile:
    return SimpleUploadedFile(payload.filename, payload.body, content_type=payload.content_type)


class CountingInput:
    """A request body that records how much of it the server read."""

    def __init__(self, body: bytes) -> None:
        self.body, self.bytes_read = body, 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.body) if size is None or size < 0 else self.bytes_read + size
        chunk = self.body[self.bytes_read : end]
        self.bytes_read += len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:
        end = self.body.find(b"\n", self.bytes_read)
        end = len(self.body) if end < 0 else end + 1
        if size is not None and size >= 0:
            end = min(end, self.bytes_read + size)
        chunk = self.body[self.bytes_read : end]
        self.bytes_read += len(chunk)
        return chunk

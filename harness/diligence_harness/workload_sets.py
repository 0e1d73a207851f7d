"""The case's own workload sets: a prompt set (`--prompt-set`) and a core sample set
(`--sample-set`), read from a JSONL file or fetched from the case with the harness token.

A prompt set is streamed: reading it keeps each prompt's place in the file, not its text,
and a request's prompt is read back when the request is prepared (before its cell, never
inside a measured window). The SHA-256 is over the file's exact bytes, the digest the app
stored the set under; the bundle records it (`workload_sets`), never the text.

Line format (the app refuses the same mistakes, with line numbers, when the set is uploaded):

- prompt set: `{"id", "prompt"}`, optional `tier` (short / medium / long; a prompt without
  one is sent in a set of its own, `untiered`), `expected_output_tokens`, `tags`;
- core sample set: `{"id", "input", "expected", "comparison": {"kind", ...}}`, optional
  `core` (default true), `system`, `max_tokens` (default 64), `tags`.
"""

import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

TIERS = ("short", "medium", "long")
UNTIERED = "untiered"
COMPARISONS = ("exact", "identical", "numeric", "regex", "json")
SAMPLE_MAX_TOKENS = 64
SOURCE_FILE = "file"
SOURCE_CASE = "case"
SOURCE_BUILT_IN = "built-in"
CASE_SET_PREFIX = "case"
MAX_LISTED_ERRORS = 20
CHUNK_BYTES = 64 * 1024


class SetFileError(ValueError):
    """The set cannot be used; nothing is sent."""


@dataclass
class FilePrompts(Sequence):
    """The prompts of one tier, read back from the file by their place in it."""

    path: str
    offsets: array = field(default_factory=lambda: array("q"))
    lengths: array = field(default_factory=lambda: array("q"))
    chars_total: int = 0

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        with open(self.path, "rb") as handle:
            handle.seek(self.offsets[index])
            line = handle.read(self.lengths[index])
        return json.loads(line.decode("utf-8"))["prompt"]


@dataclass
class SetFile:
    """One set as the bundle records it."""

    kind: str  # "prompts" or "samples"
    source: str  # "file" or "case"
    name: str
    path: str
    sha256: str
    count: int
    tiers: dict[str, FilePrompts] = field(default_factory=dict)
    items: list[dict] = field(default_factory=list)

    def describe(self) -> dict:
        described = {
            "source": self.source,
            "name": self.name,
            "sha256": self.sha256,
            "count": self.count,
        }
        if self.kind == "prompts":
            described["tiers"] = {tier: len(prompts) for tier, prompts in self.tiers.items()}
        return described


class _Lines:
    """The file's lines: (line number, offset, raw line without its newline); the digest of
    every byte read so far in ``digest``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.digest = hashlib.sha256()

    def __iter__(self):
        offset = 0
        with open(self.path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                self.digest.update(raw)
                yield number, offset, raw.rstrip(b"\r\n")
                offset += len(raw)


def _record(raw: bytes, number: int) -> dict | None:
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SetFileError(f"line {number}: not UTF-8 text") from None
    if not text.strip():
        return None
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SetFileError(f"line {number}: not valid JSON: {exc}") from None
    if not isinstance(record, dict):
        raise SetFileError(f"line {number}: each line must be one JSON object")
    return record


def _text(record: dict, name: str, number: int) -> str:
    value = record.get(name)
    if not isinstance(value, str) or (name != "expected" and not value.strip()):
        raise SetFileError(f"line {number}: {name!r} must be non-empty text")
    return value


class _Errors:
    def __init__(self) -> None:
        self.found: list[str] = []
        self.count = 0

    def add(self, error: SetFileError) -> None:
        self.count += 1
        if len(self.found) < MAX_LISTED_ERRORS:
            self.found.append(str(error))

    def raise_any(self, path: str) -> None:
        if self.count:
            more = (
                f" (and {self.count - len(self.found)} more)"
                if self.count > len(self.found)
                else ""
            )
            raise SetFileError(f"{path}: " + "; ".join(self.found) + more)


def read_prompt_set(path: str, *, source: str = SOURCE_FILE, name: str | None = None) -> SetFile:
    """Check every line and keep each prompt's place, by tier, in file order."""
    tiers: dict[str, FilePrompts] = {}
    ids: set[bytes] = set()
    errors, lines, count = _Errors(), _Lines(path), 0
    for number, offset, raw in lines:
        try:
            record = _record(raw, number)
            if record is None:
                continue
            _id(record, number, ids)
            prompt = _text(record, "prompt", number)
            tier = record.get("tier")
            if tier is not None and tier not in TIERS:
                raise SetFileError(f"line {number}: unknown tier {tier!r} (short, medium or long)")
        except SetFileError as error:
            errors.add(error)
            continue
        prompts = tiers.setdefault(tier or UNTIERED, FilePrompts(path))
        prompts.offsets.append(offset)
        prompts.lengths.append(len(raw))
        prompts.chars_total += len(prompt)
        count += 1
    errors.raise_any(path)
    if not count:
        raise SetFileError(f"{path}: the set holds no prompt")
    order = [t for t in (*TIERS, UNTIERED) if t in tiers]
    return SetFile(
        kind="prompts",
        source=source,
        name=name or os.path.basename(path),
        path=path,
        sha256=lines.digest.hexdigest(),
        count=count,
        tiers={t: tiers[t] for t in order},
    )


def _id(record: dict, number: int, ids: set[bytes]) -> str:
    item_id = _text(record, "id", number)
    key = hashlib.blake2b(item_id.encode(), digest_size=16).digest()
    if key in ids:
        raise SetFileError(f"line {number}: duplicate id {item_id!r}")
    ids.add(key)
    return item_id


def _comparison(record: dict, number: int) -> dict:
    comparison = record.get("comparison")
    if not isinstance(comparison, dict) or comparison.get("kind") not in COMPARISONS:
        raise SetFileError(
            f"line {number}: 'comparison' must be an object whose kind is one of "
            + ", ".join(COMPARISONS)
        )
    return dict(comparison)


def read_sample_set(path: str, *, source: str = SOURCE_FILE, name: str | None = None) -> SetFile:
    """Every item of a core sample set, in the shape the correctness step sends."""
    from diligence_harness.correctness_set import item_digest

    items: list[dict] = []
    ids: set[bytes] = set()
    errors, lines = _Errors(), _Lines(path)
    for number, _offset, raw in lines:
        try:
            record = _record(raw, number)
            if record is None:
                continue
            item_id = _id(record, number, ids)
            messages = [{"role": "user", "content": _text(record, "input", number)}]
            if isinstance(record.get("system"), str):
                messages.insert(0, {"role": "system", "content": record["system"]})
            item = {
                "id": item_id,
                "core": bool(record.get("core", True)),
                "messages": messages,
                "max_tokens": int(record.get("max_tokens") or SAMPLE_MAX_TOKENS),
                "comparison": _comparison(record, number),
                "expected": _text(record, "expected", number),
            }
        except SetFileError as error:
            errors.add(error)
            continue
        item["input_sha256"] = item_digest(item)
        items.append(item)
    errors.raise_any(path)
    if not items:
        raise SetFileError(f"{path}: the set holds no item")
    return SetFile(
        kind="samples",
        source=source,
        name=name or os.path.basename(path),
        path=path,
        sha256=lines.digest.hexdigest(),
        count=len(items),
        items=items,
    )


def sets_url(args) -> str | None:
    """Where the case's sets are fetched: `--sets-url`, else next to the upload URL."""
    explicit = getattr(args, "sets_url", None)
    if explicit:
        return explicit.rstrip("/") + "/"
    upload = getattr(args, "upload", None)
    if not upload:
        return None
    parts = urllib.parse.urlsplit(upload)
    path = parts.path.rstrip("/")
    if path.endswith("/evidence"):
        path = path[: -len("/evidence")]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path + "/harness/sets/", "", ""))


def fetch_set(base_url: str, token: str, kind: str, sha256: str | None, directory: str) -> tuple:
    """Download one set of the token's case to a file, streamed and checked by its digest.

    Returns (path, sha256, file name). The server names the set's digest in
    `X-Content-SHA256` and its name in `Content-Disposition`.
    """
    query = {"kind": kind} | ({"sha256": sha256} if sha256 else {})
    url = base_url + "?" + urllib.parse.urlencode(query)
    request = urllib.request.Request(url, method="GET")
    request.add_header("Authorization", f"Token {token}")
    digest, filename = hashlib.sha256(), None
    handle, path = tempfile.mkstemp(prefix=f"diligence-{kind}-", suffix=".jsonl", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(request, timeout=60) as answer:
            stated = (answer.headers.get("X-Content-SHA256") or "").lower()
            filename = answer.headers.get_filename()
            while chunk := answer.read(CHUNK_BYTES):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        os.unlink(path)
        detail = exc.read(300).decode("utf-8", "replace")
        raise SetFileError(
            f"the case's {kind} set could not be fetched: HTTP {exc.code} {detail}"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        os.unlink(path)
        raise SetFileError(f"the case's {kind} set could not be fetched: {exc}") from None
    found = digest.hexdigest()
    if stated != found or (sha256 and found != sha256.lower()):
        os.unlink(path)
        raise SetFileError(
            f"the fetched {kind} set hashes to {found}, not the digest the server stated "
            f"({stated or 'none'})"
        )
    return path, found, filename


def resolve(args, kind: str, value: str | None, directory: str | None = None) -> SetFile | None:
    """The set `--prompt-set`/`--sample-set` names: a file, `case` or `case:SHA256`."""
    if not value:
        return None
    reader = read_prompt_set if kind == "prompts" else read_sample_set
    if value != CASE_SET_PREFIX and not value.startswith(CASE_SET_PREFIX + ":"):
        return reader(value, source=SOURCE_FILE)
    base, token = sets_url(args), getattr(args, "token", None)
    if not base or not token:
        raise SetFileError(
            f"fetching the case's {kind} set needs --token and --upload (or --sets-url)"
        )
    wanted = value.partition(":")[2] or None
    path, found, filename = fetch_set(base, token, kind, wanted, directory or tempfile.gettempdir())
    return reader(path, source=SOURCE_CASE, name=filename or f"case set {found[:12]}")

"""Reading a customer's workload set (JSONL) line by line: every refusal, and the statistics.

Two kinds of set (docs/rules/evidence.md#workload-sets):

- a **prompt set**: one prompt per line, ``{"id", "prompt"}`` with an optional ``tier``
  (short / medium / long), ``expected_output_tokens`` and ``tags``;
- a **core sample set**: one input per line with its expected answer and how an answer
  is compared, ``{"id", "input", "expected", "comparison"}`` with optional ``core``,
  ``system``, ``max_tokens`` and ``tags``.

``SetReader`` takes the bytes in chunks and keeps only the line being read, the ids seen
(to refuse a duplicate) and running totals, so a set of any length is read in flat
memory (``benchmarks/workload_sets.py``). The SHA-256 is over the exact bytes, the same
digest the harness computes over the file it sends and records in its bundle.

Token lengths are an estimate, the same one the harness's built-in prompt sets are sized
by (about 1.3 tokens per English word, harness ``prompts.py``), with each CJK character
counted as one token, since Chinese text has no spaces between words. It is a statistic
for people to read, never a measurement.
"""

import hashlib
import json
import math
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import regex
from django.utils.translation import gettext as _

from apps.core import formats

# Whether the offer's newest load test ran the case's own prompt set, each tier at its
# share (docs/rules/evidence.md#a-representative-load-test), is a finding of the register
# (docs/rules/findings.md#findings-of-the-areas).
LOAD_NOT_REPRESENTATIVE = "workloads.load_not_representative"
REGISTER_FINDINGS: tuple[str, ...] = (LOAD_NOT_REPRESENTATIVE,)

PROMPTS = "prompts"
SAMPLES = "samples"
TIERS = ("short", "medium", "long")
UNTIERED = "untiered"  # prompts without a tier: sent as a prompt set of their own
# How an answer is compared with the expected one (the harness and the server share these):
# "exact" after whitespace normalisation (the harness's own meaning), "identical" character
# for character, "numeric" within a tolerance, "regex" (the whole trimmed answer matches),
# "json" (equal as JSON values).
COMPARISONS = ("exact", "identical", "numeric", "regex", "json")
PROMPT_FIELDS = {"id", "prompt", "tier", "expected_output_tokens", "tags"}
SAMPLE_FIELDS = {"id", "input", "expected", "comparison", "core", "system", "max_tokens", "tags"}
COMPARISON_FIELDS = {"kind", "abs_tol", "rel_tol"}
MAX_LINE_BYTES = 2 * 1024 * 1024
MAX_ID_CHARS = 200
MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_OUTPUT_TOKENS = 131072
MAX_SAMPLE_TOKENS = 4096
MAX_PATTERN_CHARS = 1000
# An expected answer compared as JSON nests at most this deep. Answers are records of a few
# levels; far deeper is an attack on the parser (Python's recursion limit is 1,000 frames),
# and one bound, whatever the stack, makes the upload and every later judgement agree.
MAX_EXPECTED_JSON_DEPTH = 64
# A pattern is matched with a time bound (docs/rules/evidence.md#expected-answers): each
# answer gets PATTERN_TIMEOUT_S, and one run's patterns PATTERN_BUDGET_S together. A pattern
# written for an answer of a few lines matches in microseconds; one that backtracks without
# end, such as (a+)+$, is cut off and its item does not pass.
PATTERN_TIMEOUT_S = 0.1
PATTERN_BUDGET_S = 1.0
# What the harness sends when a sample does not say (its README, "--sample-set").
SAMPLE_MAX_TOKENS_DEFAULT = 64
# Refusals listed one by one; past this many only their number is kept.
MAX_LISTED_REFUSALS = 500
# Upper edges (estimated tokens) of the histogram's bins; the last bin is open-ended.
HISTOGRAM_EDGES = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
TOKENS_PER_WORD = 1.3
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def estimate_tokens(text: str) -> int:
    """About 1.3 tokens per space-separated word, and one per CJK character."""
    if text.isascii():  # most sets: no CJK character to look for
        return math.ceil(len(text.split()) * TOKENS_PER_WORD)
    cjk = len(_CJK.findall(text))
    words = len(_CJK.sub(" ", text).split())
    return cjk + math.ceil(words * TOKENS_PER_WORD)


def histogram_bin(tokens: int) -> int:
    for index, edge in enumerate(HISTOGRAM_EDGES):
        if tokens < edge:
            return index
    return len(HISTOGRAM_EDGES)


@dataclass
class LengthStats:
    """Estimated token lengths of a group of lines, in constant memory."""

    count: int = 0
    tokens_min: int | None = None
    tokens_max: int | None = None
    tokens_total: int = 0
    histogram: list[int] = field(default_factory=lambda: [0] * (len(HISTOGRAM_EDGES) + 1))

    def add(self, tokens: int) -> None:
        self.count += 1
        self.tokens_total += tokens
        self.tokens_min = tokens if self.tokens_min is None else min(self.tokens_min, tokens)
        self.tokens_max = tokens if self.tokens_max is None else max(self.tokens_max, tokens)
        self.histogram[histogram_bin(tokens)] += 1

    def as_dict(self) -> dict:
        return {
            "count": self.count,
            "tokens_min": self.tokens_min,
            "tokens_max": self.tokens_max,
            "tokens_mean": round(self.tokens_total / self.count, 1) if self.count else None,
            "histogram": list(self.histogram),
        }


@dataclass(frozen=True)
class LineRefusal:
    line: int  # 1-based; 0 for the file as a whole
    reason: str


class SetRefused(Exception):
    """The set is refused as a whole: every line's reason (the first ones) and how many."""

    def __init__(self, refusals: list[LineRefusal], total: int) -> None:
        super().__init__(f"{total} refusal(s)")
        self.refusals = refusals
        self.total = total


@dataclass
class SetSummary:
    sha256: str
    size_bytes: int
    item_count: int
    statistics: dict


class LineError(ValueError):
    pass


def _quoted(values) -> str:
    return ", ".join(repr(v) for v in values)


def _text(record: dict, name: str, *, required: bool = True, empty: bool = False) -> str | None:
    value = record.get(name)
    if value is None:
        if required:
            raise LineError(_("the field '%(name)s' is missing") % {"name": name})
        return None
    if not isinstance(value, str):
        raise LineError(_("'%(name)s' must be text") % {"name": name})
    if not empty and not value.strip():
        raise LineError(_("'%(name)s' is empty") % {"name": name})
    return value


def _integer(record: dict, name: str, *, top: int) -> int | None:
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise LineError(
            _("'%(name)s' must be a whole number from 1 to %(top)s") % {"name": name, "top": top}
        )
    return value


def _tags(record: dict) -> None:
    tags = record.get("tags")
    if tags is None:
        return
    if (
        not isinstance(tags, list)
        or len(tags) > MAX_TAGS
        or not all(isinstance(t, str) and 0 < len(t) <= MAX_TAG_CHARS for t in tags)
    ):
        raise LineError(
            _("'tags' must be a list of at most %(n)s texts of 1 to %(chars)s characters")
            % {"n": MAX_TAGS, "chars": MAX_TAG_CHARS}
        )


def _tolerance(comparison: dict, name: str) -> None:
    value = comparison.get(name)
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise LineError(_("comparison '%(name)s' must be a number of at least 0") % {"name": name})


class PatternRefused(ValueError):
    """A pattern the server does not run: too long, or not the syntax Python's re reads."""

    def __init__(self, too_long: bool, error: str = "") -> None:
        self.too_long, self.error = too_long, error
        super().__init__(self.english())

    def english(self) -> str:
        """As an item's stored reason (a bundle's reasons are kept in English)."""
        if self.too_long:
            return f"the expected pattern is refused: longer than {MAX_PATTERN_CHARS} characters"
        return f"the expected pattern is refused: not a regular expression ({self.error})"

    def translated(self) -> str:
        """As a set upload's refusal, in the reader's language."""
        if self.too_long:
            return _("a pattern may be at most %(n)s characters") % {"n": MAX_PATTERN_CHARS}
        return _("'expected' is not a regular expression: %(error)s") % {"error": self.error}


_RE_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")  # {m}, {m,}, {,n}, {m,n}, {,}: re's own
_INLINE_FLAGS = re.compile(r"\(\?([aiLmsux-]+)[:)]")


def _as_re_reads(text: str) -> str:
    """The pattern (one ``re`` compiles) written so that ``regex`` reads it as ``re`` does:
    where ``re`` takes a character literally but ``regex`` would not, it is escaped. That
    is a brace opening no quantifier (``regex`` reads ``{e<=1}`` as fuzzy matching) and an
    opening bracket inside a set (``regex`` reads ``[[:alpha:]]`` as a POSIX class).
    Verbose mode, where white space and comments change what a character means, is
    refused."""
    out: list[str] = []
    i, n, in_set = 0, len(text), False
    while i < n:
        char = text[i]
        if char == "\\":
            out.append(text[i : i + 2])
            i += 2
        elif in_set:
            in_set = char != "]"
            out.append("\\[" if char == "[" else char)
            i += 1
        elif char == "[":
            in_set = True
            start = i + 1 + text.startswith("^", i + 1)
            start += text.startswith("]", start)  # "[]" or "[^]" opens a set holding "]"
            out.append(text[i:start].replace("]", "\\]"))
            i = start
        elif char == "{":
            quantifier = _RE_QUANTIFIER.match(text, i)
            if quantifier and quantifier.group() != "{}":
                out.append(quantifier.group())
                i = quantifier.end()
            else:
                out.append("\\{")
                i += 1
        elif text.startswith("(?#", i):  # a comment, to its first unescaped ")"
            end = i + 3
            while text[end] != ")":
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        else:
            flags = _INLINE_FLAGS.match(text, i) if char == "(" else None
            if flags and "x" in flags.group(1).partition("-")[0]:
                raise PatternRefused(too_long=False, error="verbose mode (?x) is not taken")
            out.append(char)
            i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def compile_pattern(text: str) -> regex.Pattern:
    """The pattern of a ``regex`` comparison, checked as a set upload checks it: at most
    MAX_PATTERN_CHARS characters, only the syntax Python's ``re`` reads (what the harness
    matches with: no fuzzy matching, recursion or other extension of the ``regex``
    module), and no verbose mode. Compiled by ``regex``, whose matching takes a time
    bound, read as ``re`` reads it (``_as_re_reads``)."""
    if len(text) > MAX_PATTERN_CHARS:
        raise PatternRefused(too_long=True)
    try:
        re.compile(text)
    except (re.error, OverflowError, RecursionError) as error:
        raise PatternRefused(too_long=False, error=str(error)[:200]) from None
    try:
        return regex.compile(_as_re_reads(text), flags=regex.VERSION0)
    except (regex.error, OverflowError, RecursionError) as error:
        raise PatternRefused(too_long=False, error=str(error)[:200]) from None


class MatchBudget:
    """The time one run's patterns may take together; each match gets at most
    PATTERN_TIMEOUT_S of it. Matching releases the interpreter lock, so other requests
    go on meanwhile."""

    def __init__(self, total_s: float = PATTERN_BUDGET_S, each_s: float = PATTERN_TIMEOUT_S):
        self.total, self.left, self.each = total_s, total_s, each_s

    def fullmatch(self, pattern: regex.Pattern, text: str) -> tuple[bool | None, str]:
        """(matched, why not judged): None with the reason when the time ran out."""
        if self.left <= 0:
            return None, (
                f"not judged: this run's patterns took their {self.total:g} s between them"
            )
        allowed = min(self.each, self.left)
        start = time.monotonic()
        try:
            matched = pattern.fullmatch(text, timeout=allowed, concurrent=True) is not None
        except TimeoutError:
            return None, f"not judged: the pattern took longer than {allowed:g} s to match"
        finally:
            self.left -= time.monotonic() - start
        return matched, ""


def check_comparison(comparison, expected: str) -> None:
    if not isinstance(comparison, dict):
        raise LineError(_("'comparison' must be an object with a 'kind'"))
    unknown = sorted(set(comparison) - COMPARISON_FIELDS)
    if unknown:
        raise LineError(_("unknown comparison field(s) %(names)s") % {"names": _quoted(unknown)})
    kind = comparison.get("kind")
    if kind not in COMPARISONS:
        raise LineError(
            _("unknown comparison %(kind)s (one of %(kinds)s)")
            % {"kind": _quoted([kind]), "kinds": ", ".join(COMPARISONS)}
        )
    if kind != "numeric" and ({"abs_tol", "rel_tol"} & set(comparison)):
        raise LineError(_("only a numeric comparison takes a tolerance"))
    if kind == "numeric":
        _tolerance(comparison, "abs_tol")
        _tolerance(comparison, "rel_tol")
        if _NUMBER.search(expected) is None:
            raise LineError(_("a numeric comparison needs a number in 'expected'"))
    elif kind == "regex":
        try:
            compile_pattern(expected)
        except PatternRefused as refused:
            raise LineError(refused.translated()) from None
    elif kind == "json":
        try:
            too_deep = _deeper_than(json.loads(expected), MAX_EXPECTED_JSON_DEPTH)
        except ValueError:
            raise LineError(
                _("'expected' is not JSON, so a JSON comparison cannot read it")
            ) from None
        except RecursionError:  # deeper than the parser goes: over the bound too
            too_deep = True
        if too_deep:
            raise LineError(
                _("'expected' is JSON nested more than %(n)s levels deep")
                % {"n": MAX_EXPECTED_JSON_DEPTH}
            )


def _deeper_than(document, limit: int) -> bool:
    """Whether the containers nest more than ``limit`` levels (the document itself is 1);
    walked without recursion."""
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if not isinstance(value, dict | list):
            continue
        if depth > limit:
            return True
        stack.extend(
            (item, depth + 1) for item in (value.values() if isinstance(value, dict) else value)
        )
    return False


class SetReader:
    """Reads one set's bytes chunk by chunk; ``finish()`` gives its summary or refuses it."""

    def __init__(self, kind: str, *, max_bytes: int) -> None:
        if kind not in (PROMPTS, SAMPLES):
            raise ValueError(kind)
        self.kind = kind
        self.max_bytes = max_bytes
        self.digest = hashlib.sha256()
        self.size = 0
        self.line_no = 0
        self.items = 0
        self.pending = bytearray()
        self.skipping = False  # inside a line already refused as too long
        self.ids: dict[bytes, int] = {}  # a 16-byte digest of each id → its line
        self.refusals: list[LineRefusal] = []
        self.refusal_count = 0
        self.tiers: dict[str, LengthStats] = {}
        self.inputs = LengthStats()
        self.expected_output: dict[str, int] = {}
        self.comparisons: dict[str, int] = {}
        self.core = 0
        self.too_large = False

    def refuse(self, line: int, reason: str) -> None:
        self.refusal_count += 1
        if len(self.refusals) < MAX_LISTED_REFUSALS:
            self.refusals.append(LineRefusal(line, reason))

    def feed(self, chunk: bytes) -> None:
        if self.too_large:
            return
        self.size += len(chunk)
        if self.size > self.max_bytes:
            self.too_large = True
            return
        self.digest.update(chunk)
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._keep(chunk[start:])
                return
            self._keep(chunk[start:end])
            self._line_done()
            start = end + 1

    def _keep(self, piece: bytes) -> None:
        if self.skipping or not piece:
            return
        if len(self.pending) + len(piece) > MAX_LINE_BYTES:
            self.refuse(
                self.line_no + 1,
                _("the line is longer than %(n)s bytes") % {"n": f"{MAX_LINE_BYTES:,}"},
            )
            self.pending = bytearray()
            self.skipping = True
            return
        self.pending += piece

    def _line_done(self) -> None:
        self.line_no += 1
        raw, skipped = bytes(self.pending), self.skipping
        self.pending, self.skipping = bytearray(), False
        if not skipped:
            self._read_line(raw)

    def _read_line(self, raw: bytes) -> None:
        if self.line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a byte-order mark some editors write
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            self.refuse(
                self.line_no,
                _("not UTF-8 text (byte %(n)s of the line)") % {"n": error.start + 1},
            )
            return
        if not text.strip():
            return
        try:
            record = json.loads(text)
        except RecursionError:
            self.refuse(self.line_no, _("the JSON is nested too deeply"))
            return
        except ValueError as error:
            self.refuse(
                self.line_no,
                _("not valid JSON (at character %(n)s)") % {"n": getattr(error, "colno", 0)},
            )
            return
        if not isinstance(record, dict):
            self.refuse(self.line_no, _("each line must be one JSON object"))
            return
        try:
            if self.kind == PROMPTS:
                self._prompt(record)
            else:
                self._sample(record)
        except LineError as error:
            self.refuse(self.line_no, str(error))

    def _id(self, record: dict) -> bytes:
        item_id = _text(record, "id")
        assert item_id is not None
        if len(item_id) > MAX_ID_CHARS:
            raise LineError(_("'id' may be at most %(n)s characters") % {"n": MAX_ID_CHARS})
        key = hashlib.blake2b(item_id.encode(), digest_size=16).digest()
        first = self.ids.get(key)
        if first is not None:
            raise LineError(
                _("duplicate id %(id)s (first on line %(line)s)")
                % {"id": _quoted([item_id]), "line": first}
            )
        return key

    def _unknown(self, record: dict, allowed: set[str]) -> None:
        unknown = sorted(set(record) - allowed)
        if unknown:
            raise LineError(_("unknown field(s) %(names)s") % {"names": _quoted(unknown)})

    def _prompt(self, record: dict) -> None:
        self._unknown(record, PROMPT_FIELDS)
        key = self._id(record)
        prompt = _text(record, "prompt")
        assert prompt is not None
        tier = record.get("tier")
        if tier is not None and tier not in TIERS:
            raise LineError(
                _("unknown tier %(tier)s (short, medium or long)") % {"tier": _quoted([tier])}
            )
        output = _integer(record, "expected_output_tokens", top=MAX_OUTPUT_TOKENS)
        _tags(record)
        self._accept(key)
        name = tier or UNTIERED
        self.tiers.setdefault(name, LengthStats()).add(estimate_tokens(prompt))
        if output is not None:
            self.expected_output[name] = self.expected_output.get(name, 0) + 1

    def _sample(self, record: dict) -> None:
        self._unknown(record, SAMPLE_FIELDS)
        key = self._id(record)
        given = _text(record, "input")
        expected = _text(record, "expected", empty=True)
        assert given is not None and expected is not None
        if "comparison" not in record:
            raise LineError(_("the field '%(name)s' is missing") % {"name": "comparison"})
        check_comparison(record["comparison"], expected)
        core = record.get("core", True)
        if not isinstance(core, bool):
            raise LineError(_("'core' must be true or false"))
        _text(record, "system", required=False)
        _integer(record, "max_tokens", top=MAX_SAMPLE_TOKENS)
        _tags(record)
        self._accept(key)
        self.inputs.add(estimate_tokens(given))
        kind = record["comparison"]["kind"]
        self.comparisons[kind] = self.comparisons.get(kind, 0) + 1
        self.core += core

    def _accept(self, key: bytes) -> None:
        self.ids[key] = self.line_no
        self.items += 1

    def finish(self) -> SetSummary:
        if self.too_large:
            raise SetRefused(
                [
                    LineRefusal(
                        0,
                        _("the set is larger than the %(n)s bytes taken")
                        % {"n": f"{self.max_bytes:,}"},
                    )
                ],
                1,
            )
        if self.pending or self.skipping:
            self._line_done()  # the last line has no newline
        if self.refusal_count:
            raise SetRefused(self.refusals, self.refusal_count)
        if self.items == 0:
            raise SetRefused([LineRefusal(0, _("the set holds no line"))], 1)
        return SetSummary(
            sha256=self.digest.hexdigest(),
            size_bytes=self.size,
            item_count=self.items,
            statistics=self._statistics(),
        )

    def _statistics(self) -> dict:
        statistics: dict = {"histogram_edges": list(HISTOGRAM_EDGES), "count": self.items}
        if self.kind == PROMPTS:
            order = [*TIERS, UNTIERED]
            statistics["tiers"] = {
                name: self.tiers[name].as_dict()
                | {"with_expected_output": self.expected_output.get(name, 0)}
                for name in order
                if name in self.tiers
            }
        else:
            statistics["inputs"] = self.inputs.as_dict()
            statistics["core"] = self.core
            statistics["comparisons"] = dict(sorted(self.comparisons.items()))
        return statistics


def read_set(kind: str, chunks: Iterable[bytes], *, max_bytes: int) -> SetSummary:
    """The summary of a whole set, or ``SetRefused`` with every line's reason."""
    reader = SetReader(kind, max_bytes=max_bytes)
    for chunk in chunks:
        reader.feed(chunk)
        if reader.too_large:
            break
    return reader.finish()


def histogram_labels() -> list[str]:
    """``< 32``, ``32–63``, … ``≥ 32768``: the bins' ranges in estimated tokens."""
    labels, low = [], 0
    for edge in HISTOGRAM_EDGES:
        labels.append(f"< {edge}" if low == 0 else f"{low}–{edge - 1}")
        low = edge
    labels.append(f"≥ {low}")
    return labels


COMPARISON_WORDS = {
    "identical": "identical character for character",
    "regex": "the whole answer matches a regular expression",
    "json": "equal as JSON values",
}


def compare_answer(
    kind: str, expected: str, received: str, budget: MatchBudget | None = None
) -> tuple[bool, str]:
    """(passed, reason) of the comparisons a case's sample set adds to the harness's own
    "exact" and "numeric" (harness README "correctness"; the harness applies the same).

    A pattern is checked as a set upload checks it and matched within ``budget`` (one
    match's PATTERN_TIMEOUT_S without one): a refused pattern, or one that runs out of
    time, does not pass, and the reason says so."""
    if kind == "identical":
        same = received == expected
        return same, "" if same else "differs character for character"
    if kind == "regex":
        try:
            pattern = compile_pattern(expected)
        except PatternRefused as refused:
            return False, refused.english()
        matched, why = (budget or MatchBudget()).fullmatch(pattern, received.strip())
        if matched is None:
            return False, why
        return matched, "" if matched else "does not match the expected pattern"
    if kind == "json":
        try:
            want = json.loads(expected)
        except (ValueError, RecursionError):
            return False, "the expected output is not JSON"
        try:
            got = json.loads(received.strip())
        except (ValueError, RecursionError):
            return False, "the answer is not JSON"
        same = got == want
        return same, "" if same else "a different JSON value"
    return False, f"unknown comparison {kind!r}"


# --- the expected answers of a stored core sample set ------------------------------------


def sample_item_digest(record: dict) -> str:
    """The digest the harness gives a sample it sends (its ``input_sha256``): over the id,
    the messages, ``max_tokens``, the comparison and the core flag, so a run's answer is
    judged only if it was given to this very input (harness ``correctness_set.item_digest``)."""
    messages = [{"role": "user", "content": record["input"]}]
    if isinstance(record.get("system"), str):
        messages.insert(0, {"role": "system", "content": record["system"]})
    sent = {
        "id": record["id"],
        "messages": messages,
        "max_tokens": int(record.get("max_tokens") or SAMPLE_MAX_TOKENS_DEFAULT),
        "comparison": dict(record["comparison"]),
        "core": bool(record.get("core", True)),
    }
    canonical = json.dumps(sent, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ExpectedAnswer:
    """One sample of a stored set, as a correctness run is judged against it."""

    item_id: str
    core: bool
    comparison: dict
    expected: str | None  # None where the run did not answer the item (not kept)
    input_sha256: str | None


def _lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of bytes read in chunks, split at "\n" as the set was read on upload."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from complete
    if pending:
        yield pending


def expected_answers(chunks: Iterable[bytes], wanted: set[str]) -> Iterator[ExpectedAnswer]:
    """Every sample of a stored core sample set, in file order, from its bytes (read whole
    and accepted on upload, so every line is a sample). The expected answer and the input's
    digest are kept only for the ``wanted`` ids: a set may be far larger than a run."""
    for number, raw in enumerate(_lines(chunks), start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        text = raw.decode("utf-8")
        if not text.strip():
            continue
        record = json.loads(text)
        item_id = record["id"]
        keep = item_id in wanted
        yield ExpectedAnswer(
            item_id=item_id,
            core=bool(record.get("core", True)),
            comparison=dict(record["comparison"]),
            expected=record["expected"] if keep else None,
            input_sha256=sample_item_digest(record) if keep else None,
        )


# --- a representative load test ----------------------------------------------------------

# A tier's share of the load test's requests may fall this far below its share of the set:
# about two standard errors of a tier's share in a set of a few hundred prompts, which is
# as closely as the set itself stands for the traffic.
TIER_SHARE_TOLERANCE = 0.05


@dataclass(frozen=True)
class CasePromptSet:
    """One version of the case's prompt sets, as the representativeness check reads it."""

    name: str
    version: int
    sha256: str
    tiers: dict[str, int]  # prompts of each tier (``untiered`` for those without one)


@dataclass(frozen=True)
class LoadShortfall:
    """Why the load test does not stand for the case's own traffic."""

    key: str  # "set": it ran another set; "tiers": a tier got less than its share
    message: str
    facts: str  # stable: an acceptance lapses when they change


def tier_counts(statistics: dict) -> dict[str, int]:
    """Prompts of each tier, from a stored prompt set's statistics."""
    tiers = statistics.get("tiers") or {}
    return {name: int(entry.get("count") or 0) for name, entry in tiers.items()}


def _ran(recorded: dict | None) -> str:
    if not recorded:
        return _("no recorded prompt set")
    if recorded.get("source") == "built-in":
        return _("the harness's built-in prompts")
    return _("the prompt set %(name)s (SHA-256 %(sha)s…), which is not one of the case's") % {
        "name": repr(str(recorded.get("name") or "")),
        "sha": str(recorded.get("sha256") or "")[:12],
    }


def load_shortfall(
    case_sets: list[CasePromptSet], recorded: dict | None, cells: list[dict]
) -> LoadShortfall | None:
    """Whether the offer's newest load test ran one of the case's prompt sets, each tier
    with at least its share of the set's prompts (less ``TIER_SHARE_TOLERANCE``) among the
    requests sent; None when it did, when the case holds no prompt set of its own (no mix
    to hold it to), or when there is no load test (the verification gate says so).

    ``recorded`` is the bundle's ``workload_sets.prompt_set``; ``cells`` its load test's
    cells, each with the tier it sent (``prompt_set``) and its requests (``n``).
    """
    if not case_sets or not cells:
        return None
    sha = str((recorded or {}).get("sha256") or "")
    used = next((s for s in case_sets if s.sha256 == sha), None)
    if used is None:
        held = sorted({s.sha256[:16] for s in case_sets})
        names = sorted({s.name for s in case_sets})
        message = _(
            "The offer's newest load test did not run the case's own prompts: it ran "
            "%(ran)s, while the case holds %(sets)s."
        ) % {"ran": _ran(recorded), "sets": ", ".join(repr(n) for n in names)}
        source = str((recorded or {}).get("source") or "none")
        facts = f"ran={source}:{sha[:16] or '-'}; case sets=" + ",".join(held)
        return LoadShortfall("set", message, facts)
    prompts = sum(used.tiers.values())
    sent: dict[str, int] = {}
    for cell in cells:
        tier = cell.get("prompt_set")
        if tier is not None:
            sent[str(tier)] = sent.get(str(tier), 0) + int(cell.get("n") or 0)
    requests = sum(sent.values())
    if prompts <= 0 or requests <= 0:
        return None  # the load test does not say what it sent of each tier
    short = []
    for tier, count in used.tiers.items():
        declared, share = count / prompts, sent.get(tier, 0) / requests
        if share < declared - TIER_SHARE_TOLERANCE:
            short.append((tier, declared, share))
    if not short:
        return None
    message = _(
        "The offer's newest load test ran the case's prompt set %(set)s, but gave %(tiers)s; "
        "its throughput and safe level stand for another mix than the case's traffic."
    ) % {
        "set": f"{used.name!r} v{used.version}",
        "tiers": "; ".join(
            _("the %(tier)s prompts %(sent)s of the requests against %(declared)s of the set")
            % {
                "tier": tier,
                "sent": formats.percent(share),
                "declared": formats.percent(declared),
            }
            for tier, declared, share in short
        ),
    }
    facts = f"set={used.sha256[:16]}; " + "; ".join(
        f"{tier}={declared:.3f}/{share:.3f}" for tier, declared, share in short
    )
    return LoadShortfall("tiers", message, facts)

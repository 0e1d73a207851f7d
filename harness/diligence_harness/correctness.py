"""`correctness`: the fixed inputs at temperature 0 against a reference.

docs/rules/acceptance.md, layer two.

Each bundled input (`correctness_set.py`) is sent once as a non-streaming chat
completion with temperature 0 and a fixed seed (dropped, and recorded as
dropped, if the server refuses the `seed` field). Each answer is compared with
the reference output by the item's comparison:

- `exact`: equal after whitespace normalisation (leading and trailing white
  space removed, every inner run of white space made one space); case matters;
- `numeric`: the first number in each text (an optional sign, digits, an
  optional fraction and exponent; thousands separators are not read) must
  satisfy |received − expected| ≤ max(abs_tol, rel_tol × |expected|).

`--record-reference OUT` sends the same inputs to a local baseline endpoint and
writes the reference file (format `diligence-correctness-reference/1`, with
each input's digest) so a team makes its reference on its own hardware.
"""

import hashlib
import json
import math
import os
import re

from diligence_harness import __version__
from diligence_harness.clock import now_ns, utc_now
from diligence_harness.correctness_set import INPUT_SET_NAME, input_set_sha256, load_inputs
from diligence_harness.findings import finding
from diligence_harness.soak import _request
from diligence_harness.streamclient import parse_endpoint

REFERENCE_FORMAT = "diligence-correctness-reference/1"
REFERENCE_ARTIFACT = "correctness-reference.json"
SEED = 0
NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


class ReferenceError(ValueError):
    """The reference file cannot be used; nothing is sent."""


def normalise(text: str) -> str:
    return " ".join(text.split())


def first_number(text: str) -> float | None:
    match = NUMBER.search(text)
    return float(match.group()) if match else None


def compare(comparison: dict, expected: str, received: str | None) -> tuple[bool, str]:
    """(passed, reason): the reason is empty when the answer passes."""
    if received is None:
        return False, "no answer"
    kind = comparison.get("kind")
    if kind == "exact":
        if normalise(received) == normalise(expected):
            return True, ""
        return False, "differs after whitespace normalisation"
    if kind == "identical":
        return (True, "") if received == expected else (False, "differs character for character")
    if kind == "regex":
        try:
            matched = re.fullmatch(expected, received.strip()) is not None
        except re.error:
            return False, "the expected pattern is not a regular expression"
        return (True, "") if matched else (False, "does not match the expected pattern")
    if kind == "json":
        return compare_json(expected, received)
    if kind == "numeric":
        want, got = first_number(expected), first_number(received)
        if want is None:
            return False, "the reference output holds no number"
        if got is None:
            return False, "the answer holds no number"
        limit = max(
            float(comparison.get("abs_tol") or 0), float(comparison.get("rel_tol") or 0) * abs(want)
        )
        difference = abs(got - want)
        if math.isfinite(difference) and difference <= limit:
            return True, ""
        return False, f"differs by {difference:g} (tolerance {limit:g})"
    return False, f"unknown comparison {kind!r}"


def compare_json(expected: str, received: str) -> tuple[bool, str]:
    # Nesting deeper than the parser goes (the endpoint's answer is the vendor's) reads as
    # not JSON, as on the server (apps/workloads/rules.py), never as a crash of the run.
    try:
        want = json.loads(expected)
    except (ValueError, RecursionError):
        return False, "the expected output is not JSON"
    try:
        got = json.loads(received.strip())
    except (ValueError, RecursionError):
        return False, "the answer is not JSON"
    return (True, "") if got == want else (False, "a different JSON value")


def describe_comparison(comparison: dict) -> str:
    if comparison.get("kind") == "exact":
        return "exact after whitespace normalisation"
    if comparison.get("kind") == "numeric":
        abs_tol, rel_tol = comparison.get("abs_tol", 0), comparison.get("rel_tol", 0)
        return f"numeric within abs {abs_tol:g} or rel {rel_tol:g}"
    if comparison.get("kind") in ("identical", "regex", "json"):
        return {
            "identical": "identical character for character",
            "regex": "the whole answer matches a regular expression",
            "json": "equal as JSON values",
        }[comparison["kind"]]
    return f"unknown ({comparison.get('kind')!r})"


def _answer_text(payload: bytes | None) -> tuple[str | None, str | None, str | None]:
    """(text, finish_reason, error) of a chat completion answer."""
    try:
        document = json.loads(payload or b"")
        choice = document["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        return None, None, f"bad answer: {type(exc).__name__}: {exc}"
    if not isinstance(content, str):
        return None, None, "bad answer: content is not text"
    return content, choice.get("finish_reason"), None


def ask(endpoint: str, model: str, item: dict, *, api_key, timeout_s: float, seed: bool) -> dict:
    base = parse_endpoint(endpoint)
    url = f"{base.scheme}://{base.host_header}{base.base_path}/v1/chat/completions"
    body = {
        "model": model,
        "messages": item["messages"],
        "temperature": 0,
        "max_tokens": item["max_tokens"],
        "stream": False,
    }
    if seed:
        body["seed"] = SEED
    record, payload = _request(url, api_key=api_key, timeout_s=timeout_s, body=body)
    text, finish, error = (None, None, record["error"])
    if record["ok"]:
        text, finish, error = _answer_text(payload)
    return {
        "t_send_ns": record["t_ns"],
        "latency_ms": record["latency_ms"],
        "http_status": record["http_status"],
        "seed_sent": seed,
        "received": text,
        "finish_reason": finish,
        "error": error,
    }


def _ask_all(args, items: list[dict]) -> list[dict]:
    answers, seed = [], True
    for item in items:
        answer = ask(
            args.endpoint,
            args.model,
            item,
            api_key=args.api_key,
            timeout_s=args.correctness_timeout_s,
            seed=seed,
        )
        if seed and answer["http_status"] == 400:  # a server without `seed`: once, then never
            seed = False
            answer = ask(
                args.endpoint,
                args.model,
                item,
                api_key=args.api_key,
                timeout_s=args.correctness_timeout_s,
                seed=False,
            )
        answers.append(answer)
    return answers


def load_reference(path: str) -> tuple[dict, bytes]:
    """The reference document and its bytes; ReferenceError with the reason otherwise."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        document = json.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise ReferenceError(f"cannot read the reference file: {exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReferenceError(f"the reference file is not UTF-8 JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != REFERENCE_FORMAT:
        raise ReferenceError(f"the reference file is not in the {REFERENCE_FORMAT} format")
    inputs = {item["id"]: item for item in load_inputs()}
    entries = document.get("items")
    if not isinstance(entries, list) or not entries:
        raise ReferenceError("the reference file lists no items")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("output"), str):
            raise ReferenceError(f"item {index}: needs an id, an input_sha256 and a text output")
        bundled = inputs.get(entry.get("id"))
        if bundled is None:
            raise ReferenceError(f"item {index}: {entry.get('id')!r} is not a bundled input")
        if entry.get("input_sha256") != bundled["input_sha256"]:
            raise ReferenceError(
                f"item {entry['id']!r}: the reference was made for a different input "
                f"(digest {entry.get('input_sha256')}, "
                f"this harness sends {bundled['input_sha256']})"
            )
        if entry.get("comparison", bundled["comparison"]).get("kind") not in ("exact", "numeric"):
            raise ReferenceError(f"item {entry['id']!r}: comparison must be exact or numeric")
    return document, raw


def record_reference(args) -> dict:
    """Send every input to the baseline endpoint and write the reference file."""
    items = load_inputs()
    answers = _ask_all(args, items)
    failed = [(item["id"], a["error"]) for item, a in zip(items, answers) if a["error"]]
    if failed:
        raise ReferenceError(
            "the baseline did not answer every input, no reference written: "
            + "; ".join(f"{i}: {e}" for i, e in failed)
        )
    document = {
        "format": REFERENCE_FORMAT,
        "input_set": INPUT_SET_NAME,
        "input_set_sha256": input_set_sha256(items),
        "created_utc": utc_now(),
        "harness_version": __version__,
        "baseline": {"endpoint": parse_endpoint(args.endpoint).display, "model": args.model},
        "sampling": {"temperature": 0, "seed": SEED if answers[0]["seed_sent"] else None},
        "items": [
            {
                "id": item["id"],
                "core": item["core"],
                "input_sha256": item["input_sha256"],
                "comparison": item["comparison"],
                "output": answer["received"],
            }
            for item, answer in zip(items, answers)
        ],
    }
    data = (
        json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
    )
    temporary = f"{args.record_reference}.tmp-{os.getpid()}"
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, args.record_reference)
    return {
        "reference": args.record_reference,
        "sha256": hashlib.sha256(data).hexdigest(),
        "items": len(items),
        "input_set_sha256": document["input_set_sha256"],
    }


def sample_reference(sample_set) -> tuple[dict, bytes]:
    """A case's core sample set as a reference file: each item's expected answer is its
    reference output, so the server compares every answer again exactly as for a baseline's."""
    document = {
        "format": REFERENCE_FORMAT,
        "input_set": f"case sample set {sample_set.name}",
        "input_set_sha256": input_set_sha256(sample_set.items),
        "sample_set_sha256": sample_set.sha256,
        "created_utc": utc_now(),
        "harness_version": __version__,
        "baseline": None,
        "sampling": {"temperature": 0, "seed": SEED},
        "items": [
            {
                "id": item["id"],
                "core": item["core"],
                "input_sha256": item["input_sha256"],
                "comparison": item["comparison"],
                "output": item["expected"],
            }
            for item in sample_set.items
        ],
    }
    raw = json.dumps(document, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n"
    return document, raw


def run_correctness(args, evidence) -> dict:
    sample_set = getattr(args, "sample_set_file", None)
    if sample_set is not None:
        reference, raw = sample_reference(sample_set)
        chosen = sample_set.items
        reference_name = f"{sample_set.name} (expected answers)"
        input_set = reference["input_set"]
    else:
        reference, raw = load_reference(args.reference)
        inputs = {item["id"]: item for item in load_inputs()}
        chosen = [inputs[entry["id"]] for entry in reference["items"]]
        reference_name = os.path.basename(args.reference)
        input_set = INPUT_SET_NAME
    t_start = now_ns()
    answers = _ask_all(args, chosen)
    evidence.artifact(REFERENCE_ARTIFACT, raw.decode("utf-8"), "application/json")
    items = []
    for entry, item, answer in zip(reference["items"], chosen, answers):
        comparison = entry.get("comparison") or item["comparison"]
        passed, reason = compare(comparison, entry["output"], answer["received"])
        if answer["error"]:
            reason = f"request failed: {answer['error']}"
        items.append(
            {
                "id": item["id"],
                "core": bool(entry.get("core", item["core"])),
                "input_sha256": item["input_sha256"],
                "comparison": comparison,
                "expected": entry["output"],
                **answer,
                "passed": passed,
                "reason": reason,
            }
        )
    result = {
        "endpoint": parse_endpoint(args.endpoint).display,
        "model": args.model,
        "input_set": input_set,
        "input_set_sha256": input_set_sha256(chosen),
        "reference": {
            "name": reference_name,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "artifact": REFERENCE_ARTIFACT,
            "baseline": reference.get("baseline"),
        },
        "sampling": {
            "temperature": 0,
            "seed": SEED if answers and answers[0]["seed_sent"] else None,
        },
        "t_start_ns": t_start,
        "t_end_ns": now_ns(),
        "items": items,
    }
    result["summary"] = summarise(items)
    evidence.findings += correctness_findings(result)
    return result


def summarise(items: list[dict]) -> dict:
    core = [i for i in items if i["core"]]

    def rate(group):
        return sum(i["passed"] for i in group) / len(group) if group else None

    return {
        "total": len(items),
        "passed": sum(i["passed"] for i in items),
        "pass_rate": rate(items),
        "core_total": len(core),
        "core_passed": sum(i["passed"] for i in core),
        "core_pass_rate": rate(core),
        "mismatches": [
            {k: i[k] for k in ("id", "core", "expected", "received", "reason")}
            for i in items
            if not i["passed"]
        ],
    }


def correctness_findings(result: dict) -> list[dict]:
    found = []
    for item in result["summary"]["mismatches"]:
        found.append(
            finding(
                "CORR-MISMATCH",
                "fail" if item["core"] else "warn",
                item["id"],
                "the answer does not match the reference",
                step="correctness",
                expected=item["expected"],
                received=item["received"],
                reason=item["reason"],
            )
        )
    return found

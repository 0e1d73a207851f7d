"""The bundled fixed input set for `correctness` (docs/rules/acceptance.md, layer two).

Short prompts with one unambiguous answer each, sent at temperature 0. Each
item states how its answer is compared (README "correctness"): `exact` after
whitespace normalisation, or `numeric` within a tolerance. The core set must
pass in full. Each item's digest covers everything sent and how it is compared,
so a reference file made for other inputs is refused, and a bundle shows
exactly which inputs ran.

`canonical` is the answer a correct model gives. The loopback mock answers
with it; a real reference is always recorded from the team's own baseline
(`--record-reference`), never taken from this file.
"""

import hashlib
import json
import re

INPUT_SET_NAME = "diligence-correctness/1"
SYSTEM_PROMPT = "You are a precise assistant. Answer with the requested value only, no explanation."
MAX_TOKENS = 16

EXACT = {"kind": "exact"}


def _numeric(abs_tol: float = 0.0, rel_tol: float = 0.0) -> dict:
    return {"kind": "numeric", "abs_tol": abs_tol, "rel_tol": rel_tol}


NUMBER_ONLY = " Reply with the number only."
_ITEMS = (
    # (id, in the core set, prompt, comparison, canonical answer)
    ("arith-add", True, "What is 17 + 25?" + NUMBER_ONLY, _numeric(), "42"),
    ("arith-mul", True, "What is 23 multiplied by 17?" + NUMBER_ONLY, _numeric(), "391"),
    ("arith-div", True, "What is 1 divided by 8, as a decimal?" + NUMBER_ONLY, _numeric(1e-9),
     "0.125"),
    ("unit-seconds", True, "How many seconds are in 2.5 hours?" + NUMBER_ONLY, _numeric(), "9000"),
    ("sqrt-two", True, "What is the square root of 2, rounded to 4 decimal places?" + NUMBER_ONLY,
     _numeric(1e-4), "1.4142"),
    ("capital-france", True, "What is the capital of France? Reply with one word.", EXACT, "Paris"),
    ("reverse-word", True, "Write the word 'tensor' backwards. Reply with the word only.", EXACT,
     "rosnet"),
    ("json-value", True, 'What is the value of "b" in {"a": 1, "b": "gpu"}?'
     " Reply with the value only.", EXACT, "gpu"),
    ("upper-case", True, "Convert 'remote compute' to upper case. Reply with the result only.",
     EXACT, "REMOTE COMPUTE"),
    ("sort-numbers", False, "Sort 5 3 9 1 in ascending order, separated by single spaces."
     " Reply with the numbers only.", EXACT, "1 3 5 9"),
    ("count-letters", False, "How many letters are in the word 'bandwidth'?" + NUMBER_ONLY,
     _numeric(), "9"),
    ("translate-zh", False, "Translate 'thank you' into Simplified Chinese."
     " Reply with the translation only.", EXACT, "谢谢"),
)  # fmt: skip


def _messages(prompt: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]


def item_digest(item: dict) -> str:
    """The digest of what is sent and how the answer is compared (the set's own and a case's)."""
    sent = {k: item[k] for k in ("id", "messages", "max_tokens", "comparison", "core")}
    canonical = json.dumps(sent, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_inputs() -> list[dict]:
    """The items with their digests, in a fixed order."""
    items = []
    for item_id, core, prompt, comparison, canonical in _ITEMS:
        item = {
            "id": item_id,
            "core": core,
            "messages": _messages(prompt),
            "max_tokens": MAX_TOKENS,
            "comparison": dict(comparison),
            "canonical": canonical,
        }
        item["input_sha256"] = item_digest(item)
        items.append(item)
    return items


def input_set_sha256(items: list[dict]) -> str:
    joined = "\n".join(f"{item['id']} {item['input_sha256']}" for item in items)
    return hashlib.sha256(joined.encode()).hexdigest()


def canonical_answer(messages: list[dict]) -> tuple[str, str] | None:
    """(item id, canonical answer) when these messages are one of the bundled inputs."""
    for item in load_inputs():
        if item["messages"] == messages:
            return item["id"], item["canonical"]
    return None


def first_number_text(text: str) -> str | None:
    match = re.search(r"[-+]?\d+(?:\.\d+)?", text)
    return match.group() if match else None

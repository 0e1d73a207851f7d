"""Reading a set line by line: every refusal with its line number, and the statistics."""

import hashlib
import json

import pytest

from apps.workloads import rules
from tests.workloads.setfiles import jsonl, prompt_lines, sample_lines

LIMIT = 10 * 1024 * 1024


def read(kind, raw: bytes, *, chunk=7, limit=LIMIT):
    # Small chunks: lines and multi-byte characters cross chunk boundaries.
    return rules.read_set(
        kind, (raw[i : i + chunk] for i in range(0, len(raw), chunk)), max_bytes=limit
    )


def refusals(kind, raw: bytes, **options) -> list[tuple[int, str]]:
    with pytest.raises(rules.SetRefused) as refused:
        read(kind, raw, **options)
    return [(r.line, r.reason) for r in refused.value.refusals]


GOOD_PROMPT = {"id": "a", "prompt": "Hello there", "tier": "short"}


@pytest.mark.parametrize(
    "line, reason",
    [
        (b'{"id": "b", "prompt": "x"', "not valid JSON"),
        (b'["not", "an", "object"]', "each line must be one JSON object"),
        (b'{"id": "b"}', "the field 'prompt' is missing"),
        (b'{"prompt": "x"}', "the field 'id' is missing"),
        (b'{"id": "b", "prompt": "x", "tier": "huge"}', "unknown tier 'huge'"),
        (b'{"id": "a", "prompt": "x"}', "duplicate id 'a' (first on line 1)"),
        (b'{"id": "b", "prompt": "caf\xe9"}', "not UTF-8 text"),
        (b'{"id": "b", "prompt": "x", "colour": "red"}', "unknown field(s) 'colour'"),
        (b'{"id": "b", "prompt": "   "}', "'prompt' is empty"),
        (b'{"id": "b", "prompt": "x", "expected_output_tokens": 0}', "from 1 to 131072"),
        (b'{"id": "b", "prompt": "x", "tags": "one"}', "'tags' must be a list"),
        (b'{"id": 7, "prompt": "x"}', "'id' must be text"),
    ],
)
def test_each_bad_prompt_line_is_refused_with_its_line_number(line, reason):
    raw = json.dumps(GOOD_PROMPT).encode() + b"\n" + line + b"\n"
    [(number, found)] = refusals(rules.PROMPTS, raw)
    assert number == 2 and reason in found, found


GOOD_SAMPLE = {"id": "s", "input": "2+2?", "expected": "4", "comparison": {"kind": "numeric"}}


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"comparison": "exact"}, "'comparison' must be an object"),
        ({"comparison": {"kind": "fuzzy"}}, "unknown comparison 'fuzzy'"),
        ({"comparison": {"kind": "numeric", "abs_tol": -1}}, "'abs_tol' must be a number"),
        ({"expected": "four"}, "needs a number in 'expected'"),
        ({"comparison": {"kind": "regex"}, "expected": "(unclosed"}, "not a regular expression"),
        ({"comparison": {"kind": "json"}, "expected": "{nope"}, "is not JSON"),
        ({"comparison": {"kind": "exact", "abs_tol": 1}}, "only a numeric comparison"),
        ({"core": "yes"}, "'core' must be true or false"),
        ({"max_tokens": 99999}, "from 1 to 4096"),
    ],
)
def test_each_bad_sample_line_is_refused(change, reason):
    line = {**GOOD_SAMPLE, "id": "t", **change}
    line = {k: v for k, v in line.items() if v is not None}
    [(number, found)] = refusals(rules.SAMPLES, jsonl([GOOD_SAMPLE, line]))
    assert number == 2 and reason in found, found


def test_a_sample_without_its_expected_answer_or_comparison_is_refused():
    lines = [
        {"id": "a", "input": "x", "comparison": {"kind": "exact"}},
        {"id": "b", "input": "x", "expected": "y"},
    ]
    assert refusals(rules.SAMPLES, jsonl(lines)) == [
        (1, "the field 'expected' is missing"),
        (2, "the field 'comparison' is missing"),
    ]


def test_every_refusal_is_listed_not_only_the_first():
    raw = b"\n".join([b"{bad", json.dumps(GOOD_PROMPT).encode(), b"{}", b'{"id":"a","prompt":"x"}'])
    found = refusals(rules.PROMPTS, raw)
    assert [n for n, _ in found] == [1, 3, 4]


def test_a_set_over_the_size_limit_is_refused_as_a_whole():
    raw = jsonl(prompt_lines(per_tier=5))
    assert refusals(rules.PROMPTS, raw, limit=len(raw) - 1) == [
        (0, f"the set is larger than the {len(raw) - 1:,} bytes taken")
    ]


def test_an_overlong_line_is_refused_without_keeping_it():
    raw = jsonl([GOOD_PROMPT]) + b'{"id": "b", "prompt": "' + b"x" * rules.MAX_LINE_BYTES + b'"}\n'
    [(number, reason)] = refusals(rules.PROMPTS, raw, chunk=64 * 1024)
    assert number == 2 and "longer than" in reason


def test_an_empty_set_is_refused():
    assert refusals(rules.PROMPTS, b"\n \n") == [(0, "the set holds no line")]


def test_a_set_of_three_tiers_has_its_digest_and_statistics_per_tier():
    raw = jsonl(prompt_lines(per_tier=200))
    summary = read(rules.PROMPTS, raw, chunk=4096)
    assert summary.sha256 == hashlib.sha256(raw).hexdigest()
    assert summary.size_bytes == len(raw) and summary.item_count == 600
    tiers = summary.statistics["tiers"]
    assert list(tiers) == ["short", "medium", "long"]
    for tier in tiers.values():
        assert tier["count"] == 200 and sum(tier["histogram"]) == 200
        assert tier["with_expected_output"] == 200
    # 30, 300 and 1,500 words plus a header of 4: about 1.3 tokens a word.
    assert tiers["short"]["tokens_max"] == 45
    assert tiers["long"]["tokens_min"] == 1956
    assert tiers["long"]["histogram"][rules.histogram_bin(1956)] == 200


def test_a_sample_set_counts_its_core_items_and_comparisons():
    summary = read(rules.SAMPLES, jsonl(sample_lines(50)))
    assert summary.item_count == 50
    assert summary.statistics["core"] == 45
    assert summary.statistics["comparisons"] == {
        "exact": 20,
        "identical": 10,
        "json": 10,
        "numeric": 10,
    }


@pytest.mark.parametrize(
    "text, tokens",
    [("", 0), ("one two three", 4), ("谢谢你", 3), ("GPU 租用 合同", 2 + 4)],
)
def test_the_token_estimate(text, tokens):
    # About 1.3 tokens a word (rounded up), one per CJK character.
    assert rules.estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    "kind, expected, received, passed",
    [
        ("identical", "Paris", "Paris", True),
        ("identical", "Paris", "Paris ", False),
        ("regex", r"\d{3}-\d{4}", " 555-1234\n", True),
        ("regex", r"\d{3}", "1234", False),
        ("json", '{"a": [1, 2]}', '{"a":[1,2]}', True),
        ("json", '{"a": 1}', '{"a": 2}', False),
        ("json", '{"a": 1}', "not json", False),
    ],
)
def test_the_comparisons_a_sample_set_adds(kind, expected, received, passed):
    assert rules.compare_answer(kind, expected, received)[0] is passed

"""Workload sets written the way a customer writes them: JSONL, one object per line."""

import json

WORDS = ("cluster", "latency", "tensor", "vendor", "ledger", "budget", "kernel", "region")
# Words per prompt of each tier: about 1.3 tokens a word, so ~40, ~400 and ~2,000 tokens.
TIER_WORDS = {"short": 30, "medium": 300, "long": 1500}


def prompt_lines(per_tier: int = 200) -> list[dict]:
    lines = []
    for tier, words in TIER_WORDS.items():
        for index in range(per_tier):
            body = " ".join(WORDS[(index + k) % len(WORDS)] for k in range(words))
            lines.append(
                {
                    "id": f"{tier}-{index}",
                    "tier": tier,
                    "prompt": f"Customer ticket {tier} {index}: {body}",
                    "expected_output_tokens": 64,
                    "tags": ["support", tier],
                }
            )
    return lines


def sample_lines(count: int = 50) -> list[dict]:
    """Inputs with one answer each, compared five ways; the mock answers them as expected."""
    lines = []
    for index in range(count):
        kind = ("exact", "identical", "numeric", "json", "exact")[index % 5]
        expected = {
            "exact": f"answer {index}",
            "identical": f"Answer-{index}",
            "numeric": str(index * 3),
            "json": json.dumps({"n": index, "ok": True}),
        }[kind]
        comparison = {"kind": kind}
        if kind == "numeric":
            comparison["abs_tol"] = 0.5
        lines.append(
            {
                "id": f"q-{index}",
                "input": f"Question {index}: reply with the expected value only.",
                "expected": expected,
                "comparison": comparison,
                "core": index % 10 != 9,
            }
        )
    return lines


def jsonl(lines: list[dict]) -> bytes:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()

"""Enough requests by default: every level of the ladder reaches the sample a P95 needs.

The server pools every round, prompt set and API of one concurrency level and states
its P95 time to first token only from at least ``P95_MIN_SAMPLES`` requests; a level
with fewer is "not measured". The harness's defaults must never produce such a level.
"""

import pytest
from diligence_harness import metrics
from diligence_harness.cli import build_parser
from diligence_harness.loadtest import (
    DEFAULT_LADDER,
    P95_MIN_SAMPLES,
    LoadtestConfig,
    requests_per_cell,
    requests_per_level,
    run_loadtest,
)
from diligence_harness.mockserver import MockConfig, MockServerThread
from diligence_harness.steps import _level_sample_findings, loadtest_config


def test_the_minimum_is_the_p95_bound_of_the_metric_definitions():
    assert P95_MIN_SAMPLES == metrics.MIN_SAMPLES_FOR_PERCENTILE[95] == 130


@pytest.mark.parametrize("command", ["run", "loadtest"])
def test_the_default_ladder_sends_enough_requests_at_every_level(command):
    options = ["--endpoint", "http://h:1/v1", "--model", "m", "--out", "b.json"]
    args = build_parser().parse_args([command, *options])
    cfg = loadtest_config(args)
    assert cfg.ladder == DEFAULT_LADDER
    planned = requests_per_level(cfg)
    assert set(planned) == set(DEFAULT_LADDER)
    for concurrency, count in planned.items():
        assert count >= P95_MIN_SAMPLES, f"concurrency {concurrency}: {count} requests"


@pytest.mark.parametrize(
    "rounds,prompt_sets,apis,concurrency,per_cell",
    [
        (3, ("short", "medium", "long"), ("chat",), 1, 15),  # 9 cells: 135 ≥ 130
        (3, ("short", "medium", "long"), ("chat",), 32, 128),  # 4 per stream is more
        (1, ("short",), ("chat",), 1, 130),  # one cell carries the whole level
        (2, ("short",), ("chat", "completions"), 2, 33),  # 4 cells: 132 ≥ 130
    ],
)
def test_a_level_is_spread_over_its_cells(rounds, prompt_sets, apis, concurrency, per_cell):
    cfg = LoadtestConfig(
        endpoint="http://h:1/v1", model="m", rounds=rounds, prompt_sets=prompt_sets, apis=apis
    )
    assert requests_per_cell(cfg, concurrency) == per_cell
    assert requests_per_level(cfg)[concurrency] >= P95_MIN_SAMPLES


def test_the_load_test_sends_the_planned_requests_at_each_level():
    with MockServerThread(MockConfig(ttft_ms=1, itl_ms=0, default_output_tokens=2)) as mock:
        cfg = LoadtestConfig(
            endpoint=mock.url,
            model="m",
            ladder=(1, 2),
            rounds=2,
            prompt_sets=("short",),
            max_tokens=2,
            warmup_requests=0,
            min_requests_per_level=21,
        )
        result = run_loadtest(cfg)
    sent: dict[int, int] = {}
    for cell in result["cells"]:
        sent[cell["concurrency"]] = sent.get(cell["concurrency"], 0) + len(cell["requests"])
    assert sent == {1: 22, 2: 22} == requests_per_level(cfg)
    assert result["workload"]["min_requests_per_level"] == 21


def _cell(concurrency: int, ok: int, failed: int = 0) -> dict:
    good = {"error": None, "t_first_ns": 2, "t_send_ns": 1}
    bad = {"error": {"kind": "http_500"}, "t_first_ns": None, "t_send_ns": 1}
    return {"concurrency": concurrency, "requests": [good] * ok + [bad] * failed}


@pytest.mark.parametrize(
    "cells,expected",
    [
        ([_cell(1, 65), _cell(1, 65)], []),  # pooled over the level's cells: 130
        ([_cell(1, 65), _cell(1, 64)], [("c1", "send 1 more")]),
        ([_cell(2, 120, failed=20)], [("c2", "120 requests with a first token")]),
        ([_cell(1, 12), _cell(4, 200)], [("c1", "a P95 needs at least 130: send 118 more")]),
    ],
)
def test_a_level_short_of_the_p95_sample_is_a_finding(cells, expected):
    found = _level_sample_findings(cells)
    assert [f["id"] for f in found] == ["LT-FEW-SAMPLES"] * len(expected)
    for finding, (subject, text) in zip(found, expected):
        assert finding["subject"] == subject and text in finding["message"]
        assert finding["evidence"]["needed"] == 130

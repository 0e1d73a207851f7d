"""The open-loop rate search: seeded arrival schedules, the search's steps, and the search
against the mock's known capacity (docs/metrics.md#rate-search)."""

import json
import statistics
from types import SimpleNamespace

import pytest
from diligence_harness import metrics, schema
from diligence_harness.bundle import assemble, serialise
from diligence_harness.cli import build_parser
from diligence_harness.commands import _ratesearch_options_problem
from diligence_harness.loadtest import LoadtestConfig
from diligence_harness.mockserver import MockConfig, MockServerThread
from diligence_harness.ratesearch import (
    RateSearchConfig,
    arrival_offsets,
    next_rate,
    run_ratesearch,
    step_seed,
)
from diligence_harness.steps import ratesearch_config, ratesearch_findings

# --- schedules ---------------------------------------------------------------------


def test_a_constant_rate_sends_evenly():
    assert arrival_offsets("constant", 4.0, 5, seed=1) == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_poisson_arrivals_are_reproducible_from_their_seed():
    first = arrival_offsets("poisson", 10.0, 200, seed=42)
    assert first == arrival_offsets("poisson", 10.0, 200, seed=42)
    assert first != arrival_offsets("poisson", 10.0, 200, seed=43)
    assert first[0] == 0.0 and first == sorted(first)


def test_poisson_arrivals_keep_their_mean_rate_with_exponential_gaps():
    offsets = arrival_offsets("poisson", 50.0, 20001, seed=7)
    gaps = [b - a for a, b in zip(offsets, offsets[1:])]
    mean = statistics.fmean(gaps)
    assert 1 / mean == pytest.approx(50.0, rel=0.03)
    # Exponential: the standard deviation equals the mean (a constant rate has none).
    assert statistics.pstdev(gaps) == pytest.approx(mean, rel=0.05)


def test_each_step_has_its_own_seed_and_bad_arrivals_are_refused():
    assert len({step_seed(1234, i) for i in range(1, 9)}) == 8
    with pytest.raises(ValueError):
        arrival_offsets("bursty", 1.0, 3, seed=1)
    with pytest.raises(ValueError):
        arrival_offsets("poisson", 0.0, 3, seed=1)


# --- the search's next step ----------------------------------------------------------

CFG = SimpleNamespace(max_rps=64.0, resolution=0.05)


@pytest.mark.parametrize(
    "rate,highest_pass,lowest_fail,expected",
    [
        (4.0, 4.0, None, (8.0, None)),  # passing: double
        (48.0, 48.0, None, (64.0, None)),  # doubling stops at the maximum
        (64.0, 64.0, None, (None, "max_rate")),  # the maximum passed: the capacity is above
        (4.0, None, 4.0, (2.0, None)),  # nothing passed yet: halve
        (16.0, 8.0, 16.0, (12.0, None)),  # bisect between the last pass and first fail
        (8.3, 8.0, 8.3, (None, "resolution")),  # within 5 %: done
    ],
)
def test_the_search_doubles_then_bisects(rate, highest_pass, lowest_fail, expected):
    assert next_rate(rate, highest_pass, lowest_fail, CFG) == expected


# --- a step judged -------------------------------------------------------------------


def _summary(ttft_p95, tpot_p95, n=130, error_rate=0.0):
    dist = {"n": n, "p95": 0.0}
    return {
        "error_rate": error_rate,
        "ttft_ms": dist | {"p95": ttft_p95},
        "tpot_ms": dist | {"p95": tpot_p95},
    }


@pytest.mark.parametrize(
    "summary,slo,expected",
    [
        (_summary(90, 20), {"ttft_ms": 100, "tpot_ms": 25}, True),
        (_summary(100, 25), {"ttft_ms": 100, "tpot_ms": 25}, True),  # at the limit holds
        (_summary(101, 20), {"ttft_ms": 100, "tpot_ms": 25}, False),
        (_summary(90, 30), {"ttft_ms": 100, "tpot_ms": 25}, False),
        (_summary(90, 30), {"ttft_ms": 100, "tpot_ms": None}, True),  # no TPOT limit
        (_summary(90, 20, n=129), {"ttft_ms": 100, "tpot_ms": None}, None),  # too few
        (_summary(90, 20, n=129, error_rate=0.2), {"ttft_ms": 100}, False),  # errors fail
        (_summary(90, 20, error_rate=0.01), {"ttft_ms": 100}, False),
    ],
)
def test_a_step_meets_the_slo_only_on_a_p95_of_130(summary, slo, expected):
    assert metrics.rate_step_meets_slo(summary, slo, 0.005) is expected


def test_goodput_counts_requests_meeting_every_limit():
    def record(send_ms, first_ms, last_ms, osl, error=None):
        ms = 1_000_000
        return {
            "t_sched_ns": send_ms * ms,
            "t_send_ns": send_ms * ms,
            "t_first_ns": first_ms * ms,
            "t_last_ns": last_ms * ms,
            "osl": osl,
            "error": error,
        }

    records = [
        record(0, 50, 150, 11),  # TTFT 50, TPOT 10: good
        record(500, 700, 800, 11),  # TTFT 200: not good
        record(1000, 1040, 2000, 11),  # TPOT 96: not good
        record(1500, 1540, 1640, 11, error={"kind": "http_500"}),  # an error: never good
    ]
    summary = metrics.rate_step_summary(records, {"ttft_ms": 100, "tpot_ms": 20})
    assert summary["duration_s"] == 2.0
    assert summary["offered_rps"] == pytest.approx(3 / 1.5)
    assert summary["goodput_req_s"] == pytest.approx(0.5)
    assert summary["goodput_tok_s"] == pytest.approx(5.5)
    assert "target_concurrency" not in summary


# --- options -------------------------------------------------------------------------


def test_the_rate_search_needs_an_slo_and_keeps_bounded_defaults():
    args = build_parser().parse_args(["ratesearch", "--endpoint", "http://h:1", "--model", "m"])
    assert _ratesearch_options_problem(args).startswith("the rate search needs an SLO")
    args.slo_ttft_ms = 500.0
    cfg = ratesearch_config(args)
    assert (cfg.arrival, cfg.start_rps, cfg.max_steps) == ("poisson", 1.0, 8)
    assert cfg.requests_per_step >= metrics.MIN_SAMPLES_FOR_PERCENTILE[95]
    assert cfg.max_seconds <= 900 and cfg.slo_ms == {"ttft_ms": 500.0, "tpot_ms": None}
    args.rate_start = 500.0  # above --rate-max
    assert "start rate" in _ratesearch_options_problem(args)


# --- against the mock's known capacity -----------------------------------------------


def test_the_search_finds_the_mocks_capacity():
    """Nine slots of 60 ms (TTFT 48 ms, then one more token 12 ms later): 150 requests/s.
    Evenly spaced arrivals below that never wait; above it every request waits longer than
    the one before, so a P95 TTFT limit 72 ms above the mock's own TTFT breaks just past
    150/s (about 160/s at 180 requests a step). The margin is wide enough for the
    scheduling delays of a busy machine, which a tighter one mistook for the limit."""
    mock_config = MockConfig(ttft_ms=48, itl_ms=12, slots=9)
    capacity = mock_config.capacity_rps(2)
    assert capacity == pytest.approx(150.0)
    with MockServerThread(mock_config) as mock:
        load = LoadtestConfig(
            endpoint=mock.url,
            model="m",
            prompt_sets=("short",),
            max_tokens=2,
            warmup_requests=1,
            slo_ms={"ttft_ms": 120.0, "tpot_ms": None, "e2e_ms": None},
        )
        cfg = RateSearchConfig(
            load=load,
            arrival="constant",
            start_rps=100.0,
            max_rps=600.0,
            requests_per_step=180,
            resolution=0.10,
        )
        result = run_ratesearch(cfg)
        served = {entry["request_id"] for entry in mock.log_copy()}
    best = result["best"]
    assert best is not None, [(s["target_rps"], s["meets_slo"]) for s in result["steps"]]
    assert best["offered_rps"] == pytest.approx(capacity, rel=0.10)
    assert result["stopped"] == "resolution"
    assert any(not s["meets_slo"] for s in result["steps"])  # it found where it breaks
    for step in result["steps"]:
        requests = step["requests"]
        assert len(requests) == 180 and {r["request_id"] for r in requests} <= served
        # Sent on schedule, whatever had completed: one due time per 1/rate.
        due = [r["t_sched_ns"] for r in requests]
        assert due == sorted(due)
        assert (due[-1] - due[0]) / 1e9 == pytest.approx(179 / step["target_rps"], rel=1e-6)
        assert all(r["t_send_ns"] >= r["t_sched_ns"] - 2_000_000 for r in requests)
    assert ratesearch_findings(result) == []
    # The step's result is what the published schema describes, inside a bundle.
    document = assemble(
        steps={"ratesearch": {"status": "ok", "reason": None, "started_utc": None,
                              "finished_utc": None, "duration_s": 1.0, "result": result}},
        findings=[], artifacts=[], argv=["diligence-harness"], seeds={}, case=None,
        nonce=None, started_utc="2026-01-01T00:00:00Z",
    )  # fmt: skip
    assert schema.validate(json.loads(serialise(document, []))) == []


def test_findings_name_a_client_behind_its_schedule_and_a_search_where_nothing_held():
    step = {
        "target_rps": 10.0,
        "planned": 160,
        "meets_slo": False,
        "summary": {"send_rps": 8.5, "offered_rps": 10.0, "ttft_ms": {"n": 160}},
    }
    result = {"steps": [step], "best": None, "stopped": "max_steps", "search": {"max_rps": 64}}
    found = ratesearch_findings(result)
    assert [(f["id"], f["step"]) for f in found] == [
        ("RS-CLIENT-LIMITED", "ratesearch"),
        ("RS-NONE-PASSED", "ratesearch"),
    ]
    step["summary"]["send_rps"] = 9.5  # within 10 % of the schedule: not the client's doing
    step["meets_slo"], result["best"], result["stopped"] = True, {"index": 1}, "max_rate"
    assert [f["id"] for f in ratesearch_findings(result)] == ["RS-MAX-RATE"]

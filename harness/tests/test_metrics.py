"""Metric maths as pure functions (docs/metrics.md#harness-accuracy)."""

import pytest
from diligence_harness import metrics


def test_linear_percentile_matches_numpy_type_7():
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    # numpy.percentile(values, [50, 90, 99]) == [3.0, 7.6, 9.76]
    assert metrics.percentile_linear(values, 50) == 3.0
    assert metrics.percentile_linear(values, 90) == pytest.approx(7.6)
    assert metrics.percentile_linear(values, 99) == pytest.approx(9.76)
    assert metrics.percentile_linear([5.0], 99) == 5.0


def test_nearest_rank_is_loadgen_sorted_floor_np():
    values = list(range(1, 101))
    assert metrics.percentile_nearest_rank(values, 99) == 100
    assert metrics.percentile_nearest_rank(values, 50) == 51


def test_minimum_samples_are_the_early_stopping_thresholds():
    assert metrics.MIN_SAMPLES_FOR_PERCENTILE == {50: 11, 90: 64, 95: 130, 99: 662}
    small = metrics.distribution(range(64))
    assert small["n"] == 64
    assert small["insufficient_samples"] == ["p95", "p99"]
    assert metrics.distribution(range(662))["insufficient_samples"] == []
    assert metrics.distribution([])["insufficient_samples"] == ["p50", "p90", "p95", "p99"]


def _record(send, first, last, osl, chunks=None, sched=None, error=None):
    return {
        "t_sched_ns": sched if sched is not None else send,
        "t_send_ns": send,
        "t_first_ns": first,
        "t_first_out_ns": first,
        "t_last_ns": last,
        "osl": osl,
        "chunks": chunks or [],
        "error": error,
    }


def test_ttft_plus_decode_equals_e2e():
    m = metrics.request_metrics(_record(0, 100_000_000, 1_090_000_000, 100))
    assert m["ttft_ms"] == 100.0
    assert m["tpot_ms"] == pytest.approx(10.0)
    assert m["ttft_ms"] + (100 - 1) * m["tpot_ms"] == pytest.approx(m["e2e_ms"])


def test_tpot_corrected_uses_tokens_in_first_chunk():
    # 4 tokens per chunk, 3 chunks of content, cumulative usage streamed per chunk.
    chunks = [[50_000_000, 8, 0, 4], [90_000_000, 8, 0, 8], [130_000_000, 8, 0, 12]]
    m = metrics.request_metrics(_record(0, 50_000_000, 130_000_000, 12, chunks))
    assert m["tpot_ms"] == pytest.approx(80 / 11)
    assert m["tpot_corrected_ms"] == pytest.approx(10.0)
    assert m["icl_ms"] == [40.0, 40.0]


def test_client_queue_time_is_kept_apart():
    m = metrics.request_metrics(_record(5_000_000, 105_000_000, 200_000_000, 2, sched=0))
    assert m["client_queue_ms"] == 5.0
    assert m["ttft_ms"] == 100.0
    assert m["ttft_incl_client_queue_ms"] == 105.0


def test_goodput_counts_errors_in_the_denominator():
    good = _record(0, 100_000_000, 200_000_000, 11)
    slow = _record(0, 900_000_000, 1_000_000_000, 11)
    failed = _record(0, None, None, None, error={"kind": "http_500", "detail": None})
    summary = metrics.cell_summary(
        [good, slow, failed], target_concurrency=1, slo={"ttft_ms": 500.0}
    )
    assert summary["errors"] == 1
    assert summary["error_rate"] == pytest.approx(1 / 3)
    assert summary["good_fraction"] == pytest.approx(1 / 3)
    assert summary["duration_s"] == pytest.approx(1.0)
    assert summary["goodput_req_s"] == pytest.approx(1.0)
    assert summary["output_tok_s"] == pytest.approx(22.0)
    assert summary["error_kinds"] == {"http_500": 1}


def test_spread_across_rounds_gives_cv_and_interval():
    result = metrics.spread([100.0, 110.0, 90.0])
    assert result["mean"] == pytest.approx(100.0)
    assert result["cv"] == pytest.approx(0.1)
    low, high = result["ci95"]
    assert low < 100.0 < high

"""The CPU backends of `bench`: per-iteration raw timings, labelled backends, spread."""

import pytest
from diligence_harness.bench import run_bench


def test_python_fallback_is_quick_labelled_and_raw(monkeypatch):
    import diligence_harness.bench as bench

    monkeypatch.setattr(bench, "load_torch", lambda: (None, "torch is not installed"))
    result = run_bench(seed=42, rounds=3, sustained_s=0, quick=True)
    assert result["backend"] == "python-fallback"
    assert "not the hardware" in result["backend_note"]
    assert [m["round"] for m in result["matmul"]] == [1, 2, 3]
    for record in result["matmul"] + result["memory_bw"]:
        assert record["timing"] == "perf_counter_ns"
        assert len(record["iter_ns"]) == record["timed_iters"] == 5
        assert all(isinstance(t, int) and t > 0 for t in record["iter_ns"])
    matmul = result["matmul"][0]
    assert matmul["flop_per_iter"] == 2 * 40**3
    slowest = max(matmul["iter_ns"])
    assert matmul["tflops"]["min"] == pytest.approx(matmul["flop_per_iter"] / slowest / 1e3)
    assert {s["metric"] for s in result["spread"]} == {"tflops.median", "GBps.median"}
    assert result["spread"][0]["n"] == 3


def test_torch_cpu_backend_when_torch_is_installed():
    pytest.importorskip("torch")
    result = run_bench(seed=42, rounds=1, sustained_s=0, quick=True)
    assert result["backend"] in ("torch-cpu", "cuda")
    assert {m["dtype"] for m in result["matmul"]} >= {"fp32", "bf16"}
    assert {b["kernel"] for b in result["memory_bw"]} == {"copy", "triad"}

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


def test_telemetry_parses_nvidia_smi_queries_and_finds_peak_memory(tmp_path, monkeypatch):
    import time

    from diligence_harness.telemetry import TelemetrySampler

    fake = tmp_path / "nvidia-smi"  # stands in for the real tool on this GPU-less machine
    fake.write_text(
        "#!/bin/sh\n"
        'echo "GPU-aaaa, 1980, 2619, 690.5, 61, 70000, 81559, 0x0000000000000004"\n'
        'echo "GPU-bbbb, 1410, 2619, 300.0, 55, 1024, 81559, 0x0000000000000000"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    sampler = TelemetrySampler(period_s=0.05)
    sampler.start()
    time.sleep(0.3)
    sampler.stop()
    assert sampler.source == "nvidia-smi --query-gpu"
    first = sampler.samples[0]
    assert first[1:] == [
        "GPU-aaaa",
        1980.0,
        2619.0,
        690.5,
        61.0,
        "0x0000000000000004",
        70000.0,
        81559.0,
    ]
    peaks = sampler.peak_memory(0, first[0] + 10**12)
    assert peaks == {"GPU-aaaa": 70000.0, "GPU-bbbb": 1024.0}

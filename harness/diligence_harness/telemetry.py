"""Clock, power, temperature and clock-event-reason samples while benchmarks run.

A power-capped or throttling GPU shows up here and not in the TFLOP/s alone
(docs/metrics.md#telemetry); the load test takes its peak device memory from
the same samples. Samples: [t_ns, gpu_uuid, sm_mhz, mem_mhz,
power_w, temp_c, clock_event_reasons, memory_used_mib, memory_total_mib],
t_ns on the harness clock.
"""

import shutil
import threading

from diligence_harness.clock import now_ns
from diligence_harness.sources import run_tool

_QUERY_FIELDS = "uuid,clocks.sm,clocks.mem,power.draw,temperature.gpu,memory.used,memory.total"


def _float(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


class TelemetrySampler:
    """A background thread polling nvidia-smi (or NVML when nvidia-ml-py is installed)."""

    def __init__(self, period_s: float = 0.25) -> None:
        self.period_s = period_s
        self.samples: list[list] = []
        self.source: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="telemetry")

    def start(self) -> None:
        if shutil.which("nvidia-smi") is None:
            self.source = "unavailable: nvidia-smi not found"
            return
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)

    def peak_memory(self, t_start_ns: int, t_end_ns: int) -> dict | None:
        """Peak memory.used per GPU (MiB) among the samples inside a window."""
        peaks: dict = {}
        for sample in self.samples:
            if t_start_ns <= sample[0] <= t_end_ns and sample[7] is not None:
                uuid = sample[1]
                peaks[uuid] = max(peaks.get(uuid, 0.0), sample[7])
        return peaks or None

    def _run(self) -> None:
        reasons_field = "clocks_event_reasons.active"
        while not self._stop.is_set():
            query = f"--query-gpu={_QUERY_FIELDS},{reasons_field}"
            result = run_tool(["nvidia-smi", query, "--format=csv,noheader,nounits"], 10)
            if not result["ok"] and reasons_field == "clocks_event_reasons.active":
                reasons_field = "clocks_throttle_reasons.active"  # drivers before 535
                continue
            if not result["ok"]:
                self.source = f"unavailable: {result['reason']}"
                return
            self.source = "nvidia-smi --query-gpu"
            t_ns = now_ns()
            for line in result["stdout"].splitlines():
                cells = [c.strip() for c in line.split(",")]
                if len(cells) >= 8:
                    uuid, sm, mem, power, temp, used, total, reasons = cells[:8]
                    values = [_float(v) for v in (sm, mem, power, temp)]
                    self.samples.append([t_ns, uuid, *values, reasons, _float(used), _float(total)])
            self._stop.wait(self.period_s)

"""Clock, power, temperature and clock-event-reason samples while benchmarks run.

A power-capped or throttling GPU shows up here and not in the TFLOP/s alone
(harness-anchors §6 idea 4). Samples: [t_ns, gpu_uuid, sm_mhz, mem_mhz,
power_w, temp_c, clock_event_reasons], t_ns on the harness clock.
"""

import threading

from diligence_harness.clock import now_ns
from diligence_harness.sources import run_tool

_QUERY_FIELDS = "uuid,clocks.sm,clocks.mem,power.draw,temperature.gpu"


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
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

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
                if len(cells) >= 6:
                    uuid, sm, mem, power, temp, reasons = cells[:6]
                    self.samples.append(
                        [t_ns, uuid, _float(sm), _float(mem), _float(power), _float(temp), reasons]
                    )
            self._stop.wait(self.period_s)

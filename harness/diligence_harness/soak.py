"""`soak`: watch an endpoint and the GPUs for a while (docs/rules/acceptance.md, layer one).

Every `interval` a health check ("tick") probes the endpoint with small bounded
requests, each with a timeout: `GET /v1/models` and a 1-token chat completion
(`--probe`). Each probe is recorded raw (monotonic ns, ok, HTTP status, latency,
error). Restarts are detected three ways, each recorded raw:

- the endpoint's Prometheus `/metrics` `process_start_time_seconds` changes
  (vLLM and most Python servers expose it); absent metrics are recorded as such;
- the host's boot id changes (`/proc/sys/kernel/random/boot_id`, or the output of
  `--boot-id-command`, e.g. `ssh gpu-box cat /proc/sys/kernel/random/boot_id`);
- a GPU disappears from `nvidia-smi -q -x` and comes back.

The GPUs are sampled every `--gpu-interval` (and at the start and end): ECC
error counters from `nvidia-smi -q -x`; Xid events from new `NVRM: Xid` lines in
the kernel log (`dmesg`, or `--kernel-log FILE`). Without nvidia-smi or a
readable kernel log the bundle says "not measured" with the reason, never zero.

The summary below is the harness's; the server recomputes its own from the raw
records with the same definitions (README "soak").
"""

import contextlib
import http.client
import json
import re
import shlex
import shutil
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from diligence_harness.clock import now_ns
from diligence_harness.findings import finding
from diligence_harness.sources import read_text, run_tool
from diligence_harness.streamclient import parse_endpoint

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"
XID_LINE = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)")
PROBE_KINDS = ("models", "completion")
MAX_BODY = 1_000_000


def parse_duration(text: str) -> float:
    """'30m', '10s', '1h', '1.5s', '45' (seconds) -> seconds; ValueError otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(text))
    if not match:
        raise ValueError(f"not a duration: {text!r} (e.g. 30m, 10s, 1h)")
    value = float(match.group(1))
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[match.group(2) or "s"]
    seconds = value * scale
    if seconds <= 0:
        raise ValueError(f"a duration must be positive, got {text!r}")
    return seconds


@dataclass(frozen=True)
class SoakConfig:
    endpoint: str
    model: str
    duration_s: float
    interval_s: float = 10.0
    probe_timeout_s: float = 5.0
    probes: tuple[str, ...] = PROBE_KINDS
    api_key: str | None = None
    metrics_url: str | None = None  # None: <server root>/metrics; "" disables
    gpu_interval_s: float = 60.0
    kernel_log: str | None = None  # a file to read instead of `dmesg`
    boot_id_command: str | None = None


def _request(url: str, *, api_key: str | None, timeout_s: float, body: dict | None = None):
    """One bounded HTTP request: (record, body bytes or None). Never raises."""
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, data=data, headers=headers)
    t0 = now_ns()
    status, payload, error = None, None, None
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status, payload = response.status, response.read(MAX_BODY)
    except urllib.error.HTTPError as exc:
        status, error = exc.code, f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        error = f"{type(exc).__name__}: {reason}"
    latency_ms = (now_ns() - t0) / 1e6
    ok = error is None and status is not None and 200 <= status < 300
    return {
        "t_ns": t0,
        "ok": ok,
        "http_status": status,
        "latency_ms": latency_ms,
        "error": error,
    }, (payload)


def _probe(cfg: SoakConfig, kind: str, base: str) -> dict:
    if kind == "models":
        record, payload = _request(
            f"{base}/v1/models", api_key=cfg.api_key, timeout_s=cfg.probe_timeout_s
        )
    else:
        body = {
            "model": cfg.model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
            "temperature": 0,
            "stream": False,
        }
        record, payload = _request(
            f"{base}/v1/chat/completions",
            api_key=cfg.api_key,
            timeout_s=cfg.probe_timeout_s,
            body=body,
        )
    if record["ok"]:
        try:
            document = json.loads(payload or b"")
            key = "data" if kind == "models" else "choices"
            if not isinstance(document, dict) or not document.get(key):
                raise ValueError(f"no {key!r} in the answer")
        except ValueError as exc:
            record["ok"], record["error"] = False, f"bad answer: {exc}"
    return {"kind": kind, **record}


def parse_process_start(text: str) -> float | None:
    """The `process_start_time_seconds` sample of a Prometheus text exposition."""
    for line in text.splitlines():
        if line.startswith("process_start_time_seconds"):
            parts = line.split()
            try:
                return float(parts[-1])
            except (ValueError, IndexError):
                return None
    return None


def _metrics_sample(url: str, cfg: SoakConfig) -> dict:
    record, payload = _request(url, api_key=cfg.api_key, timeout_s=cfg.probe_timeout_s)
    value = None
    if record["ok"]:
        value = parse_process_start((payload or b"").decode("utf-8", "replace"))
        if value is None:
            record["error"] = "no process_start_time_seconds in /metrics"
    return {
        "t_ns": record["t_ns"],
        "http_status": record["http_status"],
        "process_start_time_seconds": value,
        "error": record["error"],
    }


def _boot_id(cfg: SoakConfig) -> tuple[str | None, str | None]:
    if cfg.boot_id_command:
        done = run_tool(shlex.split(cfg.boot_id_command), timeout_s=cfg.probe_timeout_s)
        if not done["ok"]:
            return None, f"--boot-id-command: {done['reason']}"
        return done["stdout"].strip() or None, None
    text = read_text(BOOT_ID_PATH)
    return ((text or "").strip() or None), (None if text else f"{BOOT_ID_PATH} not readable")


def _uncorrected(section: ET.Element | None) -> int | None:
    """Uncorrected ECC errors of one counter section, across driver generations."""
    if section is None:
        return None
    total = section.findtext("double_bit/total")
    if total and total.strip().isdigit():
        return int(total)
    texts = [(child.text or "").strip() for child in section if "uncorrectable" in child.tag]
    values = [int(text) for text in texts if text.isdigit()]
    return sum(values) if values else None


def gpu_sample(text: str) -> list[dict]:
    """Per GPU in an `nvidia-smi -q -x` document: UUID, bus id and ECC counters."""
    if "<!ENTITY" in text:
        raise ValueError("entity declarations are not allowed in nvidia-smi output")
    root = ET.fromstring(text)  # noqa: S314 - entities refused above; stdlib only
    gpus = []
    for gpu in root.findall("gpu"):
        gpus.append(
            {
                "uuid": (gpu.findtext("uuid") or "").strip() or None,
                "pci_bus_id": (gpu.findtext("pci/pci_bus_id") or gpu.get("id") or "").lower(),
                "ecc_mode": (gpu.findtext("ecc_mode/current_ecc") or "").strip() or None,
                "ecc_uncorrected_volatile": _uncorrected(gpu.find("ecc_errors/volatile")),
                "ecc_uncorrected_aggregate": _uncorrected(gpu.find("ecc_errors/aggregate")),
            }
        )
    return gpus


def _nvml_counter(pynvml, handle, counter: str) -> int | None:
    try:
        return int(
            pynvml.nvmlDeviceGetTotalEccErrors(
                handle, pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, getattr(pynvml, counter)
            )
        )
    except Exception:  # ECC off or not supported on this GPU: not measured, not zero
        return None


def nvml_sample(pynvml) -> list[dict]:
    """The same fields as `gpu_sample`, through nvidia-ml-py; a lost GPU is left out."""
    from diligence_harness.nvsmi import normalise_bus_id

    gpus = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            bus_id = pynvml.nvmlDeviceGetPciInfo(handle).busId
        except Exception:  # noqa: S112 - e.g. GpuIsLost: its absence from the sample is the record
            continue
        gpus.append(
            {
                "uuid": uuid.decode() if isinstance(uuid, bytes) else uuid,
                "pci_bus_id": normalise_bus_id(
                    bus_id.decode() if isinstance(bus_id, bytes) else bus_id
                ),
                "ecc_mode": None,
                "ecc_uncorrected_volatile": _nvml_counter(pynvml, handle, "NVML_VOLATILE_ECC"),
                "ecc_uncorrected_aggregate": _nvml_counter(pynvml, handle, "NVML_AGGREGATE_ECC"),
            }
        )
    return gpus


def _load_nvml():
    """(pynvml, None) initialised, or (None, the reason NVML is not usable)."""
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError has many subclasses; any means "no NVML here"
        return None, f"nvmlInit failed: {exc}"
    return pynvml, None


class GpuWatcher:
    """ECC counters and GPU presence from nvidia-smi (else NVML); Xid lines from the kernel log."""

    def __init__(self, cfg: SoakConfig) -> None:
        self.cfg = cfg
        self.gpu: dict[str, Any] = {
            "status": "measured",
            "reason": None,
            "source": "nvidia-smi -q -x",
        }
        self.samples: list[dict] = []
        self.xid: dict[str, Any] = {
            "status": "measured",
            "reason": None,
            "source": None,
            "events": [],
        }
        self._seen_lines: set[str] | None = None
        self._nvml = None

    def start(self) -> None:
        if shutil.which("nvidia-smi") is None:
            self._nvml, reason = _load_nvml()
            if self._nvml is None:
                self.gpu.update(
                    status="not_measured", reason=f"nvidia-smi: not found; NVML: {reason}"
                )
            else:
                self.gpu["source"] = "nvml (nvidia-ml-py)"
        self.sample()
        lines = self._kernel_lines()
        if lines is not None:
            self._seen_lines = set(lines)
            self.xid["xid_lines_before_soak"] = sum(1 for line in lines if XID_LINE.search(line))

    def stop(self) -> None:
        if self._nvml is not None:
            with contextlib.suppress(Exception):  # a broken NVML's shutdown proves nothing
                self._nvml.nvmlShutdown()
            self._nvml = None

    def _sample_nvml(self) -> None:
        t_ns = now_ns()
        try:
            gpus = nvml_sample(self._nvml)
            self.samples.append({"t_ns": t_ns, "ok": True, "error": None, "gpus": gpus})
        except Exception as exc:
            self.samples.append({"t_ns": t_ns, "ok": False, "error": str(exc), "gpus": []})

    def sample(self) -> None:
        if self.gpu["status"] == "measured" and self._nvml is not None:
            self._sample_nvml()
        elif self.gpu["status"] == "measured":
            t_ns = now_ns()
            smi = run_tool(["nvidia-smi", "-q", "-x"], timeout_s=60)
            if not smi["ok"]:
                self.samples.append({"t_ns": t_ns, "ok": False, "error": smi["reason"], "gpus": []})
            else:
                try:
                    gpus = gpu_sample(smi["stdout"])
                    self.samples.append({"t_ns": t_ns, "ok": True, "error": None, "gpus": gpus})
                except (ValueError, ET.ParseError) as exc:
                    self.samples.append({"t_ns": t_ns, "ok": False, "error": str(exc), "gpus": []})
        self._read_xid()

    def _kernel_lines(self) -> list[str] | None:
        if self.cfg.kernel_log:
            text = read_text(self.cfg.kernel_log, limit=50_000_000)
            self.xid["source"] = f"file {self.cfg.kernel_log}"
            if text is None:
                self.xid.update(status="not_measured", reason=f"{self.cfg.kernel_log} not readable")
                return None
            return text.splitlines()
        done = run_tool(["dmesg"], timeout_s=30)
        self.xid["source"] = "dmesg"
        if not done["ok"]:
            detail = (done["stderr"] or "").strip()[:200]
            reason = f"dmesg: {done['reason']}" + (f" ({detail})" if detail else "")
            self.xid.update(status="not_measured", reason=reason)
            return None
        return done["stdout"].splitlines()

    def _read_xid(self) -> None:
        if self._seen_lines is None:
            return
        t_ns = now_ns()
        lines = self._kernel_lines()
        if lines is None:
            self._seen_lines = None
            return
        for line in lines:
            if line in self._seen_lines:
                continue
            self._seen_lines.add(line)
            if XID_LINE.search(line):
                self.xid["events"].append({"t_ns": t_ns, "line": line.strip()})


def run_soak(cfg: SoakConfig) -> dict:
    """Probe until the duration is over (or Ctrl-C); raw records and the harness's summary."""
    endpoint = parse_endpoint(cfg.endpoint)
    base = f"{endpoint.scheme}://{endpoint.host_header}{endpoint.base_path}"
    root = f"{endpoint.scheme}://{endpoint.host_header}"
    metrics_url = f"{root}/metrics" if cfg.metrics_url is None else cfg.metrics_url
    watcher = GpuWatcher(cfg)
    probes, metrics, boot_ids = [], [], []
    interval_ns, duration_ns = int(cfg.interval_s * 1e9), int(cfg.duration_s * 1e9)
    gpu_interval_ns = int(cfg.gpu_interval_s * 1e9)
    t_start = now_ns()
    watcher.start()
    next_gpu, tick, skipped, interrupted = t_start + gpu_interval_ns, 0, 0, False
    try:
        while t_start + tick * interval_ns <= t_start + duration_ns:
            wait_ns = t_start + tick * interval_ns - now_ns()
            if wait_ns > 0:
                time.sleep(wait_ns / 1e9)
            for kind in cfg.probes:
                probes.append({"tick": tick, **_probe(cfg, kind, base)})
            if metrics_url:
                metrics.append(_metrics_sample(metrics_url, cfg))
            boot_id, boot_error = _boot_id(cfg)
            boot_ids.append({"t_ns": now_ns(), "boot_id": boot_id, "error": boot_error})
            if now_ns() >= next_gpu:
                watcher.sample()
                next_gpu += gpu_interval_ns
            tick += 1
            while t_start + tick * interval_ns < now_ns():  # a slow tick: no catch-up burst
                tick, skipped = tick + 1, skipped + 1
    except KeyboardInterrupt:
        interrupted = True
    watcher.sample()
    watcher.stop()
    t_end = now_ns()
    result = {
        "endpoint": endpoint.display,
        "model": cfg.model,
        "requested_duration_s": cfg.duration_s,
        "interval_s": cfg.interval_s,
        "probe_timeout_s": cfg.probe_timeout_s,
        "probe_kinds": list(cfg.probes),
        "gpu_interval_s": cfg.gpu_interval_s,
        "t_start_ns": t_start,
        "t_end_ns": t_end,
        "interrupted": interrupted,
        "ticks_skipped": skipped,
        "probes": probes,
        "metrics": {"url_path": "/metrics" if metrics_url else None, "samples": metrics},
        "boot_ids": boot_ids,
        "gpu": {**watcher.gpu, "samples": watcher.samples},
        "xid": watcher.xid,
    }
    result["summary"] = summarise(result)
    return result


# -- the harness's summary (the server recomputes its own from the records above) --


def _s(t_ns: int, t_start: int) -> float:
    return (t_ns - t_start) / 1e9


def outages(result: dict) -> list[list[float]]:
    """[from, to] seconds: from the first failed tick to the next good one (or the end)."""
    ticks: dict[int, list[dict]] = {}
    for probe in result["probes"]:
        ticks.setdefault(probe["tick"], []).append(probe)
    start, found, down_since = result["t_start_ns"], [], None
    for _tick, group in sorted(ticks.items()):
        at = min(p["t_ns"] for p in group)
        good = all(p["ok"] for p in group)
        if not good and down_since is None:
            down_since = at
        elif good and down_since is not None:
            found.append([_s(down_since, start), _s(at, start)])
            down_since = None
    if down_since is not None:
        found.append([_s(down_since, start), _s(result["t_end_ns"], start)])
    return found


def restarts(result: dict) -> list[dict]:
    start, found = result["t_start_ns"], []
    last = None
    for sample in result["metrics"]["samples"]:
        value = sample["process_start_time_seconds"]
        if value is None:
            continue
        if last is not None and value != last:
            found.append({"at_s": _s(sample["t_ns"], start), "kind": "endpoint"})
        last = value
    last = None
    for sample in result["boot_ids"]:
        if sample["boot_id"] is None:
            continue
        if last is not None and sample["boot_id"] != last:
            found.append({"at_s": _s(sample["t_ns"], start), "kind": "host"})
        last = sample["boot_id"]
    seen: set[str] = set()  # GPU UUIDs
    missing: set[str] = set()
    for sample in result["gpu"]["samples"]:
        present = {g["uuid"] for g in sample["gpus"] if g["uuid"]}
        back = missing & present
        if back:
            found.append({"at_s": _s(sample["t_ns"], start), "kind": "gpu"})
        missing = (missing | (seen - present)) - present
        seen |= present
    return sorted(found, key=lambda r: r["at_s"])


def ecc_deltas(result: dict) -> dict[str, int]:
    """Per GPU UUID, the rises of its volatile uncorrected counter between samples."""
    if result["gpu"]["status"] != "measured":
        return {}
    last: dict[str, int] = {}
    deltas: dict[str, int] = {}
    for sample in result["gpu"]["samples"]:
        for gpu in sample["gpus"]:
            value = gpu["ecc_uncorrected_volatile"]
            if value is None or not gpu["uuid"]:
                continue
            previous = last.get(gpu["uuid"])
            deltas.setdefault(gpu["uuid"], 0)
            if previous is not None and value > previous:
                deltas[gpu["uuid"]] += value - previous
            last[gpu["uuid"]] = value
    return deltas


def ecc_uncorrected(result: dict) -> int | None:
    """All GPUs' rises together; None when no counter could be read (not measured)."""
    deltas = ecc_deltas(result)
    return sum(deltas.values()) if deltas else None


def summarise(result: dict) -> dict:
    ticks: dict[int, bool] = {}
    for probe in result["probes"]:
        ticks[probe["tick"]] = ticks.get(probe["tick"], True) and probe["ok"]
    down = outages(result)
    start = result["t_start_ns"]
    return {
        "observed_duration_s": _s(result["t_end_ns"], start),
        "health_checks_total": len(ticks),
        "health_checks_ok": sum(ticks.values()),
        "outages": down,
        "downtime_s": sum(b - a for a, b in down),
        "restarts": restarts(result),
        "xid_events": [
            {"at_s": _s(e["t_ns"], start), "line": e["line"]} for e in result["xid"]["events"]
        ],
        "ecc_uncorrected": ecc_uncorrected(result),
        "ecc_deltas": ecc_deltas(result),
        "gpu": result["gpu"]["status"],
        "xid": result["xid"]["status"],
    }


def soak_findings(result: dict) -> list[dict]:
    summary, found = result["summary"], []

    def add(check_id, severity, message, **evidence):
        found.append(finding(check_id, severity, None, message, step="soak", **evidence))

    if summary["outages"]:
        add("SOAK-OUTAGE", "warn", "the endpoint was unreachable", outages=summary["outages"])
    if summary["restarts"]:
        add("SOAK-RESTART", "warn", "a restart was observed", restarts=summary["restarts"])
    if summary["xid_events"]:
        add("SOAK-XID", "fail", "Xid events in the kernel log", events=summary["xid_events"])
    if summary["ecc_uncorrected"]:
        add("SOAK-ECC", "fail", "uncorrected ECC errors appeared", count=summary["ecc_uncorrected"])
    for what in ("gpu", "xid"):
        if result[what]["status"] != "measured":
            add("SOAK-NOT-MEASURED", "info", f"{what}: not measured", reason=result[what]["reason"])
    return found


def soak_config(args) -> SoakConfig:
    probes = tuple(args.soak_probe)
    unknown = [p for p in probes if p not in PROBE_KINDS]
    if unknown or not probes:
        raise ValueError(f"--probe takes {','.join(PROBE_KINDS)}, got {','.join(probes)}")
    return SoakConfig(
        endpoint=args.endpoint,
        model=args.model,
        duration_s=parse_duration(args.soak_duration),
        interval_s=parse_duration(args.soak_interval),
        probe_timeout_s=args.probe_timeout_s,
        probes=probes,
        api_key=args.api_key,
        metrics_url=args.metrics_url,
        gpu_interval_s=parse_duration(args.gpu_interval),
        kernel_log=args.kernel_log,
        boot_id_command=args.boot_id_command,
    )


def step_soak(args, evidence) -> dict:
    result = run_soak(soak_config(args))
    evidence.findings += soak_findings(result)
    return result

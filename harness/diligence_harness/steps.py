"""Each step of a run: collect, record raw outputs as artifacts, raise findings.

A step never stops the run: it ends `ok`, `skipped` (with the reason, e.g. no
endpoint given, no GPU) or `error` (with the exception), and the bundle says which.
"""

import argparse
import os
import traceback
from dataclasses import dataclass, field

from diligence_harness import metrics
from diligence_harness.bundle import make_artifact
from diligence_harness.clock import now_ns, utc_now
from diligence_harness.findings import finding as make_finding
from diligence_harness.inventory import build_inventory, finding
from diligence_harness.nvsmi import parse_nvidia_smi_xml
from diligence_harness.sources import (
    parse_lspci,
    read_nvml_bindings,
    read_proc_driver_gpus,
    read_sysfs_gpus,
    run_tool,
    shim_report,
)


class Skip(Exception):
    """The step cannot run here; the message is the recorded reason."""


@dataclass
class Evidence:
    secrets: list[str]
    findings: list[dict] = field(default_factory=list)
    artifacts: list[dict] = field(default_factory=list)

    def artifact(self, name: str, content: str | bytes, media_type: str = "text/plain") -> None:
        self.artifacts.append(make_artifact(name, content, media_type, self.secrets))


def run_step(step, args: argparse.Namespace, evidence: Evidence) -> dict:
    started, t0 = utc_now(), now_ns()
    status, reason, result = "ok", None, None
    try:
        result = step(args, evidence)
    except Skip as skip:
        status, reason = "skipped", str(skip)
    except Exception as exc:  # a broken step is evidence too; the other steps go on
        status, reason = "error", f"{type(exc).__name__}: {exc}"
        evidence.artifact(f"traceback-{step.__name__}.txt", traceback.format_exc())
    return {
        "status": status,
        "reason": reason,
        "started_utc": started,
        "finished_utc": utc_now(),
        "duration_s": (now_ns() - t0) / 1e9,
        "result": result,
    }


def _read_file(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def step_inventory(args: argparse.Namespace, evidence: Evidence) -> dict:
    if args.nvidia_smi_xml:
        return _inventory_from_files(args, evidence)
    sources: dict = {}
    nvml_doc, topo_text, nvlink_text = None, None, None
    smi = run_tool(["nvidia-smi", "-q", "-x"], timeout_s=120)
    if smi["ok"]:
        evidence.artifact("nvidia-smi-q-x.xml", smi["stdout"], "application/xml")
        nvml_doc = parse_nvidia_smi_xml(smi["stdout"])
        sources["nvml"] = {"status": "ok", "method": "nvidia-smi -q -x"}
        topo = run_tool(["nvidia-smi", "topo", "-m"], timeout_s=60)
        nvlink = run_tool(["nvidia-smi", "nvlink", "-s"], timeout_s=60)
        for name, result in (("nvidia-smi-topo-m.txt", topo), ("nvidia-smi-nvlink-s.txt", nvlink)):
            if result["ok"]:
                evidence.artifact(name, result["stdout"])
        topo_text = topo["stdout"] if topo["ok"] else None
        nvlink_text = nvlink["stdout"] if nvlink["ok"] else None
    else:
        sources["nvml"] = {"status": "skipped", "reason": f"nvidia-smi: {smi['reason']}"}
    bindings = read_nvml_bindings()
    sources["nvml_bindings"] = {k: bindings[k] for k in ("status", "reason")}
    cuda, torch = _runtime_source(sources)
    pci, kernel = _pci_source(args, evidence, sources)
    inventory, findings = build_inventory(
        nvml_doc=nvml_doc,
        cuda=cuda,
        pci=pci,
        shims=shim_report(),
        topology_text=topo_text,
        nvlink_text=nvlink_text,
    )
    findings += _nvml_paths_findings(nvml_doc, bindings["gpus"])
    findings += _kernel_findings(nvml_doc, kernel)
    inventory.update(sources=sources, nvml_bindings=bindings["gpus"], kernel_driver=kernel)
    inventory["alloc_probe"] = _alloc_probes(args, torch, cuda)
    findings += [
        finding("INV-ALLOC-PROBE", "fail", p["device"], "allocate-and-touch probe failed", **p)
        for p in inventory["alloc_probe"]
        if p.get("ok") is False
    ]
    evidence.findings += findings
    return inventory


def _inventory_from_files(args: argparse.Namespace, evidence: Evidence) -> dict:
    """Captured tool output from a machine where the harness could not run."""
    text = _read_file(args.nvidia_smi_xml)
    evidence.artifact(os.path.basename(args.nvidia_smi_xml), text, "application/xml")
    topo_text = _read_file(args.topo) if args.topo else None
    if topo_text:
        evidence.artifact(os.path.basename(args.topo), topo_text)
    pci = None
    if args.lspci:
        lspci_text = _read_file(args.lspci)
        evidence.artifact(os.path.basename(args.lspci), lspci_text)
        pci = parse_lspci(lspci_text)
    live_reason = "inventory built from captured files; this machine's runtime is not the source"
    inventory, findings = build_inventory(
        nvml_doc=parse_nvidia_smi_xml(text), cuda=None, pci=pci, topology_text=topo_text
    )
    inventory["sources"] = {
        "nvml": {"status": "ok", "method": "file"},
        "cuda_runtime": {"status": "skipped", "reason": live_reason},
        "pci": {"status": "ok" if pci else "skipped", "method": "file" if pci else None},
    }
    inventory["alloc_probe"] = [{"device": None, "skipped": live_reason}]
    evidence.findings += findings
    return inventory


def _runtime_source(sources: dict):
    from diligence_harness.torchprobe import cuda_devices, load_torch

    torch, reason = load_torch()
    if torch is None:
        sources["cuda_runtime"] = {"status": "skipped", "reason": reason}
        return None, None
    if not torch.cuda.is_available():
        sources["cuda_runtime"] = {"status": "ok", "reason": "torch.cuda.is_available() is False"}
        return [], torch
    sources["cuda_runtime"] = {"status": "ok", "method": f"torch {torch.__version__}"}
    return cuda_devices(torch), torch


def _pci_source(args: argparse.Namespace, evidence: Evidence, sources: dict):
    pci = read_sysfs_gpus()
    lspci = run_tool(["lspci", "-nn", "-D"], timeout_s=30)
    if lspci["ok"]:
        evidence.artifact("lspci-nn-D.txt", lspci["stdout"])
        pci = pci or parse_lspci(lspci["stdout"])
    kernel = read_proc_driver_gpus()
    sources["pci"] = {
        "status": "ok",
        "sysfs_devices": len(read_sysfs_gpus()),
        "lspci": "ok" if lspci["ok"] else lspci["reason"],
        "proc_driver_gpus": len(kernel),
    }
    return pci, kernel


def _nvml_paths_findings(nvml_doc: dict | None, bindings: list[dict]) -> list[dict]:
    """nvidia-smi and the NVML bindings are two user-space paths; they should agree."""
    found = []
    by_bus = {g["pci_bus_id"]: g for g in (nvml_doc or {}).get("gpus", [])}
    for gpu in bindings:
        smi = by_bus.get(gpu["pci_bus_id"])
        for name in ("name", "uuid", "memory_total_mib"):
            if smi and smi.get(name) is not None and smi.get(name) != gpu.get(name):
                found.append(
                    finding(
                        "INV-NVML-PATHS",
                        "fail",
                        gpu["pci_bus_id"],
                        f"nvidia-smi and the NVML bindings disagree on {name}",
                        nvidia_smi=smi.get(name),
                        bindings=gpu.get(name),
                    )
                )
    return found


def _kernel_findings(nvml_doc: dict | None, kernel: list[dict]) -> list[dict]:
    """The kernel driver's /proc view is outside the reach of an LD_PRELOAD shim."""
    found = []
    by_bus = {g["pci_bus_id"]: g for g in (nvml_doc or {}).get("gpus", [])}
    for gpu in kernel:
        smi = by_bus.get(gpu["pci_bus_id"])
        if smi and gpu.get("name") and smi.get("name") and gpu["name"] != smi["name"]:
            found.append(
                finding(
                    "INV-NAME-KERNEL",
                    "fail",
                    gpu["pci_bus_id"],
                    "the kernel driver and NVML name the GPU differently",
                    kernel=gpu["name"],
                    nvml=smi["name"],
                )
            )
    return found


def _alloc_probes(args: argparse.Namespace, torch, cuda: list[dict] | None) -> list[dict]:
    if args.no_alloc_probe:
        return [{"device": None, "skipped": "--no-alloc-probe"}]
    if torch is None or not cuda:
        reason = "needs torch with a CUDA device" if torch is None else "no CUDA device visible"
        return [{"device": None, "skipped": reason}]
    from diligence_harness.torchprobe import ALLOC_PROBE_SEED, alloc_touch_probe

    return [
        alloc_touch_probe(torch, d["cuda_index"], args.alloc_fraction, ALLOC_PROBE_SEED)
        | {"uuid": d["uuid"]}
        for d in cuda
    ]


def step_environment(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.environment import collect_environment

    return collect_environment(image_digest=getattr(args, "image_digest", None))


def step_bench(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.bench import run_bench

    return run_bench(
        seed=args.bench_seed,
        rounds=args.bench_rounds,
        sustained_s=args.sustained_s,
        quick=args.quick,
    )


def loadtest_config(args: argparse.Namespace):
    from diligence_harness.loadtest import LoadtestConfig

    if not args.endpoint or not args.model:
        raise Skip("no --endpoint and --model given")
    return LoadtestConfig(
        endpoint=args.endpoint,
        model=args.model,
        apis=tuple(args.api),
        ladder=tuple(args.ladder),
        rounds=args.rounds,
        prompt_sets=tuple(args.prompt_sets),
        prompt_source=getattr(args, "prompt_set_file", None),
        max_tokens=args.max_tokens,
        ignore_eos=not args.no_ignore_eos,
        min_tokens=not args.no_min_tokens,
        continuous_usage=not args.no_continuous_usage,
        requests_per_stream=args.requests_per_stream,
        min_requests_per_cell=args.min_requests_per_cell,
        min_requests_per_level=args.min_requests_per_level,
        warmup_requests=args.warmup_requests,
        timeout_s=args.timeout_s,
        seed=args.seed,
        slo_ms={
            "ttft_ms": args.slo_ttft_ms,
            "tpot_ms": args.slo_tpot_ms,
            "e2e_ms": args.slo_e2e_ms,
        },
        api_key=args.api_key,
        busy_poll=args.busy_poll,
    )


def step_loadtest(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.loadtest import run_loadtest

    cfg = loadtest_config(args)
    result = run_loadtest(cfg)
    evidence.findings += loadtest_findings(result, cfg.max_tokens)
    return result


def _lt_finding(check_id: str, severity: str, subject: str | None, message: str, **evidence):
    return make_finding(check_id, severity, subject, message, step="loadtest", **evidence)


def loadtest_findings(result: dict, max_tokens: int) -> list[dict]:
    found = []
    if not all(p["extras_accepted"] for p in result["preflight"].values()):
        found.append(
            _lt_finding(
                "LT-EXTRAS-REFUSED",
                "info",
                None,
                "the server refused ignore_eos/min_tokens/continuous_usage_stats; output length "
                "is not fixed and bundled chunks cannot be corrected",
            )
        )
    for cell in result["cells"]:
        found += _cell_findings(cell, max_tokens, result["preflight"])
    found += _level_sample_findings(result["cells"])
    for group in result["across_rounds"]:
        cv = group["metrics"]["output_tok_s"].get("cv")
        if cv is not None and cv > 0.10 and len(group["rounds"]) > 1:
            subject = f"{group['api']}/c{group['concurrency']}/{group['prompt_set']}"
            found.append(
                _lt_finding(
                    "LT-ROUND-SPREAD",
                    "warn",
                    subject,
                    "output tokens/s varies more than 10 % across rounds (isolation?)",
                    cv=cv,
                )
            )
    return found


def _level_sample_findings(cells: list[dict]) -> list[dict]:
    """Levels the server cannot state a P95 for: too few requests with a first token."""
    from diligence_harness.loadtest import P95_MIN_SAMPLES

    samples: dict[int, int] = {}
    for cell in cells:
        timed = sum(
            1
            for r in cell["requests"]
            if r["error"] is None and r["t_first_ns"] is not None and r["t_send_ns"] is not None
        )
        samples[cell["concurrency"]] = samples.get(cell["concurrency"], 0) + timed
    return [
        _lt_finding(
            "LT-FEW-SAMPLES",
            "warn",
            f"c{concurrency}",
            f"{n} requests with a first token at this level; a P95 needs at least "
            f"{P95_MIN_SAMPLES}: send {P95_MIN_SAMPLES - n} more (the level is not measured)",
            samples=n,
            needed=P95_MIN_SAMPLES,
        )
        for concurrency, n in sorted(samples.items())
        if n < P95_MIN_SAMPLES
    ]


def _cell_findings(cell: dict, max_tokens: int, preflight: dict) -> list[dict]:
    found, summary = [], cell["summary"]
    subject = f"{cell['api']}/r{cell['round']}/c{cell['concurrency']}/{cell['prompt_set']}"
    effective, target = summary["effective_concurrency"], cell["concurrency"]
    if effective is not None and effective < 0.9 * target:
        found.append(
            _lt_finding(
                "LT-CLIENT-LIMITED",
                "warn",
                subject,
                "effective concurrency fell short of the target: the client may be the bottleneck",
                effective=effective,
                target=target,
            )
        )
    lag_p99 = cell["client"]["loop_lag_ms"].get("p99")
    if lag_p99 is not None and lag_p99 > 50:
        # docs/metrics.md#client-accuracy: a late event loop means late timestamps.
        found.append(
            _lt_finding(
                "LT-CLIENT-LAG",
                "warn",
                subject,
                "the client's event loop ran late (p99 > 50 ms): timings are inflated",
                loop_lag_p99_ms=lag_p99,
            )
        )
    if summary["errors"]:
        found.append(
            _lt_finding(
                "LT-ERRORS",
                "warn",
                subject,
                "requests failed",
                errors=summary["errors"],
                kinds=summary["error_kinds"],
            )
        )
    ok = [r for r in cell["requests"] if r["error"] is None]
    limit = min(0.05 * max_tokens, 50)  # AIPerf OSL mismatch threshold (docs/metrics.md)
    if all(p["extras_accepted"] for p in preflight.values()):
        mismatched = sum(
            1 for r in ok if r["osl"] is not None and abs(r["osl"] - max_tokens) > limit
        )
        if mismatched:
            found.append(
                _lt_finding(
                    "LT-OSL-MISMATCH",
                    "warn",
                    subject,
                    "output length differs from the fixed length requested",
                    requests=mismatched,
                )
            )
    early_empty = sum(1 for r in ok if r["chunks"] and not (r["chunks"][0][1] or r["chunks"][0][2]))
    if early_empty:
        found.append(
            _lt_finding(
                "LT-EMPTY-FIRST-CHUNK",
                "info",
                subject,
                "streams began with an empty/role-only chunk (ignored for TTFT, §2.1)",
                requests=early_empty,
            )
        )
    return found


# --- the open-loop rate search (docs/metrics.md#rate-search) -------------------------


def ratesearch_config(args: argparse.Namespace):
    from diligence_harness.ratesearch import RateSearchConfig

    if getattr(args, "slo_ttft_ms", None) is None and getattr(args, "slo_tpot_ms", None) is None:
        raise Skip("no --slo-ttft-ms or --slo-tpot-ms given")
    load = loadtest_config(args)
    return RateSearchConfig(
        load=load,
        arrival=args.rate_arrival,
        seed=args.rate_seed,
        start_rps=args.rate_start,
        max_rps=args.rate_max,
        max_steps=args.rate_max_steps,
        requests_per_step=args.rate_requests,
        resolution=args.rate_resolution,
        max_seconds=args.rate_max_seconds,
        max_error_rate=args.rate_max_error_pct / 100,
        max_in_flight=args.rate_max_in_flight,
    )


def step_ratesearch(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.ratesearch import run_ratesearch

    result = run_ratesearch(ratesearch_config(args))
    evidence.findings += ratesearch_findings(result)
    return result


def _rs_finding(check_id: str, severity: str, subject: str | None, message: str, **evidence):
    return make_finding(check_id, severity, subject, message, step="ratesearch", **evidence)


def ratesearch_findings(result: dict) -> list[dict]:
    from diligence_harness.ratesearch import P95_MIN_SAMPLES

    found = []
    for step in result["steps"]:
        summary, subject = step["summary"], f"{step['target_rps']:g} req/s"
        # Against the schedule's own rate: a Poisson schedule's realised rate varies by itself.
        send_rps, offered_rps = summary.get("send_rps"), summary.get("offered_rps")
        if send_rps is not None and offered_rps and send_rps < 0.9 * offered_rps:
            found.append(
                _rs_finding(
                    "RS-CLIENT-LIMITED",
                    "warn",
                    subject,
                    "requests went out slower than scheduled: the client may be the bottleneck",
                    send_rps=send_rps,
                    offered_rps=offered_rps,
                )
            )
        if step["meets_slo"] is None:
            found.append(
                _rs_finding(
                    "RS-FEW-SAMPLES",
                    "warn",
                    subject,
                    f"{summary['ttft_ms']['n']} requests with a first token; a P95 needs at "
                    f"least {P95_MIN_SAMPLES} (raise --rate-requests)",
                    samples=summary["ttft_ms"]["n"],
                    needed=P95_MIN_SAMPLES,
                )
            )
    if result["best"] is None and result["steps"]:
        found.append(
            _rs_finding(
                "RS-NONE-PASSED",
                "warn",
                None,
                "no rate step met the SLO: lower --rate-start or check the endpoint",
                stopped=result["stopped"],
            )
        )
    if result["stopped"] == "max_rate":
        found.append(
            _rs_finding(
                "RS-MAX-RATE",
                "info",
                None,
                "the highest rate tried still met the SLO: the capacity is above --rate-max",
                max_rps=result["search"]["max_rps"],
            )
        )
    return found


def step_calibrate(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.calibrate import measure_floor

    ladder = getattr(args, "calibrate_ladder", None) or args.ladder
    result = measure_floor(
        tuple(ladder),
        requests_per_stream=args.calibrate_requests_per_stream,
        busy_poll=args.busy_poll,
    )
    for level in result["levels"]:
        error = level["ttft_error_ms"].get("mean")
        if error is not None and error > 10:
            evidence.findings.append(
                make_finding(
                    "CAL-FLOOR-HIGH",
                    "warn",
                    f"c{level['concurrency']}",
                    "the client's own TTFT error exceeds 10 ms at this concurrency",
                    step="calibrate",
                    ttft_error_mean_ms=error,
                )
            )
    return result


def step_netprobe(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.netprobe import run_netprobe
    from diligence_harness.streamclient import parse_endpoint

    targets = list(args.net_host)
    if not targets and getattr(args, "endpoint", None):
        endpoint = parse_endpoint(args.endpoint)
        targets = [f"{endpoint.host}:{endpoint.port}"]
    if not targets:
        raise Skip("no --net-host and no --endpoint given")
    probes = run_netprobe(targets, args.net_count)
    for probe in probes:
        if probe["loss"]:
            evidence.findings.append(
                make_finding(
                    "NET-LOSS",
                    "warn",
                    f"{probe['host']}:{probe['port']}",
                    "TCP connects failed",
                    step="netprobe",
                    loss=probe["loss"],
                )
            )
    return {"probes": probes, "summary_method": metrics.PERCENTILE_METHOD}


def step_netpeer(args: argparse.Namespace, evidence: Evidence) -> dict:
    """Between nodes: throughput both ways, RTT, jitter and loss to a peer running
    `net-serve`, and the RDMA devices sysfs lists (docs/metrics.md#between-nodes)."""
    from diligence_harness.netpeer import run_netpeer

    if not getattr(args, "peer", None):
        raise Skip("no --peer given (run `diligence-harness net-serve` on another node)")
    result = run_netpeer(
        args.peer,
        duration_s=args.peer_duration_s,
        streams=args.peer_streams,
        count=args.peer_count,
        sysfs_root=args.sysfs_root,
    )
    subject = f"{result['peer']['host']}:{result['peer']['port']}"
    if result["rtt"]["loss"]:
        evidence.findings.append(
            make_finding(
                "NET-PEER-LOSS",
                "warn",
                subject,
                "round trips to the peer were lost",
                step="netpeer",
                loss=result["rtt"]["loss"],
            )
        )
    for transfer in result["throughput"]:
        failed = [s["error"] for s in transfer["per_stream"] if s["error"]]
        if failed or not transfer["gbit_s"]:
            evidence.findings.append(
                make_finding(
                    "NET-PEER-TRANSFER",
                    "warn",
                    subject,
                    f"the {transfer['direction']} transfer did not complete on every stream",
                    step="netpeer",
                    errors=failed[:4],
                )
            )
    return result


def step_gateway(args: argparse.Namespace, evidence: Evidence) -> dict:
    """Run on the customer's gateway host: RTT, jitter and loss to the vendor's endpoint,
    the hop gateway → remote service of the latency budget (docs/metrics.md#from-the-gateway)."""
    from diligence_harness.netprobe import probe
    from diligence_harness.streamclient import parse_endpoint

    if not getattr(args, "endpoint", None):
        raise Skip("no --endpoint given")
    endpoint = parse_endpoint(args.endpoint)
    measured = probe(endpoint.host, endpoint.port, count=args.net_count)
    if measured["loss"]:
        evidence.findings.append(
            make_finding(
                "NET-GATEWAY-LOSS",
                "warn",
                f"{endpoint.host}:{endpoint.port}",
                "TCP connects from the gateway failed",
                step="gateway",
                loss=measured["loss"],
            )
        )
    return {
        "role": "gateway",
        "endpoint": f"{endpoint.scheme}://{endpoint.host}:{endpoint.port}",
        "probes": [measured],
        "summary_method": metrics.PERCENTILE_METHOD,
    }


def step_authprobe(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.authprobe import run_authprobe

    if not getattr(args, "endpoint", None):
        raise Skip("no --endpoint given")
    result, findings = run_authprobe(
        args.endpoint,
        args.api_key,
        args.rate_limit_rps,
        forbidden_token=getattr(args, "forbidden_token", None),
        model=getattr(args, "model", None),
    )
    evidence.findings += findings
    return result


# --- inside the node and the local disk (docs/metrics.md#inside-the-node) ---------------


def step_node(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.nodeprobe import Unavailable, run_node

    try:
        result = run_node(
            topo_path=getattr(args, "topo", None),
            evidence=evidence,
            copy_bytes=args.node_copy_bytes,
            iterations=args.node_iters,
            allreduce_bytes=args.node_allreduce_bytes,
            matmul_n=args.node_matmul_n,
            matmul_repeats=args.node_matmul_repeats,
            timeout_s=args.node_timeout_s,
        )
    except Unavailable as reason:
        raise Skip(str(reason)) from None
    integrity = result.get("integrity") or {}
    for run in integrity.get("runs") or []:
        if len(set(run["digests"])) > 1:
            evidence.findings.append(
                make_finding(
                    "NODE-MATMUL-REPEATS",
                    "fail",
                    run["device"],
                    "the same matmul gave different results on repeats (silent corruption?)",
                    step="node",
                    distinct=len(set(run["digests"])),
                )
            )
    return result


def step_disk(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.diskprobe import DiskProbeError, run_disk

    try:
        result = run_disk(
            args.disk_path,
            total_bytes=args.disk_bytes,
            block_bytes=args.disk_block_bytes,
            seconds=args.disk_seconds,
            random_ops=args.disk_random_ops,
        )
    except DiskProbeError as reason:
        raise Skip(str(reason)) from None
    if result["mode"] != "direct":
        evidence.findings.append(
            make_finding(
                "DISK-BUFFERED",
                "info",
                result["path"],
                "direct I/O was refused here: buffered I/O with the page cache dropped",
                step="disk",
                reason=result["mode_reason"],
            )
        )
    mismatched = result["phases"][1].get("mismatched_blocks")
    if mismatched:
        evidence.findings.append(
            make_finding(
                "DISK-READBACK",
                "fail",
                result["path"],
                "blocks read back differ from what was written",
                step="disk",
                blocks=mismatched,
            )
        )
    return result


# --- the reference training step (docs/metrics.md#reference-training-step) ----------------


def step_train(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.trainprobe import Unavailable, run_train

    try:
        result = run_train(
            steps=args.train_steps,
            warmup=args.train_warmup,
            cpu_ranks=args.train_ranks,
            size=args.train_size,
            checkpoint_path=args.train_checkpoint_path,
            timeout_s=args.train_timeout_s,
        )
    except Unavailable as reason:
        raise Skip(str(reason)) from None
    checkpoint = result.get("checkpoint") or {}
    if checkpoint and checkpoint["saved_sha256"] != checkpoint["restored_sha256"]:
        evidence.findings.append(
            make_finding(
                "TRAIN-RESTORE",
                "fail",
                checkpoint["path"],
                "the restored checkpoint differs from the state that was saved",
                step="train",
            )
        )
    for phase in ("one_card", "all_cards"):
        for rank in (result.get(phase) or {}).get("ranks") or []:
            if any(loss is None for loss in rank["loss"]):
                evidence.findings.append(
                    make_finding(
                        "TRAIN-LOSS",
                        "fail",
                        rank["device"],
                        "the reference training step's loss was not a finite number",
                        step="train",
                    )
                )
    return result


def step_correctness(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.correctness import run_correctness

    return run_correctness(args, evidence)


def step_soak(args: argparse.Namespace, evidence: Evidence) -> dict:
    from diligence_harness.soak import step_soak as soak

    return soak(args, evidence)


STEPS = {
    "inventory": step_inventory,
    "environment": step_environment,
    "bench": step_bench,
    "node": step_node,
    "disk": step_disk,
    "train": step_train,
    "loadtest": step_loadtest,
    "ratesearch": step_ratesearch,
    "calibrate": step_calibrate,
    "netprobe": step_netprobe,
    "authprobe": step_authprobe,
    "correctness": step_correctness,
    "soak": step_soak,
}
# Between nodes (`--peer`) and from the gateway: their own sections.
STEPS |= {"netpeer": step_netpeer, "gateway": step_gateway}
# Optional sections: `run` includes them only when their option is given.
OPTIONAL_STEPS = {"correctness": "reference", "soak": "soak_duration", "ratesearch": "slo_ttft_ms"}
# Other options that ask for an optional section: a case's sample set runs the correctness,
# a TPOT SLO alone the rate search.
OPTIONAL_STEPS_ALSO = {"correctness": ("sample_set",), "ratesearch": ("slo_tpot_ms",)}
OPTIONAL_STEPS |= {"node": "node", "disk": "disk"}  # inside the node, the local disk
OPTIONAL_STEPS_ALSO |= {"disk": ("disk_path",)}
OPTIONAL_STEPS |= {"train": "train"}  # the reference training step
OPTIONAL_STEPS |= {"netpeer": "peer"}
# Steps `run` never runs: the gateway probe runs on the customer's gateway, not the rented
# machine (`diligence-harness gateway`).
NOT_IN_RUN = ("gateway",)

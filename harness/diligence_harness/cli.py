"""`diligence-harness` command line: one sub-command per step, and `run` for all of them."""

import argparse
import json
import os
import sys

from diligence_harness import __version__, ratesearch
from diligence_harness.loadtest import DEFAULT_LADDER, P95_MIN_SAMPLES


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part.strip())


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


SET_HELP = (
    "a JSONL file, or `case` (the set the case's acceptance requires, else its newest) or "
    "`case:SHA256`, fetched from the case with --token"
)


def _add_sets_url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sets-url", help="where the case's sets are fetched (default: beside --upload)"
    )


def _add_inventory_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nvidia-smi-xml", help="captured `nvidia-smi -q -x` output to use")
    parser.add_argument("--topo", help="captured `nvidia-smi topo -m` output to use")
    parser.add_argument("--lspci", help="captured `lspci -nn -D` output to use")
    parser.add_argument(
        "--alloc-fraction",
        type=float,
        default=0.9,
        help="fraction of reported free memory the allocate-and-touch probe uses",
    )
    parser.add_argument("--no-alloc-probe", action="store_true", help="skip the probe")


def _add_loadtest_args(parser: argparse.ArgumentParser, required: bool) -> None:
    parser.add_argument("--endpoint", required=required, help="OpenAI-compatible base URL")
    parser.add_argument("--model", required=required, help="model name to request")
    parser.add_argument("--api-key", help="bearer token for the endpoint (never recorded)")
    parser.add_argument("--api", type=_names, default=("chat",), help="chat,completions")
    parser.add_argument("--ladder", type=_ints, default=DEFAULT_LADDER, help="e.g. 1,2,4,8")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--prompt-sets", type=_names, default=("short", "medium", "long"))
    parser.add_argument("--prompt-set", help="the case's own prompt set: " + SET_HELP)
    parser.add_argument("--max-tokens", type=int, default=128, help="fixed output length")
    parser.add_argument("--no-ignore-eos", action="store_true")
    parser.add_argument("--no-min-tokens", action="store_true")
    parser.add_argument("--no-continuous-usage", action="store_true")
    parser.add_argument("--requests-per-stream", type=int, default=4)
    parser.add_argument("--min-requests-per-cell", type=int, default=8)
    parser.add_argument(
        "--min-requests-per-level",
        type=int,
        default=P95_MIN_SAMPLES,
        help=f"requests per concurrency level, all rounds and prompt sets together (default "
        f"{P95_MIN_SAMPLES}: the least sample the server states a P95 from; below it the level "
        "is not measured)",
    )
    parser.add_argument("--warmup-requests", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=300.0)
    parser.add_argument("--slo-ttft-ms", type=float)
    parser.add_argument("--slo-tpot-ms", type=float)
    parser.add_argument("--slo-e2e-ms", type=float)
    parser.add_argument("--seed", type=int, default=1234, help="prompt-set seed")
    parser.add_argument(
        "--busy-poll", action="store_true", help="spin instead of sleeping (lower error, one core)"
    )


def _add_ratesearch_args(parser: argparse.ArgumentParser) -> None:
    """The open-loop rate search's options; it runs when an SLO is given (in `run`, with an
    endpoint)."""
    parser.add_argument(
        "--rate-arrival",
        choices=ratesearch.ARRIVALS,
        default="poisson",
        help="open-loop arrivals: poisson (exponential gaps) or constant rate",
    )
    parser.add_argument("--rate-seed", type=int, default=1234, help="arrival schedule seed")
    parser.add_argument(
        "--rate-start", type=float, default=ratesearch.DEFAULT_START_RPS, help="first rate, req/s"
    )
    parser.add_argument(
        "--rate-max", type=float, default=ratesearch.DEFAULT_MAX_RPS, help="highest rate, req/s"
    )
    parser.add_argument("--rate-max-steps", type=int, default=ratesearch.DEFAULT_MAX_STEPS)
    parser.add_argument(
        "--rate-requests",
        type=int,
        default=ratesearch.DEFAULT_REQUESTS_PER_STEP,
        help=f"requests per step (a P95 needs {P95_MIN_SAMPLES} with a first token)",
    )
    parser.add_argument(
        "--rate-resolution",
        type=float,
        default=ratesearch.DEFAULT_RESOLUTION,
        help="stop once the lowest failing rate is within this share of the highest passing",
    )
    parser.add_argument(
        "--rate-max-seconds",
        type=float,
        default=ratesearch.DEFAULT_MAX_SECONDS,
        help="time budget of the whole search",
    )
    parser.add_argument(
        "--rate-max-error-pct",
        type=float,
        default=ratesearch.DEFAULT_MAX_ERROR_RATE * 100,
        help="a step with more errors fails",
    )
    parser.add_argument(
        "--rate-max-in-flight",
        type=int,
        default=ratesearch.DEFAULT_MAX_IN_FLIGHT,
        help="requests open at once (one connection each)",
    )


def _add_bench_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bench-seed", type=int, default=42)
    parser.add_argument("--bench-rounds", type=int, default=3)
    parser.add_argument("--sustained-s", type=float, default=60.0, help="GPU sustained run")
    parser.add_argument("--quick", action="store_true", help="small shapes, short runs")


def _add_probe_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--net-host", action="append", default=[], help="host:port, repeatable")
    parser.add_argument("--net-count", type=int, default=20)
    parser.add_argument("--rate-limit-rps", type=float, help="declared rate limit to probe")


def _add_peer_args(parser: argparse.ArgumentParser, required: bool) -> None:
    """Between nodes (`net-peer`, or `run --peer`): the peer running `net-serve`."""
    from diligence_harness.netpeer import DEFAULT_PORT, MAX_STREAMS, MAX_TRANSFER_S

    parser.add_argument(
        "--peer",
        required=required,
        help=f"host:port of another node running `diligence-harness net-serve` "
        f"(default port {DEFAULT_PORT})" + ("" if required else "; runs the between-nodes step"),
    )
    parser.add_argument(
        "--peer-duration-s",
        type=float,
        default=3.0,
        help=f"seconds per direction of the throughput transfer (at most {MAX_TRANSFER_S:g})",
    )
    parser.add_argument(
        "--peer-streams",
        type=int,
        default=4,
        help=f"parallel TCP connections per direction (at most {MAX_STREAMS})",
    )
    parser.add_argument("--peer-count", type=int, default=20, help="round trips to the peer")
    parser.add_argument(
        "--sysfs-root", default="/sys", help="where sysfs is mounted (RDMA devices are read there)"
    )


def _add_image_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--image-digest",
        help="the container image's digest (sha256:…), where the container cannot see it",
    )


def _add_upload_args(parser: argparse.ArgumentParser) -> None:
    """A single step that uploads its bundle itself (`gateway`, `net-peer`)."""
    parser.add_argument("--upload", help="URL to POST the bundle to (needs --out)")
    parser.add_argument("--token", help="upload token (sent as 'Authorization: Token ...')")
    parser.add_argument("--upload-attempts", type=int, default=5)
    parser.add_argument(
        "--upload-wait-s",
        type=float,
        default=600.0,
        help="where the server verifies in the background (202), how long to wait for its verdict",
    )


def _add_authprobe_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--forbidden-token",
        default=os.environ.get("DILIGENCE_FORBIDDEN_TOKEN") or None,
        help="a token scoped to another model or without the permission, to show the endpoint "
        "answers it 403 (never recorded; default: $DILIGENCE_FORBIDDEN_TOKEN)",
    )


def _add_soak_args(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """The soak's options; inside `run` the duration and interval carry a `soak-` prefix."""
    parser.add_argument(
        f"--{prefix}duration",
        dest="soak_duration",
        default=None if prefix else "30m",
        help="how long to watch, e.g. 30m, 45s, 1h" + (" (runs the soak)" if prefix else ""),
    )
    parser.add_argument(
        f"--{prefix}interval", dest="soak_interval", default="10s", help="health-check interval"
    )
    parser.add_argument("--probe-timeout-s", type=float, default=5.0, help="per probe request")
    parser.add_argument(
        "--probe", dest="soak_probe", type=_names, default=("models", "completion"),
        help="models,completion: GET /v1/models and/or a 1-token chat completion",
    )  # fmt: skip
    parser.add_argument(
        "--metrics-url", help="Prometheus metrics URL (default: <server>/metrics; '' to skip)"
    )
    parser.add_argument("--gpu-interval", default="60s", help="nvidia-smi ECC/presence sampling")
    parser.add_argument("--kernel-log", help="read Xid lines from this file instead of dmesg")
    parser.add_argument(
        "--boot-id-command", help="prints the watched host's boot id (default: this host's)"
    )


def _add_correctness_args(parser: argparse.ArgumentParser, standalone: bool) -> None:
    if standalone:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--reference", help="reference file to compare the answers with")
        which.add_argument(
            "--record-reference", metavar="OUT", help="run the inputs on a baseline, write OUT"
        )
        which.add_argument(
            "--sample-set",
            help="the case's core sample set, with its expected answers: " + SET_HELP,
        )
        parser.add_argument("--token", help="harness token, to fetch the case's set")
        parser.add_argument("--upload", help="the upload URL, beside which sets are fetched")
        _add_sets_url(parser)
    else:
        parser.add_argument("--reference", help="reference file (runs the correctness step)")
        parser.add_argument(
            "--sample-set",
            help="the case's core sample set (runs the correctness step): " + SET_HELP,
        )
    parser.add_argument("--correctness-timeout-s", type=float, default=60.0, help="per input")


def _size(text: str) -> int:
    from diligence_harness.diskprobe import parse_size

    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _add_node_args(parser: argparse.ArgumentParser, standalone: bool) -> None:
    """Inside the node (docs/metrics.md#inside-the-node); in `run`, --node asks for it."""
    from diligence_harness import nodeprobe

    if standalone:
        parser.add_argument("--topo", help="captured `nvidia-smi topo -m` output to use")
    else:
        parser.add_argument(
            "--node", action="store_true", help="measure inside the node (copies, all-reduce)"
        )
    parser.add_argument(
        "--node-copy-bytes", type=_size, default=nodeprobe.COPY_BYTES, help="per copy, e.g. 256MiB"
    )
    parser.add_argument("--node-iters", type=int, default=nodeprobe.ITERATIONS)
    parser.add_argument(
        "--node-allreduce-bytes", type=_size, default=nodeprobe.ALLREDUCE_BYTES, help="buffer"
    )
    parser.add_argument("--node-matmul-n", type=int, default=nodeprobe.MATMUL_N)
    parser.add_argument(
        "--node-matmul-repeats", type=_at_least_one, default=nodeprobe.MATMUL_REPEATS
    )
    parser.add_argument(
        "--node-timeout-s", type=float, default=nodeprobe.TIMEOUT_S, help="all-reduce limit"
    )


def _add_disk_args(parser: argparse.ArgumentParser, standalone: bool) -> None:
    """The local disk (docs/metrics.md#local-disk); in `run`, --disk or --disk-path asks."""
    from diligence_harness import diskprobe

    if not standalone:
        parser.add_argument("--disk", action="store_true", help="measure the local disk")
    parser.add_argument(
        "--disk-path", help="the checkpoint directory to measure (default: a temporary directory)"
    )
    parser.add_argument(
        "--disk-bytes", type=_size, default=diskprobe.DEFAULT_BYTES, help="file size, e.g. 1GiB"
    )
    parser.add_argument("--disk-block-bytes", type=_size, default=diskprobe.DEFAULT_BLOCK)
    parser.add_argument(
        "--disk-seconds", type=float, default=diskprobe.DEFAULT_SECONDS, help="per phase"
    )
    parser.add_argument(
        "--disk-random-ops", type=int, default=diskprobe.DEFAULT_RANDOM_OPS, help="4 KiB reads"
    )


def _add_train_args(parser: argparse.ArgumentParser, standalone: bool) -> None:
    """The reference training step (docs/metrics.md#reference-training-step); in `run`,
    --train asks for it."""
    from diligence_harness import trainprobe

    if not standalone:
        parser.add_argument("--train", action="store_true", help="run the reference training step")
    parser.add_argument(
        "--train-steps", type=_at_least_one, default=trainprobe.STEPS, help="timed steps"
    )
    parser.add_argument("--train-warmup", type=int, default=trainprobe.WARMUP, help="untimed")
    parser.add_argument(
        "--train-ranks",
        type=_at_least_one,
        default=trainprobe.CPU_RANKS,
        help="processes on the CPU (on GPUs: one per card)",
    )
    parser.add_argument(
        "--train-size",
        choices=("auto", *trainprobe.SIZE_NAMES),
        default="auto",
        help="the reference model (auto: from the first card's free memory; tiny on the CPU)",
    )
    parser.add_argument(
        "--train-checkpoint-path",
        help="where the checkpoint is written (default: a temporary directory)",
    )
    parser.add_argument(
        "--train-timeout-s", type=float, default=trainprobe.TIMEOUT_S, help="whole step"
    )


def _add_bundle_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="where to write the bundle JSON")
    parser.add_argument("--case", help="case reference from the Diligence app")
    parser.add_argument("--nonce", help="server-issued nonce binding this run to a request")
    parser.add_argument("--upload", help="URL to POST the bundle to")
    parser.add_argument("--token", help="upload token (sent as 'Authorization: Token ...')")
    parser.add_argument("--upload-attempts", type=int, default=5)
    parser.add_argument(
        "--upload-wait-s",
        type=float,
        default=600.0,
        help="where the server verifies in the background (202), how long to wait for its verdict",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="diligence-harness",
        description="Collect evidence about rented GPU compute into one verifiable bundle.",
    )
    parser.add_argument("--version", action="version", version=f"diligence-harness {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="every step, then write (and upload) one bundle")
    _add_inventory_args(run)
    _add_loadtest_args(run, required=False)
    _add_ratesearch_args(run)
    _add_bench_args(run)
    _add_probe_args(run)
    _add_authprobe_args(run)
    _add_bundle_args(run)
    _add_soak_args(run, prefix="soak-")
    _add_correctness_args(run, standalone=False)
    _add_sets_url(run)
    _add_node_args(run, standalone=False)
    _add_disk_args(run, standalone=False)
    _add_train_args(run, standalone=False)
    _add_peer_args(run, required=False)
    _add_image_args(run)
    run.add_argument("--skip", type=_names, default=(), help="steps to skip, e.g. bench")
    run.add_argument("--calibrate-ladder", type=_ints, help="default: the load-test ladder")
    run.add_argument("--calibrate-requests-per-stream", type=int, default=2)

    for name, helptext, adders in (
        ("inventory", "GPU inventory from NVML/nvidia-smi, runtime and PCI", [_add_inventory_args]),
        (
            "environment",
            "software, image, limits, CPU, RAM, virtualisation",
            [_add_image_args],
        ),
        (
            "bench",
            "matmul TFLOP/s and memory bandwidth (CPU backend without a GPU)",
            [_add_bench_args],
        ),
        (
            "loadtest",
            "load test an OpenAI-compatible endpoint",
            [lambda p: _add_loadtest_args(p, True)],
        ),
        (
            "ratesearch",
            "highest request rate within the SLO, open-loop arrivals",
            [lambda p: _add_loadtest_args(p, True), _add_ratesearch_args],
        ),
        ("netprobe", "TCP-connect RTT, jitter and loss", [_add_probe_args]),
        (
            "node",
            "inside the node: copy and all-reduce bandwidth, matmul repeats, topology",
            [lambda p: _add_node_args(p, True)],
        ),
        (
            "disk",
            "the local disk: sequential write and read, random 4 KiB reads, capacity",
            [lambda p: _add_disk_args(p, True)],
        ),
        (
            "train",
            "a reference training step: samples/s on one card and all, checkpoint save/restore",
            [lambda p: _add_train_args(p, True)],
        ),
    ):
        step = sub.add_parser(name, help=helptext)
        for add in adders:
            add(step)
        step.add_argument("--out", help="write a bundle here (default: print the step as JSON)")
        step.add_argument("--case")
        step.add_argument("--nonce")
        if name in ("loadtest", "ratesearch"):
            step.add_argument("--token", help="harness token, to fetch the case's prompt set")
            _add_sets_url(step)

    for name, helptext, add in (
        ("soak", "watch an endpoint and the GPUs: downtime, restarts, Xid, ECC", _add_soak_args),
        (
            "correctness",
            "the fixed inputs at temperature 0 compared with a reference file",
            lambda p: _add_correctness_args(p, standalone=True),
        ),
    ):
        step = sub.add_parser(name, help=helptext)
        step.add_argument("--endpoint", required=True, help="OpenAI-compatible base URL")
        step.add_argument("--model", required=True, help="model name to request")
        step.add_argument("--api-key", help="bearer token for the endpoint (never recorded)")
        add(step)
        step.add_argument("--out", help="write a bundle here (default: print the step as JSON)")
        step.add_argument("--case")
        step.add_argument("--nonce")

    peer = sub.add_parser(
        "net-peer", help="throughput, RTT, jitter and loss to a node running net-serve; RDMA"
    )
    _add_peer_args(peer, required=True)
    gateway = sub.add_parser(
        "gateway", help="run on your gateway host: RTT, jitter and loss to the vendor's endpoint"
    )
    gateway.add_argument("--endpoint", required=True, help="the vendor's endpoint URL")
    gateway.add_argument("--net-count", type=int, default=130, help="TCP connects (130 give a P95)")
    for step in (peer, gateway):
        step.add_argument("--out", help="write a bundle here (default: print the step as JSON)")
        step.add_argument("--case")
        step.add_argument("--nonce")
        _add_upload_args(step)

    serve = sub.add_parser("net-serve", help="the peer for net-peer: echo, sink and source")
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on")  # noqa: S104
    serve.add_argument("--port", type=int, default=5201)
    serve.add_argument("--max-seconds", type=float, default=600.0, help="stop after this long")

    calibrate = sub.add_parser("calibrate", help="measure the client's floor on a loopback mock")
    calibrate.add_argument("--ladder", type=_ints, default=DEFAULT_LADDER)
    calibrate.add_argument(
        "--requests-per-stream", dest="calibrate_requests_per_stream", type=int, default=3
    )
    calibrate.add_argument("--busy-poll", action="store_true")
    calibrate.add_argument("--out")
    calibrate.add_argument("--case")
    calibrate.add_argument("--nonce")

    auth = sub.add_parser("authprobe", help="does the endpoint refuse missing/wrong tokens?")
    auth.add_argument("--endpoint", required=True)
    auth.add_argument("--api-key", help="a valid key, to show the probe itself is accepted")
    auth.add_argument("--rate-limit-rps", type=float, help="declared rate limit to probe")
    auth.add_argument("--model", help="the model the forbidden token must not reach")
    _add_authprobe_args(auth)
    auth.add_argument("--out")
    auth.add_argument("--case")
    auth.add_argument("--nonce")

    upload = sub.add_parser("upload", help="POST an existing bundle with retries")
    upload.add_argument("bundle")
    upload.add_argument("--upload", required=True)
    upload.add_argument("--token", required=True)
    upload.add_argument("--upload-attempts", type=int, default=5)
    upload.add_argument(
        "--upload-wait-s",
        type=float,
        default=600.0,
        help="where the server verifies in the background (202), how long to wait for its verdict",
    )

    validate = sub.add_parser("validate", help="check a bundle against the published schema")
    validate.add_argument("bundle")

    mock = sub.add_parser("mock-server", help="loopback OpenAI-compatible mock with known timings")
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=8000)
    mock.add_argument("--ttft-ms", type=float, default=50.0)
    mock.add_argument("--itl-ms", type=float, default=10.0)
    mock.add_argument("--tokens-per-chunk", type=int, default=1)
    mock.add_argument("--output-tokens", type=int, default=16, help="when max_tokens is absent")
    mock.add_argument("--empty-first-chunk", action="store_true")
    mock.add_argument("--ping-every", type=int, default=0)
    mock.add_argument("--error-every", type=int, default=0)
    mock.add_argument("--error-kinds", type=_names, default=("http_500", "truncate"))
    mock.add_argument("--api-key")
    mock.add_argument("--rate-limit-rps", type=float)
    mock.add_argument(
        "--slots", type=int, default=0, help="completions served at once; more wait (0: no limit)"
    )
    mock.add_argument("--forbidden-key", help="a known token without the permission: 403")
    mock.add_argument(
        "--unauthenticated-status",
        type=int,
        default=401,
        help="what a missing or wrong token gets (200: the endpoint is open)",
    )
    mock.add_argument(
        "--forbidden-allowed", action="store_true", help="serve the forbidden key anyway"
    )
    mock.add_argument("--max-seconds", type=float, default=3600.0, help="stop after this long")
    mock.add_argument("--busy-poll", action="store_true", help="never sleep in epoll")
    mock.add_argument("--down", action="append", default=[], help="downtime FROM:TO seconds")
    mock.add_argument("--restart-at", type=float, help="simulated restart, seconds after start")
    mock.add_argument("--restart-outage-s", type=float, default=0.5)
    mock.add_argument("--wrong-answer", action="append", default=[], help="correctness item id")
    mock.add_argument("--answers", help="a core sample set: answer each input as expected")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    raw_argv = list(sys.argv if argv is None else ["diligence-harness", *argv])
    from diligence_harness import commands

    handler = getattr(commands, "command_" + args.command.replace("-", "_"))
    return handler(args, raw_argv)


def print_json(document: dict) -> None:
    json.dump(document, sys.stdout, indent=2, sort_keys=True, default=str)
    sys.stdout.write("\n")


def _zipapp_main() -> None:
    """Entry point of the zipapp (zipapp's `main` must not return an exit code)."""
    sys.exit(main())

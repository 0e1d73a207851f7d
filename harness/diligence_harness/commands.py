"""Sub-command handlers: run steps, write (and upload) the bundle, or print a step as JSON."""

import argparse
import hashlib
import json
import sys

from diligence_harness import schema
from diligence_harness.bundle import assemble, serialise, write_bundle
from diligence_harness.cli import print_json
from diligence_harness.clock import utc_now
from diligence_harness.mockserver import MockConfig, serve_forever
from diligence_harness.steps import (
    NOT_IN_RUN,
    OPTIONAL_STEPS,
    OPTIONAL_STEPS_ALSO,
    STEPS,
    Evidence,
    run_step,
)
from diligence_harness.torchprobe import ALLOC_PROBE_SEED
from diligence_harness.upload import upload_bundle, verdict_lines

EXIT_SCHEMA_INVALID = 3
EXIT_UPLOAD_FAILED = 4


def _secrets(args: argparse.Namespace) -> list[str]:
    names = ("token", "api_key", "forbidden_token")
    return [s for s in (getattr(args, name, None) for name in names) if s]


def _seeds(args: argparse.Namespace) -> dict:
    return {
        "workload": getattr(args, "seed", None),
        "bench": getattr(args, "bench_seed", None),
        "ratesearch": getattr(args, "rate_seed", None),
        "alloc_probe": ALLOC_PROBE_SEED,
    }


def _finish(args, argv, steps: dict, evidence: Evidence, started: str) -> int:
    """Assemble, validate, write to disk, then upload if asked; prints a short receipt."""
    workload_sets = _workload_sets(args, steps)
    document = assemble(
        steps=steps,
        findings=evidence.findings,
        artifacts=evidence.artifacts,
        argv=argv,
        seeds=_seeds(args),
        case=getattr(args, "case", None),
        nonce=getattr(args, "nonce", None),
        started_utc=started,
        run_role=getattr(args, "run_role", "machine"),
    )
    if workload_sets:
        document["workload_sets"] = workload_sets
    data = serialise(document, evidence.secrets)
    errors = schema.validate(json.loads(data))
    digest = write_bundle(args.out, data)
    receipt = {
        "bundle": args.out,
        "sha256": digest,
        "bytes": len(data),
        "schema_errors": errors[:20],
    }
    receipt["steps"] = {name: step["status"] for name, step in document["steps"].items()}
    code = EXIT_SCHEMA_INVALID if errors else 0
    if getattr(args, "upload", None):
        result = upload_bundle(
            args.upload,
            data,
            args.token,
            attempts=args.upload_attempts,
            wait_s=getattr(args, "upload_wait_s", 600.0),
        )
        with open(args.out + ".upload.json", "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
        receipt["upload"] = {
            k: result[k] for k in ("outcome", "http_status", "attempts", "upload") if k in result
        }
        if result["outcome"] != "uploaded":
            code = EXIT_UPLOAD_FAILED
    print_json(receipt)
    if getattr(args, "upload", None):
        _say_verdict(result, getattr(args, "upload_wait_s", 600.0))
    return code


def _workload_sets(args: argparse.Namespace, steps: dict) -> dict:
    """The set each run used, by digest: the case's own, a file, or the built-in one."""
    from diligence_harness.workload_sets import SOURCE_BUILT_IN

    found = {}
    ran = [steps.get(name) or {} for name in ("loadtest", "ratesearch")]
    loadtest = next((step for step in ran if step.get("status") == "ok"), {})
    if loadtest.get("status") == "ok":
        given = getattr(args, "prompt_set_file", None)
        if given is not None:
            found["prompt_set"] = given.describe()
        else:
            tiers = loadtest["result"]["workload"]["prompt_sets"]
            joined = json.dumps({t: d["set_sha256"] for t, d in tiers.items()}, sort_keys=True)
            found["prompt_set"] = {
                "source": SOURCE_BUILT_IN,
                "name": f"built-in prompts, seed {args.seed} (for trying the pipeline)",
                "sha256": hashlib.sha256(joined.encode()).hexdigest(),
                "count": sum(d["count"] for d in tiers.values()),
            }
    correctness = steps.get("correctness") or {}
    if correctness.get("status") == "ok":
        given = getattr(args, "sample_set_file", None)
        if given is not None:
            found["sample_set"] = given.describe()
        else:
            found["sample_set"] = {
                "source": SOURCE_BUILT_IN,
                "name": "built-in correctness inputs (for trying the pipeline)",
                "sha256": correctness["result"]["input_set_sha256"],
                "count": len(correctness["result"]["items"]),
            }
    return found


def _resolve_sets(args: argparse.Namespace) -> str | None:
    """Read (or fetch) `--prompt-set` and `--sample-set` before anything is measured."""
    import tempfile

    from diligence_harness.workload_sets import SetFileError, resolve

    needs_fetch = any(
        (getattr(args, name, None) or "").startswith("case")
        for name in ("prompt_set", "sample_set")
    )
    directory = None
    if needs_fetch:
        # Fetched sets can be confidential: they live in a private folder removed at exit.
        args.sets_directory = tempfile.TemporaryDirectory(prefix="diligence-sets-")
        directory = args.sets_directory.name
    try:
        args.prompt_set_file = resolve(
            args, "prompts", getattr(args, "prompt_set", None), directory
        )
        args.sample_set_file = resolve(
            args, "samples", getattr(args, "sample_set", None), directory
        )
    except (SetFileError, OSError) as error:
        return f"workload set: {error}"
    if args.prompt_set_file is not None:
        args.prompt_sets = tuple(args.prompt_set_file.tiers)
    return None


def _say_verdict(result: dict, wait_s: float) -> None:
    """The verdict and the evidence page (or the status URL) for the person at the console."""
    for line in verdict_lines(result, wait_s):
        print(f"[diligence-harness] {line}", file=sys.stderr, flush=True)


def command_run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.upload and not args.token:
        print("--upload needs --token", file=sys.stderr)  # before minutes of measuring
        return 2
    problem = (
        _acceptance_options_problem(args) or _run_ratesearch_problem(args) or _resolve_sets(args)
    )
    if problem:
        print(problem, file=sys.stderr)
        return 2
    started, evidence, steps = utc_now(), Evidence(secrets=_secrets(args)), {}
    for name, step in STEPS.items():
        if name in NOT_IN_RUN:
            continue
        if name in OPTIONAL_STEPS and not any(
            getattr(args, option, None)
            for option in (OPTIONAL_STEPS[name], *OPTIONAL_STEPS_ALSO.get(name, ()))
        ):
            continue  # an optional section, not asked for
        if name in args.skip:
            steps[name] = {**_skipped(f"--skip {name}")}
            continue
        print(f"[diligence-harness] {name} ...", file=sys.stderr, flush=True)
        steps[name] = run_step(step, args, evidence)
        print(f"[diligence-harness] {name}: {steps[name]['status']}", file=sys.stderr, flush=True)
    return _finish(args, argv, steps, evidence, started)


def _acceptance_options_problem(args: argparse.Namespace) -> str | None:
    """Bad soak or correctness options, found before anything is measured."""
    from diligence_harness.correctness import ReferenceError, load_reference
    from diligence_harness.soak import soak_config

    try:
        if getattr(args, "soak_duration", None):
            if not args.endpoint or not args.model:
                return "the soak needs --endpoint and --model"
            soak_config(args)
        if getattr(args, "sample_set", None) and (not args.endpoint or not args.model):
            return "the correctness step needs --endpoint and --model"
        if getattr(args, "reference", None):
            if not args.endpoint or not args.model:
                return "the correctness step needs --endpoint and --model"
            load_reference(args.reference)
    except ReferenceError as error:
        return f"--reference: {error}"
    except ValueError as error:
        return str(error)
    return None


def _skipped(reason: str) -> dict:
    from diligence_harness.bundle import skipped_step

    return skipped_step(reason)


def _single_step(name: str, args: argparse.Namespace, argv: list[str]) -> int:
    started, evidence = utc_now(), Evidence(secrets=_secrets(args))
    _fill_defaults(args)
    step = run_step(STEPS[name], args, evidence)
    if getattr(args, "out", None):
        return _finish(args, argv, {name: step}, evidence, started)
    print_json({"step": name, **step, "findings": evidence.findings})
    return 0 if step["status"] != "error" else 1


def _fill_defaults(args: argparse.Namespace) -> None:
    """Single-step parsers only define their own flags; the step code reads a few shared ones."""
    defaults: dict[str, object] = {
        "endpoint": None,
        "api_key": None,
        "rate_limit_rps": None,
        "net_host": [],
        "busy_poll": False,
        "token": None,
        "upload": None,
        "image_digest": None,
    }
    for name, value in defaults.items():
        if not hasattr(args, name):
            setattr(args, name, value)


def command_inventory(args, argv) -> int:
    return _single_step("inventory", args, argv)


def command_environment(args, argv) -> int:
    return _single_step("environment", args, argv)


def command_bench(args, argv) -> int:
    return _single_step("bench", args, argv)


def command_loadtest(args, argv) -> int:
    problem = _resolve_sets(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    return _single_step("loadtest", args, argv)


def command_ratesearch(args, argv) -> int:
    problem = _ratesearch_options_problem(args) or _resolve_sets(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    return _single_step("ratesearch", args, argv)


def _run_ratesearch_problem(args: argparse.Namespace) -> str | None:
    """In `run`, the rate search runs when an SLO and an endpoint are given: check its options."""
    slo = args.slo_ttft_ms is not None or args.slo_tpot_ms is not None
    if not slo or not args.endpoint or not args.model or "ratesearch" in args.skip:
        return None
    return _ratesearch_options_problem(args)


def _ratesearch_options_problem(args: argparse.Namespace) -> str | None:
    """Bad rate-search options, found before anything is measured."""
    from diligence_harness.steps import Skip, ratesearch_config

    try:
        ratesearch_config(args)
    except Skip as skip:
        return f"the rate search needs an SLO: {skip}"
    except ValueError as error:
        return str(error)
    return None


def command_netprobe(args, argv) -> int:
    return _single_step("netprobe", args, argv)


def command_node(args, argv) -> int:
    return _single_step("node", args, argv)


def command_disk(args, argv) -> int:
    return _single_step("disk", args, argv)


def command_train(args, argv) -> int:
    return _single_step("train", args, argv)


def _upload_problem(args: argparse.Namespace) -> str | None:
    if args.upload and not args.token:
        return "--upload needs --token"
    if args.upload and not args.out:
        return "--upload needs --out (the bundle is written first, then uploaded)"
    return None


def _uploaded_step(name: str, args: argparse.Namespace, argv) -> int:
    problem = _upload_problem(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    return _single_step(name, args, argv)


def command_net_peer(args, argv) -> int:
    return _uploaded_step("netpeer", args, argv)


def command_gateway(args, argv) -> int:
    """The gateway probe: a bundle of its own, marked as run from the gateway."""
    args.run_role = "gateway"
    return _uploaded_step("gateway", args, argv)


def command_net_serve(args, argv) -> int:
    from diligence_harness.netpeer import serve

    serve(args.host, args.port, args.max_seconds)
    return 0


def command_calibrate(args, argv) -> int:
    return _single_step("calibrate", args, argv)


def command_authprobe(args, argv) -> int:
    return _single_step("authprobe", args, argv)


def command_soak(args, argv) -> int:
    problem = _acceptance_options_problem(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    return _single_step("soak", args, argv)


def command_correctness(args, argv) -> int:
    from diligence_harness.correctness import ReferenceError, record_reference

    if args.record_reference:
        try:
            receipt = record_reference(args)
        except ReferenceError as error:
            print(f"--record-reference: {error}", file=sys.stderr)
            return 1
        print_json(receipt)
        return 0
    problem = _acceptance_options_problem(args) or _resolve_sets(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    return _single_step("correctness", args, argv)


def command_upload(args: argparse.Namespace, argv: list[str]) -> int:
    with open(args.bundle, "rb") as handle:
        data = handle.read()
    result = upload_bundle(
        args.upload, data, args.token, attempts=args.upload_attempts, wait_s=args.upload_wait_s
    )
    print_json({k: v for k, v in result.items() if k != "response_body"})
    _say_verdict(result, args.upload_wait_s)
    return 0 if result["outcome"] == "uploaded" else EXIT_UPLOAD_FAILED


def command_validate(args: argparse.Namespace, argv: list[str]) -> int:
    with open(args.bundle, "rb") as handle:
        errors = schema.validate(json.load(handle))
    print_json({"bundle": args.bundle, "valid": not errors, "errors": errors[:50]})
    return 0 if not errors else EXIT_SCHEMA_INVALID


def command_mock_server(args: argparse.Namespace, argv: list[str]) -> int:
    from diligence_harness.mockinject import Injections, parse_window, sample_answers

    try:
        injections = Injections(
            downtime=tuple(parse_window(w) for w in args.down),
            restart_at_s=args.restart_at,
            restart_outage_s=args.restart_outage_s,
            wrong_answers=tuple(args.wrong_answer),
            answers=sample_answers(args.answers) if args.answers else (),
        )
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    config = MockConfig(
        ttft_ms=args.ttft_ms,
        itl_ms=args.itl_ms,
        tokens_per_chunk=args.tokens_per_chunk,
        default_output_tokens=args.output_tokens,
        empty_first_chunk=args.empty_first_chunk,
        ping_every=args.ping_every,
        error_every=args.error_every,
        error_kinds=args.error_kinds,
        api_key=args.api_key,
        rate_limit_rps=args.rate_limit_rps,
        slots=args.slots,
        forbidden_key=args.forbidden_key,
        unauthenticated_status=args.unauthenticated_status,
        forbidden_allowed=args.forbidden_allowed,
        injections=injections,
    )
    serve_forever(config, args.host, args.port, args.max_seconds, busy_poll=args.busy_poll)
    return 0

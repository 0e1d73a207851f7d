"""Reading an uploaded bundle: format, published schema, artifact digests, then the facts.

The schema is the harness's own published file (one source of truth for the
client and the server); everything else here is the server's own reading of
the raw data, never the harness's code.
"""

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from itertools import islice
from pathlib import Path

import jsonschema_rs
from django.conf import settings
from django.utils.dateparse import parse_datetime

from apps.evidence import recompute, recompute_acceptance, recompute_node, recompute_train
from apps.evidence.inventory import SmiLog, read_artifacts
from apps.evidence.rules import Facts
from apps.workloads.selectors import SampleReference, case_sample_reference

FORMAT_VERSIONS = ("diligence-evidence/1",)
SCHEMA_PATH = Path("harness/diligence_harness/schema/evidence-1.schema.json")


# A refusal quotes the offending value so that whoever ran the harness can find it; but
# the token holder chooses that value, and refused uploads are listed on the case's
# evidence page and answered to the harness. Each quoted value is cut to QUOTED_CHARS,
# the field path to FIELD_CHARS and the whole reason to REFUSAL_CHARS.
QUOTED_CHARS = 300
FIELD_CHARS = 300
REFUSAL_CHARS = 1000


def _long_quote(quote: str) -> re.Pattern:
    """A value in ``quote`` marks (backslash escapes inside) longer than QUOTED_CHARS."""
    char = rf"(?:[^{quote}\\]|\\.)"
    return re.compile(rf"{quote}({char}{{{QUOTED_CHARS}}}){char}+{quote}")


# The schema validator quotes values as JSON strings, and the keys it names in '…'.
_LONG_QUOTES = {quote: _long_quote(quote) for quote in "\"'"}


def cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(value) -> str:
    """A value from the bundle as a refusal quotes it: its ``repr``, cut to QUOTED_CHARS."""
    if isinstance(value, str) and len(value) > QUOTED_CHARS:
        value = value[: QUOTED_CHARS + 1]  # the repr of 100 KB is never needed whole
    return cut(repr(value), QUOTED_CHARS)


def shorten_quotes(message: str) -> str:
    """A message from another library with each long quoted value cut to QUOTED_CHARS."""
    if len(message) <= QUOTED_CHARS:
        return message
    for quote, pattern in _LONG_QUOTES.items():

        def shortened(match: re.Match[str], q: str = quote) -> str:
            return f"{q}{match[1]}…{q}"

        message = pattern.sub(shortened, message)
    return message


class BundleRefused(Exception):
    """The upload is refused with this HTTP status and message; nothing is stored.

    Message and field are bounded here, once for every refusal (see REFUSAL_CHARS)."""

    def __init__(self, message: str, *, status: int = 400, field: str | None = None) -> None:
        message = cut(message, REFUSAL_CHARS)
        field = cut(field, FIELD_CHARS) if field is not None else None
        super().__init__(message)
        self.message, self.status, self.field = message, status, field


def schema_path() -> Path:
    return Path(settings.BASE_DIR) / SCHEMA_PATH


@cache
def schema() -> dict:
    return json.loads(schema_path().read_text(encoding="utf-8"))


@cache
def _validator() -> jsonschema_rs.Draft202012Validator:
    # The Rust validator: the pure-Python one took 11 s on a 1 MB bundle (benchmarks/scale.py).
    return jsonschema_rs.Draft202012Validator(schema())


# The harness's bundles nest about ten levels deep; JSON nested far deeper is an attack
# on the parser (Python's recursion limit) rather than evidence.
MAX_DEPTH = 64
# Integers the harness writes are counts, bytes and nanoseconds: 20 digits at most.
MAX_INTEGER_DIGITS = 40
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unique_keys(pairs: list) -> dict:
    seen = set()
    for key, _value in pairs:
        if key in seen:
            raise BundleRefused(
                f"The key {quoted(key)} appears twice in one object; which one counts would depend "
                "on the parser, so a bundle's keys must be unique.",
                field=key,
            )
        seen.add(key)
    return dict(pairs)


def _no_constant(name: str):
    raise BundleRefused(
        f"The bundle holds {name}, which JSON does not allow (the harness writes null)."
    )


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise BundleRefused(f"The number {text[:40]} is too large for a bundle.")
    return number


def _too_many_digits(digits: int) -> BundleRefused:
    return BundleRefused(
        f"An integer in the bundle has {digits} digits; at most {MAX_INTEGER_DIGITS} are read."
    )


_INTEGER_LIMIT = 10**MAX_INTEGER_DIGITS  # the smallest integer with one digit too many
_PYTHON_DIGITS_LIMIT = re.compile(r"integer string conversion: value has (\d+) digits")


def _check_shape(document) -> None:
    """Depth within MAX_DEPTH; integers of at most MAX_INTEGER_DIGITS digits; no NUL or lone
    surrogate, which no database column can hold. Walks the containers only: a 1 MB bundle
    holds half a million numbers, which are checked by type and bound alone."""
    search = _UNSTORABLE.search
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BundleRefused(f"The bundle is nested more than {MAX_DEPTH} levels deep.")
        if type(value) is dict:
            for key in value:
                if search(key):
                    raise _unstorable()
            items = value.values()
        else:
            items = value
        if items and depth >= MAX_DEPTH:
            raise BundleRefused(f"The bundle is nested more than {MAX_DEPTH} levels deep.")
        for item in items:
            kind = type(item)
            if kind is str:
                if search(item):
                    raise _unstorable()
            elif kind is int:
                if not -_INTEGER_LIMIT < item < _INTEGER_LIMIT:
                    raise _too_many_digits(len(str(abs(item))))
            elif kind is dict or kind is list:
                stack.append((item, depth + 1))


def _unstorable() -> BundleRefused:
    return BundleRefused(
        "The bundle holds a NUL character or an unpaired surrogate (\\u0000, "
        "\\ud800-\\udfff), which is not text."
    )


def decode(raw: bytes) -> dict:
    try:
        document = json.loads(
            raw.decode("utf-8"),
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError included
        digits = _PYTHON_DIGITS_LIMIT.search(str(error))
        if digits:  # Python's own bound on reading integers (4,300 digits) came first
            raise _too_many_digits(int(digits[1])) from None
        raise BundleRefused(f"The body is not a UTF-8 JSON document: {error}") from None
    except RecursionError:
        raise BundleRefused(f"The bundle is nested more than {MAX_DEPTH} levels deep.") from None
    if not isinstance(document, dict):
        raise BundleRefused("The bundle must be a JSON object.")
    _check_shape(document)
    return document


def check_format(document: dict) -> None:
    version = document.get("format_version")
    if version not in FORMAT_VERSIONS:
        raise BundleRefused(
            f"Unknown format_version {quoted(version)}; this server reads "
            + ", ".join(FORMAT_VERSIONS)
            + ".",
            field="format_version",
        )


def check_schema(document: dict) -> None:
    validator = _validator()
    if validator.is_valid(document):
        return
    # Name the shallowest of the first errors: the one a person fixes first.
    errors = list(islice(validator.iter_errors(document), 50))
    error = min(errors, key=lambda e: len(e.instance_path))
    path = "/".join(str(part) for part in error.instance_path) or "(top level)"
    raise BundleRefused(
        f"The bundle does not match the published schema at {cut(path, FIELD_CHARS)}: "
        f"{shorten_quotes(error.message)}",
        field=path,
    )


def artifact_bytes(artifact: dict) -> bytes:
    if artifact["encoding"] == "base64":
        try:
            return base64.b64decode(artifact["content"], validate=True)
        except binascii.Error:
            raise BundleRefused(
                f"Artifact {quoted(artifact['name'])} is not valid base64.", field="artifacts"
            ) from None
    return artifact["content"].encode("utf-8")


def check_artifacts(document: dict) -> None:
    """Every artifact's bytes hash to its stated digest, and the manifest lists exactly them."""
    listed = {}
    for index, artifact in enumerate(document["artifacts"]):
        data = artifact_bytes(artifact)
        digest = hashlib.sha256(data).hexdigest()
        if digest != artifact["sha256"] or len(data) != artifact["size"]:
            raise BundleRefused(
                f"Artifact {quoted(artifact['name'])} does not match its digest: the content "
                f"hashes to {digest} ({len(data)} bytes), the bundle states {artifact['sha256']} "
                f"({artifact['size']} bytes).",
                field=f"artifacts/{index}/sha256",
            )
        listed[artifact["name"]] = (digest, len(data))
    manifest = {
        entry["name"]: (entry["sha256"], entry["size"])
        for entry in document["manifest"]["artifacts"]
    }
    if manifest != listed:
        raise BundleRefused(
            "The manifest does not list exactly the artifacts carried, with their digests.",
            field="manifest/artifacts",
        )


def read(raw: bytes) -> dict:
    """All refusals that depend on the body alone, in order; returns the document.

    The digest the harness sent (X-Bundle-Sha256) is checked on receipt, before
    the bytes are stored (``services.upload_receive``)."""
    document = decode(raw)
    check_format(document)
    check_schema(document)
    check_artifacts(document)
    return document


def nvidia_smi_logs(document: dict) -> list[SmiLog] | None:
    """The raw `nvidia-smi -q -x` artifacts as the server reads them; None when there is none."""
    xml = [a for a in document.get("artifacts") or [] if a.get("media_type") == "application/xml"]
    logs = read_artifacts([(a.get("name") or "", artifact_bytes(a)) for a in xml])
    return logs or None


def _raw_gpus(logs: list[SmiLog] | None) -> list[dict] | None:
    readable = [log for log in logs or [] if log.error is None]
    if not readable:
        return None
    return [
        {
            "pci_bus_id": gpu.bus_id,
            "name": gpu.name,
            "pci_device_id": gpu.pci_device_id,
            "memory_total_mib": gpu.memory_total_mib,
        }
        for log in readable
        for gpu in log.gpus
    ]


def raw_xml_gpus(document: dict) -> list[dict] | None:
    """Name, PCI id and memory of each GPU as the raw `nvidia-smi -q -x` artifact states them."""
    return _raw_gpus(nvidia_smi_logs(document))


def _result(document: dict, step: str) -> dict | None:
    entry = (document.get("steps") or {}).get(step) or {}
    return entry.get("result") if entry.get("status") == "ok" else None


@dataclass
class Reading:
    """What the server made of a bundle: rule inputs, a stored summary, disagreements."""

    facts: Facts
    summary: dict
    disagreements: list[dict]


GATEWAY_ROLE = "gateway"


def run_role(document: dict) -> str:
    """Where the run was made: "gateway" for the gateway probe, else the rented machine."""
    return GATEWAY_ROLE if document.get("run_role") == GATEWAY_ROLE else "machine"


def interpret(document: dict, sample_reference: SampleReference | None = None) -> Reading:
    """The server's reading of a bundle. ``sample_reference``: the server's copy of the
    case's core sample set the correctness run used (``correctness_reference``), whose
    expected answers judge the run instead of the copy the bundle carries."""
    if run_role(document) == GATEWAY_ROLE:
        return _interpret_gateway(document)
    inventory = _result(document, "inventory") or {}
    cells, levels, lt_disagreements = recompute.loadtest(_result(document, "loadtest"))
    bench, bench_disagreements = recompute.bench(_result(document, "bench"))
    probes = recompute.netprobe(_result(document, "netprobe"))
    smi_logs = nvidia_smi_logs(document)
    between_nodes, netpeer_disagreements = recompute.netpeer(_result(document, "netpeer"))
    facts = Facts(
        gpus=inventory.get("gpus") or [],
        gpu_count=inventory.get("gpu_count") or {},
        sources=inventory.get("sources") or {},
        driver=inventory.get("driver") or {},
        shims=inventory.get("shims"),
        alloc_probe=inventory.get("alloc_probe") or [],
        raw_xml_gpus=_raw_gpus(smi_logs),
        raw_smi=smi_logs,
        client_findings=document.get("findings") or [],
        environment=_result(document, "environment"),
        bench=bench,
        cells=cells,
        levels=levels,
        netprobe=probes,
        authprobe=_result(document, "authprobe"),
        netpeer=between_nodes,
    )
    summary = {
        "metric_definitions_version": recompute.METRIC_DEFINITIONS_VERSION,
        "client_metric_definitions_version": document.get("metric_definitions_version"),
        "steps": {name: (step or {}).get("status") for name, step in document["steps"].items()},
        "gpus": [_gpu_line(g) for g in facts.gpus],
        "gpu_count": facts.gpu_count,
        "driver": facts.driver,
        "bench": bench,
        "cells": cells,
        "levels": levels,
        "netprobe": probes,
        "client_findings": [
            {k: f.get(k) for k in ("id", "severity", "subject", "message")}
            for f in document.get("findings") or []
        ],
        "artifacts": [
            {k: a[k] for k in ("name", "media_type", "size", "sha256")}
            for a in document["artifacts"]
        ],
    }
    if sets := workload_sets(document):
        summary["workload_sets"] = sets
    if between_nodes is not None:
        summary["netpeer"] = between_nodes
    if (software := software_versions(facts.environment)) is not None:
        summary["software"] = software
    acceptance_disagreements = _acceptance_sections(document, summary, sample_reference)
    rate_disagreements = _ratesearch_section(document, facts, summary)
    acceptance_disagreements += _node_sections(document, facts, summary)
    acceptance_disagreements += _training_section(document, facts, summary)
    disagreements = [
        d.as_dict()
        for d in lt_disagreements
        + bench_disagreements
        + acceptance_disagreements
        + rate_disagreements
    ]
    disagreements += [d.as_dict() for d in netpeer_disagreements]
    return Reading(facts=facts, summary=summary, disagreements=disagreements)


def _interpret_gateway(document: dict) -> Reading:
    """A gateway bundle: only its round trips to the vendor's endpoint are read; it says
    nothing of the rented machine (docs/rules/access.md#latency-budget)."""
    probes = recompute.gateway(_result(document, "gateway"))
    facts = Facts(client_findings=document.get("findings") or [], gateway=probes)
    summary = {
        "metric_definitions_version": recompute.METRIC_DEFINITIONS_VERSION,
        "client_metric_definitions_version": document.get("metric_definitions_version"),
        "run_role": GATEWAY_ROLE,
        "steps": {name: (step or {}).get("status") for name, step in document["steps"].items()},
        "gpus": [],
        "cells": [],
        "gateway": probes,
        "client_findings": [
            {k: f.get(k) for k in ("id", "severity", "subject", "message")}
            for f in document.get("findings") or []
        ],
        "artifacts": [
            {k: a[k] for k in ("name", "media_type", "size", "sha256")}
            for a in document["artifacts"]
        ],
    }
    return Reading(facts=facts, summary=summary, disagreements=[])


SOFTWARE_TEXT = 200  # a version, or a tool's one-line answer; never a log


def software_versions(environment: dict | None) -> dict | None:
    """The software versions the environment step read (python, torch, cuda_runtime, cudnn,
    nccl, cublas), kept so the acceptance plan's expected versions are checked against them
    (docs/rules/acceptance.md#versions-the-plan-expects); None where the step did not run."""
    software = (environment or {}).get("software") if isinstance(environment, dict) else None
    if not isinstance(software, dict):
        return None
    versions = {
        str(name)[:SOFTWARE_TEXT]: str(value)[:SOFTWARE_TEXT]
        for name, value in software.items()
        if isinstance(value, str | int | float) and not isinstance(value, bool)
    }
    # The container image the run saw, where it could tell (harness README: environment).
    container = environment.get("container") if isinstance(environment, dict) else None
    digest = container.get("image_digest") if isinstance(container, dict) else None
    if isinstance(digest, str) and digest:
        versions["image_digest"] = digest[:SOFTWARE_TEXT]
    return versions


def workload_sets(document: dict) -> dict:
    """The set each run used, by digest, as the bundle records it (apps.workloads checks them)."""
    recorded = document.get("workload_sets")
    if not isinstance(recorded, dict):
        return {}
    return {
        key: {name: entry.get(name) for name in ("source", "name", "sha256", "count", "tiers")}
        for key in ("prompt_set", "sample_set")
        if isinstance(entry := recorded.get(key), dict)
    }


def correctness_reference(document: dict, case_id: int) -> SampleReference | None:
    """The server's copy of the case's core sample set the bundle's correctness run used,
    matched by its digest (None: no correctness run, or not one of the case's sets). Reads
    the stored set: call it before any write transaction opens."""
    result = _result(document, "correctness")
    sha = recompute_acceptance.sample_set_used(document)
    if not result or not sha:
        return None
    return case_sample_reference(case_id, sha, recompute_acceptance.correctness_item_ids(result))


def _acceptance_sections(
    document: dict, summary: dict, sample_reference: SampleReference | None
) -> list:
    """The optional soak and correctness sections, recomputed into the stored summary."""
    soak, soak_disagreements = recompute_acceptance.soak(_result(document, "soak"))
    try:
        correctness, correctness_disagreements = recompute_acceptance.correctness(
            document, _result(document, "correctness"), sample_reference
        )
    except recompute_acceptance.ReferenceMissing as error:
        raise BundleRefused(str(error), field="steps/correctness/result/reference") from None
    if soak is not None:
        summary["soak"] = soak
    if correctness is not None:
        summary["correctness"] = correctness
    return soak_disagreements + correctness_disagreements


def _ratesearch_section(document: dict, facts: Facts, summary: dict) -> list:
    """The open-loop rate search, recomputed: every request's timings for the rules, the
    steps without them for the stored summary."""
    rates, disagreements = recompute.ratesearch(_result(document, "ratesearch"))
    facts.ratesearch = rates
    if rates is not None:
        steps = [{k: v for k, v in step.items() if k != "timings"} for step in rates["steps"]]
        summary["ratesearch"] = rates | {"steps": steps}
    return disagreements


def artifact_named(document: dict, name: str) -> bytes | None:
    """The raw bytes of the bundle's artifact called ``name`` (None: there is none)."""
    for artifact in document.get("artifacts") or []:
        if artifact.get("name") == name:
            return artifact_bytes(artifact)
    return None


def _node_sections(document: dict, facts: Facts, summary: dict) -> list:
    """Inside the node and the local disk (docs/metrics.md#inside-the-node), recomputed into
    the facts and the stored summary; the topology from its raw artifact."""
    node_result = _result(document, "node")
    node, node_disagreements = recompute_node.node(node_result)
    disk, disk_disagreements = recompute_node.disk(_result(document, "disk"))
    facts.topology = recompute_node.topology(
        document, node_result, lambda name: artifact_named(document, name)
    )
    facts.node, facts.disk = node, disk
    if facts.topology is not None:
        summary["topology"] = facts.topology
    if node is not None:
        summary["node"] = node
    if disk is not None:
        summary["disk"] = disk
    return node_disagreements + disk_disagreements


def _training_section(document: dict, facts: Facts, summary: dict) -> list:
    """The reference training step (docs/metrics.md#reference-training-step), recomputed
    from each rank's step times, batch sizes and losses and the checkpoint's raw figures."""
    training, disagreements = recompute_train.training(_result(document, "train"))
    facts.training = training
    if training is not None:
        summary["training"] = training
    return disagreements


def _gpu_line(gpu: dict) -> dict:
    nvml, cuda, pci = gpu.get("nvml") or {}, gpu.get("cuda") or {}, gpu.get("pci") or {}
    return {
        "uuid": gpu.get("uuid"),
        "pci_bus_id": gpu.get("pci_bus_id"),
        "name": cuda.get("name") or nvml.get("name"),
        "pci_device_id": pci.get("pci_device_id") or nvml.get("pci_device_id"),
        "memory_total_mib": nvml.get("memory_total_mib") or cuda.get("memory_total_mib"),
    }


def run_times(document: dict):
    times = []
    for key in ("started_utc", "finished_utc"):
        try:
            times.append(parse_datetime(document.get(key) or ""))
        except ValueError:  # well formed but impossible, such as month 13
            raise BundleRefused(
                f"{key} is not a real time: {document[key][:40]!r}.", field=key
            ) from None
    return tuple(times)

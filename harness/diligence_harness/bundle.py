"""The evidence bundle: one JSON document, written to disk before any upload.

Raw tool outputs travel inside the document as artifacts (text, or base64 for
bytes) with their SHA-256, so one POST carries everything and the server can
re-check every digest. The bundle's identity is the SHA-256 of the bytes as
written (and uploaded); nothing inside it can hold its own digest.
Secrets (tokens, API keys) are redacted from the command line and scrubbed
from every string before writing, and the written bytes are checked for them.
"""

import base64
import hashlib
import json
import math
import os
import platform
import re
import socket
import uuid
from importlib import resources

import diligence_harness
from diligence_harness import FORMAT_VERSION, METRIC_DEFINITIONS_VERSION, __version__
from diligence_harness.clock import clock_description, utc_now
from diligence_harness.metrics import METRIC_DEFINITIONS
from diligence_harness.sources import read_text

SECRET_FLAGS = ("--token", "--api-key")
REDACTED = "[REDACTED]"
STEP_NAMES = ("inventory", "environment", "bench", "loadtest", "calibrate", "netprobe", "authprobe")
# Present only when they ran: inside the node, the local disk, between nodes, from the
# gateway after the first three.
OPTIONAL_STEP_NAMES: tuple[str, ...] = (
    "correctness",
    "soak",
    "ratesearch",
    "node",
    "disk",
    "netpeer",
    "gateway",
)
OPTIONAL_STEP_NAMES += ("train",)  # the reference training step
# Where the run was made: the rented machine, or the customer's gateway (`gateway`).
RUN_ROLES = ("machine", "gateway")


# Secrets shorter than this are replaced only where a whole string equals them:
# replacing a short secret inside other text would corrupt unrelated fields.
MIN_SUBSTRING_SECRET = 8


class SecretLeak(RuntimeError):
    """A secret survived redaction; the bundle is not written."""


def redact_argv(argv: list[str]) -> list[str]:
    """Replace the values of secret flags and credentials embedded in URLs."""
    redacted, hide_next = ["diligence-harness"], False  # argv[0] is a local path
    for arg in argv[1:]:
        if hide_next:
            redacted.append(REDACTED)
            hide_next = False
            continue
        flag, eq, _value = arg.partition("=")
        if flag in SECRET_FLAGS:
            redacted.append(f"{flag}={REDACTED}" if eq else flag)
            hide_next = not eq
            continue
        redacted.append(redact_url(arg))
    return redacted


def redact_url(text: str) -> str:
    """user:password@ in URLs and token-like query parameters."""
    text = re.sub(r"(://)[^/@\s]+@", rf"\1{REDACTED}@", text)
    return re.sub(
        r"(?i)([?&](?:token|key|api_key|apikey|access_token)=)[^&\s]+", rf"\1{REDACTED}", text
    )


def scrub(value, secrets: list[str]):
    """Replace every secret in every string of a JSON-like value; NaN/inf become null."""
    if isinstance(value, str):
        for secret in secrets:
            if value == secret:
                return REDACTED
            if len(secret) >= MIN_SUBSTRING_SECRET:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v, secrets) for v in value]
    return value


def make_artifact(name: str, content: str | bytes, media_type: str, secrets: list[str]) -> dict:
    """An artifact with its digest over the raw bytes (after secrets were scrubbed)."""
    if isinstance(content, str):
        text: str = scrub(content, secrets)
        raw, encoding, carried = text.encode("utf-8"), "utf-8", text
    else:
        raw, encoding = content, "base64"
        for secret in secrets:
            if len(secret) >= MIN_SUBSTRING_SECRET:
                raw = raw.replace(secret.encode(), REDACTED.encode())
        carried = base64.b64encode(raw).decode("ascii")
    return {
        "name": name,
        "media_type": media_type,
        "encoding": encoding,
        "size": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "content": carried,
    }


def harness_description() -> dict:
    package_dir = os.path.dirname(os.path.abspath(diligence_harness.__file__))
    if os.path.isfile(os.path.dirname(package_dir)):
        packaging = "zipapp"
    elif "site-packages" in package_dir or "dist-packages" in package_dir:
        packaging = "installed"
    else:
        packaging = "source"
    return {
        "name": "diligence-harness",
        "version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packaging": packaging,
        "source_sha256": source_digest(),
    }


def source_digest() -> str:
    """SHA-256 over the harness's own modules (name and bytes), to pin what ran."""
    digest = hashlib.sha256()
    package = resources.files("diligence_harness")
    for entry in sorted(package.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".py"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    schema_file = package.joinpath("schema").joinpath("evidence-1.schema.json")
    digest.update(b"schema\0" + schema_file.read_bytes())
    return digest.hexdigest()


def host_description() -> tuple[str, dict]:
    """host_id: a digest of the machine id (the raw id is not published), with readable fields."""
    machine_id = (
        read_text("/etc/machine-id") or read_text("/var/lib/dbus/machine-id") or ""
    ).strip()
    hostname = socket.gethostname()
    basis = machine_id or f"hostname:{hostname}"
    host = {
        "hostname": hostname,
        "machine_id_sha256": hashlib.sha256(machine_id.encode()).hexdigest()
        if machine_id
        else None,
        "boot_id": (read_text("/proc/sys/kernel/random/boot_id") or "").strip() or None,
        "host_id_basis": "machine-id" if machine_id else "hostname",
    }
    return "sha256:" + hashlib.sha256(basis.encode()).hexdigest(), host


def skipped_step(reason: str) -> dict:
    return {
        "status": "skipped",
        "reason": reason,
        "started_utc": None,
        "finished_utc": None,
        "duration_s": None,
        "result": None,
    }


def assemble(
    *,
    steps: dict,
    findings: list[dict],
    artifacts: list[dict],
    argv: list[str],
    seeds: dict,
    case: str | None,
    nonce: str | None,
    started_utc: str,
    run_role: str = "machine",
) -> dict:
    host_id, host = host_description()
    return {
        "run_role": run_role,
        "format_version": FORMAT_VERSION,
        "metric_definitions_version": METRIC_DEFINITIONS_VERSION,
        "metric_definitions": METRIC_DEFINITIONS,
        "bundle_id": str(uuid.uuid4()),
        "created_utc": utc_now(),
        "started_utc": started_utc,
        "finished_utc": utc_now(),
        "case": case,
        "nonce": nonce,
        "harness": harness_description(),
        "command_line": redact_argv(argv),
        "seeds": seeds,
        "host_id": host_id,
        "host": host,
        "clock": clock_description(),
        "steps": {name: steps.get(name) or skipped_step("not requested") for name in STEP_NAMES}
        | {name: steps[name] for name in OPTIONAL_STEP_NAMES if steps.get(name)},
        "findings": findings,
        "artifacts": artifacts,
        "manifest": {
            "algorithm": "sha256",
            "artifacts": [
                {"name": a["name"], "sha256": a["sha256"], "size": a["size"]} for a in artifacts
            ],
        },
    }


def serialise(document: dict, secrets: list[str]) -> bytes:
    """Compact, key-sorted JSON; refuses to return bytes that still contain a secret."""
    clean = scrub(document, secrets)
    data = json.dumps(clean, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
    for secret in secrets:
        needle = secret if len(secret) >= MIN_SUBSTRING_SECRET else json.dumps(secret)
        if secret and needle.encode() in data:
            raise SecretLeak("a secret is still present in the bundle")
    return data


def write_bundle(path: str, data: bytes) -> str:
    """Write atomically (temp file + rename); returns the bundle's SHA-256 (its identity)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return hashlib.sha256(data).hexdigest()

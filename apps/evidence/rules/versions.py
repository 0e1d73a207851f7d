"""Versions and environment: driver and CUDA as declared; shm, ulimits, clock sync.

docs/rules/evidence.md#environment-checks: drivers, runtimes, shared memory, file handles, locked
memory and time sync must be declared and checked, not left at defaults —
"runs locally, hangs remotely" most often comes from too little shared memory.
"""

import re

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

# Stored in English and worded for the reader where shown (apps.evidence.wording).
ENVIRONMENT_ITEMS = phrase("environment items to verify on the rented machine before use")
WRITTEN_SPEC_VERSIONS = phrase("the vendor's written spec: driver and runtime versions")
SAME_VERSION = phrase("same version; same major is a warning")
AT_LEAST = phrase("at least")
CUDA_MEASURED = phrase("runtime %(runtime)s, driver supports %(driver)s")
OPEN_FILES = phrase("open files ≥ %(least)s")
LIMITS = phrase("open files %(open_files)s, locked memory %(locked)s")
UNLIMITED = phrase("unlimited")
FEW_FILES = phrase("open files %(open_files)s < %(least)s")
RDMA_EXPECTED = phrase("%(expected)s, locked memory unlimited (RDMA)")
MEMLOCK = phrase("locked memory capped at %(locked)s bytes with RDMA declared")
SYNCHRONISED = phrase("synchronised")
NOT_SYNCHRONISED = phrase("not synchronised")

# Defaults for what a case requires of the environment; settings.EVIDENCE_ENVIRONMENT
# overrides them. 64 MiB is Docker's default /dev/shm, the classic trap.
DEFAULT_ENVIRONMENT = {
    "shm_min_bytes": 1 << 30,
    "open_files_min": 65536,
    "clock_sync_required": True,
}
RDMA_NETWORKS = {"infiniband", "roce"}


def checks(facts: Facts, context: Context) -> list[Check]:
    required = DEFAULT_ENVIRONMENT | (context.environment_requirements or {})
    env = facts.environment
    return [
        check_driver(facts, context),
        check_cuda(facts, context),
        check_shm(env, required),
        check_ulimits(env, required, context),
        check_clock_sync(env, required),
        check_runtime(env, context),
        check_image(env),
    ]


def _parts(version: str) -> list[str]:
    return [p for p in version.replace("-", ".").split(".") if p]


def compare_versions(measured: str | None, declared: str | None) -> str:
    """pass when the measured version is the declared one (or refines it), warn on the same
    major version, fail otherwise."""
    if not declared:
        return NOT_MEASURED
    if not measured:
        return NOT_MEASURED
    m, d = _parts(measured.strip()), _parts(declared.strip())
    if m[: len(d)] == d:
        return PASS
    if m[:1] == d[:1]:
        return WARN
    return FAIL


def check_driver(facts: Facts, context: Context) -> Check:
    declared = context.declared.get("driver_version")
    measured = (facts.driver or {}).get("driver_version")
    check = Check(
        "versions.driver",
        "versions",
        phrase("Driver version as declared"),
        compare_versions(measured, declared),
        measured=measured,
        expected=declared or None,
        tolerance=SAME_VERSION,
        source=WRITTEN_SPEC_VERSIONS,
    )
    if not declared:
        check.detail = phrase("The offer declares no driver version.")
    return check


def check_cuda(facts: Facts, context: Context) -> Check:
    """nvidia-smi's CUDA version is the highest the driver supports; the runtime's is what
    software uses (docs/rules/evidence.md#environment-checks)."""
    declared = context.declared.get("cuda_version")
    driver_cuda = (facts.driver or {}).get("cuda_driver_version")
    if driver_cuda and not re.fullmatch(r"\d+(\.\d+)*", str(driver_cuda)):
        driver_cuda = None  # "Not Found", "N/A": nvidia-smi printed no version, so unknown
    software = (facts.environment or {}).get("software") or {}
    runtime = software.get("cuda_runtime") or software.get("torch_cuda")
    measured = runtime or driver_cuda
    status = compare_versions(measured, declared)
    check = Check(
        "versions.cuda",
        "versions",
        phrase("CUDA version as declared"),
        status,
        measured=CUDA_MEASURED % {"runtime": runtime or "—", "driver": driver_cuda or "—"}
        if runtime or driver_cuda
        else None,
        expected=declared or None,
        tolerance=SAME_VERSION,
        source=WRITTEN_SPEC_VERSIONS
        + "; "
        + phrase("NVIDIA CUDA toolkit and driver release notes"),
    )
    if status == NOT_MEASURED and declared and not measured:
        check.detail = phrase("Neither the runtime nor the driver reported a CUDA version.")
    return check


def check_shm(env: dict | None, required: dict) -> Check:
    check = Check(
        "versions.shm",
        "versions",
        phrase("/dev/shm size"),  # noqa: S108 - a title, not a path this code opens
        NOT_MEASURED,
        expected=f"≥ {required['shm_min_bytes'] / 2**30:.1f} GiB",
        tolerance=AT_LEAST,
        source=ENVIRONMENT_ITEMS,
    )
    total = ((env or {}).get("dev_shm") or {}).get("total_bytes")
    if total is None:
        return check
    check.measured = f"{total / 2**30:.2f} GiB"
    check.status = PASS if total >= required["shm_min_bytes"] else WARN
    return check


def check_ulimits(env: dict | None, required: dict, context: Context) -> Check:
    check = Check(
        "versions.ulimits",
        "versions",
        phrase("ulimits: open files and locked memory"),
        NOT_MEASURED,
        expected=OPEN_FILES % {"least": required["open_files_min"]},
        tolerance=AT_LEAST,
        source=ENVIRONMENT_ITEMS,
    )
    limits = (env or {}).get("ulimits")
    if not limits:
        return check
    open_files = (limits.get("open_files") or {}).get("soft")
    locked = (limits.get("locked_memory_bytes") or {}).get("soft")
    check.measured = LIMITS % {"open_files": open_files, "locked": locked if locked else UNLIMITED}
    problems = []
    if isinstance(open_files, int) and open_files < required["open_files_min"]:
        problems.append(FEW_FILES % {"open_files": open_files, "least": required["open_files_min"]})
    # RDMA registers memory: a capped memlock breaks InfiniBand/RoCE transfers.
    if context.declared.get("inter_node_network") in RDMA_NETWORKS:
        check.expected = RDMA_EXPECTED % {"expected": check.expected}
        # The harness writes RLIM_INFINITY as "unlimited".
        if locked is not None and locked != "unlimited":
            problems.append(MEMLOCK % {"locked": locked})
    check.status = WARN if problems else PASS
    check.detail = "; ".join(problems)
    return check


def check_clock_sync(env: dict | None, required: dict) -> Check:
    check = Check(
        "versions.clock_sync",
        "versions",
        phrase("Clock synchronised (NTP)"),
        NOT_MEASURED,
        expected=SYNCHRONISED if required["clock_sync_required"] else phrase("not required"),
        source=ENVIRONMENT_ITEMS,
    )
    sync = (env or {}).get("clock_sync") or {}
    flags = [
        (sync.get("adjtimex") or {}).get("synchronised"),
        (sync.get("timedatectl") or {}).get("synchronised")
        if isinstance(sync.get("timedatectl"), dict)
        else None,
    ]
    known = [f for f in flags if f is not None]
    if not known:
        return check
    synced = any(known)
    check.measured = SYNCHRONISED if synced else NOT_SYNCHRONISED
    check.status = PASS if synced or not required["clock_sync_required"] else WARN
    return check


# --- runtime versions and the image (docs/rules/evidence.md#runtime-versions) ------------

# "PyTorch 2.5.1" (or "name: version", "name=version"); the version starts with a digit.
_RUNTIME_ITEM = re.compile(r"(?P<name>.*?[^\s:=])\s*[\s:=]\s*[vV]?(?P<version>\d[0-9A-Za-z.+-]*)")
# The environment's software keys, by the names a declared spec gives them.
RUNTIME_NAMES = {
    "pytorch": ("torch",),
    "torch": ("torch",),
    "vllm": ("vllm",),
    "sglang": ("sglang",),
    "nccl": ("nccl",),
    "python": ("python",),
    "cuda": ("cuda_runtime", "torch_cuda"),
    "cudnn": ("cudnn",),
}
RUNTIME_NOT_FOUND = phrase("%(name)s not found where the harness ran")
RUNTIME_NOT_REPORTED = phrase("%(name)s is not a version the harness reports")
RUNTIME_DIFFERS = phrase("%(name)s: declared %(declared)s, measured %(measured)s")


def runtime_items(text: str) -> list[tuple[str, str]]:
    """'PyTorch 2.5.1, vLLM 0.6.4' → [('PyTorch', '2.5.1'), ('vLLM', '0.6.4')]; an item
    without a version is left out."""
    found = []
    for part in re.split(r"[,;]", text or ""):
        match = _RUNTIME_ITEM.fullmatch(" ".join(part.split()))
        if match is not None:
            found.append((match.group("name"), match.group("version")))
    return found


def _dotted_cudnn(value: str) -> str:
    """cuDNN as torch reports it (8902, 90100) in its dotted form (8.9.2, 9.1.0)."""
    if not value.isdigit():
        return value
    number = int(value)
    if number >= 10000:
        return f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    return f"{number // 1000}.{number // 100 % 10}.{number % 100}"


def measured_runtime(name: str, software: dict) -> str | None:
    """The version of a declared runtime the environment step read; None: not found."""
    key = " ".join(name.lower().split())
    for field in RUNTIME_NAMES.get(key, ()):
        value = software.get(field)
        if value not in (None, ""):
            return _dotted_cudnn(str(value)) if key == "cudnn" else str(value)
    return None


def check_runtime(env: dict | None, context: Context) -> Check:
    """The declared framework and serving runtime versions against the ones the
    environment step read: each the same version or a refinement of it passes ("2.5"
    matches "2.5.1" and "2.5.1+cu124"), the same major version warns, anything else fails.
    A runtime not found where the harness ran is listed, never judged (it may run in a
    container the harness was not started in)."""
    declared = context.declared.get("runtime_versions") or ""
    check = Check(
        "versions.runtime",
        "versions",
        phrase("Runtime versions as declared"),
        NOT_MEASURED,
        expected=declared or None,
        tolerance=SAME_VERSION,
        source=WRITTEN_SPEC_VERSIONS,
    )
    software = (env or {}).get("software")
    items = runtime_items(declared)
    if not declared:
        check.detail = phrase("The offer declares no runtime versions.")
    if not isinstance(software, dict):
        return check
    if not items:
        return check
    measured, differs, unmeasured, statuses = [], [], [], []
    for name, version in items:
        if " ".join(name.lower().split()) not in RUNTIME_NAMES:
            unmeasured.append(RUNTIME_NOT_REPORTED % {"name": name})
            continue
        found = measured_runtime(name, software)
        if found is None:
            unmeasured.append(RUNTIME_NOT_FOUND % {"name": name})
            continue
        measured.append(f"{name} {found}")  # a name and its version, no sentence to word
        status = compare_versions(found.split("+", 1)[0], version)
        statuses.append(status)
        if status != PASS:
            differs.append(RUNTIME_DIFFERS % {"name": name, "declared": version, "measured": found})
    check.measured = "; ".join(measured + unmeasured) or None
    check.detail = "; ".join(differs + unmeasured)
    if FAIL in statuses:
        check.status = FAIL
    elif WARN in statuses:
        check.status = WARN
    elif statuses:
        check.status = PASS
    return check


def check_image(env: dict | None) -> Check:
    """The container image the run was in, by digest: recorded, not judged."""
    check = Check(
        "versions.image",
        "versions",
        phrase("Container image"),
        NOT_MEASURED,
        expected=phrase("the image digest, where the run is in a container"),
        source=ENVIRONMENT_ITEMS,
    )
    container = (env or {}).get("container")
    if not isinstance(container, dict):
        return check
    digest = container.get("image_digest")
    if isinstance(digest, str) and digest:
        check.measured = digest[:100]
    elif container.get("in_container"):
        check.detail = phrase(
            "In a container whose image digest the run could not see: pass --image-digest."
        )
    else:
        check.detail = phrase("Not run in a container.")
    return check

"""The pass criteria of the four verification layers, as plain functions on plain data.

docs/rules/acceptance.md: (1) connectivity and environment — health checks pass,
versions as expected, environment self-check green, 30 minutes without a restart; (2)
correctness — a fixed input set against a local baseline, 100 % of the core set passes;
(3) performance — the concurrency ladder against the SLOs, with a stated safe operating
level; (4) stability and recovery — at least three fault injections (network, a node
killed, maintenance), each resuming from the latest checkpoint with no duplicated data.
For inference services the same holds, and (5) the re-run after maintenance is added: a
later run is equal to or better than the pinned baseline within the plan's tolerances.
That layer applies once a baseline is pinned and a run follows it; until then it is "not
applicable" and holds nothing back.

Nothing is ever passed for want of a measurement: an absent one is "not
measured", and a layer with one is "in progress".
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop as _noop
from django.utils.translation import ngettext

from apps.core import formats
from apps.evidence.acceptance import CorrectnessMeasurement, SoakMeasurement
from apps.evidence.recompute import MIN_SAMPLES, P95_MIN_SAMPLES, samples_missing
from apps.evidence.rules import baseline as baseline_rules

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

PASSED, FAILED, NOT_MEASURED, IN_PROGRESS = "passed", "failed", "not_measured", "in_progress"
NOT_APPLICABLE = "not_applicable"

CONNECTIVITY, CORRECTNESS, PERFORMANCE, STABILITY, MAINTENANCE = (
    "connectivity",
    "correctness",
    "performance",
    "stability",
    "maintenance",
)
LAYERS = (CONNECTIVITY, CORRECTNESS, PERFORMANCE, STABILITY, MAINTENANCE)
REQUIRED_FAULT_KINDS = ("network", "node_killed", "maintenance")


@dataclass(frozen=True)
class Criterion:
    key: str
    title: str
    status: str
    measured: str = ""
    required: str = ""
    reason: str = ""

    @property
    def explanation(self) -> str:
        """Why it is not passed, with the measured against the required value."""
        if self.status == PASSED:
            return ""
        if self.measured:
            text = _("%(title)s: measured %(measured)s, required %(required)s") % {
                "title": self.title,
                "measured": self.measured,
                "required": self.required,
            }
        else:
            text = _("%(title)s: not measured") % {"title": self.title}
        return text + (f" — {self.reason}" if self.reason else "")


@dataclass(frozen=True)
class LayerState:
    layer: str
    status: str
    criteria: tuple[Criterion, ...]

    @property
    def reasons(self) -> list[str]:
        wanted = FAILED if self.status == FAILED else NOT_MEASURED
        return [c.explanation for c in self.criteria if c.status == wanted]


@dataclass(frozen=True)
class PlanCriteria:
    soak_minutes: int = 30
    correctness_pass_pct: Decimal = Decimal("100")
    ladder: tuple[int, ...] = (1, 4, 8, 16, 32)
    required_safe_concurrency: int | None = None
    fault_minimum: int = 3
    fault_kinds: tuple[str, ...] = REQUIRED_FAULT_KINDS
    # The versions the plan expects, as (name as written, version) pairs; empty: none stated.
    expected_versions: tuple[tuple[str, str], ...] = ()
    # Why the plan's stored text cannot be read (a plan saved before it was checked).
    expected_versions_error: str = ""
    # The reference training step's thresholds (docs/rules/acceptance.md#training-thresholds);
    # None: not required.
    training_min_samples_per_s_per_card: Decimal | None = None
    training_min_scaling_pct: Decimal | None = None
    checkpoint_max_save_s: Decimal | None = None
    checkpoint_max_restore_s: Decimal | None = None


@dataclass(frozen=True)
class Slo:
    p95_ttft_ms: float
    error_rate_pct: float
    peak_memory_pct: float


@dataclass(frozen=True)
class LadderLevel:
    """One concurrency level of the server-recomputed load test."""

    concurrency: int
    ttft_samples: int
    ttft_p95_ms: float | None
    error_rate: float | None  # a fraction, 0.004 = 0.4 %
    peak_memory_pct: float | None  # highest share of a GPU's memory in the level, %
    # Shown in the report beside the SLO columns, never judged here.
    output_tok_s: float | None = None  # output tokens/s, the mean of the level's rounds
    ttft_p99_ms: float | None = None
    # End-to-end latency (send to last token); None samples: the summary does not hold it
    # (a load test received before the server kept it per level).
    e2e_samples: int | None = None
    e2e_p95_ms: float | None = None
    e2e_p99_ms: float | None = None

    # The least sample for a P99 (docs/metrics.md#percentiles), as the report says it.
    p99_least = MIN_SAMPLES[99]

    @property
    def error_rate_pct(self) -> float | None:
        return None if self.error_rate is None else self.error_rate * 100

    @property
    def ttft_p99_stated(self) -> float | None:
        """The P99 time to first token, where the level has enough requests to state it."""
        return self.ttft_p99_ms if self.ttft_samples >= self.p99_least else None

    @property
    def e2e_p99_stated(self) -> float | None:
        return self.e2e_p99_ms if (self.e2e_samples or 0) >= self.p99_least else None

    @property
    def e2e_p95_stated(self) -> float | None:
        return self.e2e_p95_ms if (self.e2e_samples or 0) >= P95_MIN_SAMPLES else None


@dataclass(frozen=True)
class PerformanceMeasurement:
    bundle_id: int
    bundle_sha256: str
    levels: tuple[LadderLevel, ...]


@dataclass(frozen=True)
class VerificationCheck:
    """One check of the offer's newest spec verification (evidence rules)."""

    key: str
    title: str
    status: str  # pass / warn / fail / not_measured
    measured: str = ""
    expected: str = ""


@dataclass(frozen=True)
class ResultFacts:
    """An engineer's recorded result."""

    layer: str
    outcome: str  # passed / failed
    activity: str
    fault_kind: str = ""
    resumed_from_checkpoint: bool | None = None
    duplicated_data: bool | None = None


@dataclass(frozen=True)
class RerunMeasurement:
    """The pinned baseline of the offer and the newest run after it, compared."""

    baseline_bundle_id: int
    baseline_sha256: str
    bundle_id: int | None = None  # None: no run since the baseline
    bundle_sha256: str = ""
    comparison: baseline_rules.Comparison | None = None


@dataclass(frozen=True)
class MeasuredVersions:
    """The software versions the harness measured, from the bundles the offer's newest
    verification was composed from: the driver from its inventory, the rest from its
    environment (``environment.software``)."""

    inventory: bool = False  # an inventory was measured
    driver: str | None = None
    # The environment's software versions; None: no environment measured with them.
    software: dict | None = None


@dataclass(frozen=True)
class TrainingMeasurement:
    """The reference training step of the offer's newest verification, as the server
    recomputed it from the raw step times and checkpoint figures."""

    bundle_id: int
    bundle_sha256: str
    backend: str  # cuda / cpu
    one_card_samples_per_s: float | None
    cards: int | None = None  # of the run over every card; None: one card only
    per_card_samples_per_s: float | None = None  # over every card
    scaling_efficiency: float | None = None  # a fraction, 0.93 = 93 %
    # Every step's loss finite and the cards ending with the same parameters.
    sound: bool = True
    checkpoint_bytes: int | None = None
    checkpoint_save_s: float | None = None
    checkpoint_restore_s: float | None = None
    restored_matches: bool | None = None


@dataclass(frozen=True)
class AcceptanceInputs:
    criteria: PlanCriteria
    slo: Slo
    soak: SoakMeasurement | None = None
    correctness: CorrectnessMeasurement | None = None
    performance: PerformanceMeasurement | None = None
    verification_checks: tuple[VerificationCheck, ...] = ()
    results: tuple[ResultFacts, ...] = field(default_factory=tuple)
    rerun: RerunMeasurement | None = None  # None: no baseline pinned
    versions: MeasuredVersions | None = None  # None: no verification yet
    training: TrainingMeasurement | None = None  # None: no training step measured


# --- layer one: connectivity and environment ---------------------------------


def longest_clean_window_s(soak: SoakMeasurement) -> float:
    """The longest stretch of the soak with neither a restart nor an outage, seconds."""
    breaks = [(at, at) for at in soak.restarts_at_s] + [tuple(o) for o in soak.outages]
    start, longest = 0.0, 0.0
    for begin, end in sorted(breaks):
        longest = max(longest, min(begin, soak.duration_s) - start)
        start = max(start, end)
    return max(longest, soak.duration_s - start)


def soak_events(soak: SoakMeasurement) -> list[str]:
    """Every restart (endpoint, host or a GPU that vanished) and outage, in time order."""
    events = [(at, _("restart at %(at)s min") % {"at": _minutes(at)}) for at in soak.restarts_at_s]
    events += [
        (
            begin,
            _("outage %(begin)s–%(end)s min") % {"begin": _minutes(begin), "end": _minutes(end)},
        )
        for begin, end in soak.outages
    ]
    return [text for _at, text in sorted(events)]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def soak_criterion(soak: SoakMeasurement | None, minutes: int) -> Criterion:
    """Continuous means continuous: one restart, outage or vanished GPU anywhere in the
    soak fails it, however long the clean stretches around it (docs/rules/acceptance.md)."""
    title = _("Restart-free soak")
    required = _("≥ %(minutes)s min with no restart, outage or vanished GPU anywhere") % {
        "minutes": minutes
    }
    if soak is None:
        return Criterion(
            "soak", title, NOT_MEASURED, required=required, reason=_("no soak run yet")
        )
    events = soak_events(soak)
    measured = _(
        "%(longest)s min longest clean stretch of a %(window)s min window "
        "(%(restarts)s restarts, %(outages)s outages)"
    ) % {
        "longest": _minutes(longest_clean_window_s(soak)),
        "window": _minutes(soak.duration_s),
        "restarts": len(soak.restarts_at_s),
        "outages": len(soak.outages),
    }
    if events:
        measured += _("; events: %(events)s") % {"events": "; ".join(events)}
    status = PASSED if not events and soak.duration_s / 60 >= minutes else FAILED
    return Criterion("soak", title, status, measured, required)


def health_criterion(soak: SoakMeasurement | None) -> Criterion:
    title, required = _("Health checks"), _("every health check passes")
    if soak is None or soak.health_checks_total == 0:
        return Criterion("health", title, NOT_MEASURED, required=required)
    measured = _("%(ok)s of %(total)s passed") % {
        "ok": soak.health_checks_ok,
        "total": soak.health_checks_total,
    }
    ok = soak.health_checks_ok == soak.health_checks_total
    return Criterion("health", title, PASSED if ok else FAILED, measured, required)


def gpu_errors_criterion(soak: SoakMeasurement | None) -> Criterion:
    title = _("GPU errors during the soak")
    required = _("no Xid event, no uncorrected ECC error")
    if soak is None:
        return Criterion("gpu_errors", title, NOT_MEASURED, required=required)
    xid = (
        _("%(count)s Xid events") % {"count": len(soak.xid_events)}
        if soak.xid_measured
        else _("Xid not measured")
    )
    ecc = (
        _("%(count)s uncorrected ECC") % {"count": soak.ecc_uncorrected}
        if soak.ecc_uncorrected is not None
        else _("ECC not measured")
    )
    measured = _("%(xid)s, %(ecc)s") % {"xid": xid, "ecc": ecc}
    if soak.xid_events or (soak.ecc_uncorrected or 0) > 0:
        return Criterion("gpu_errors", title, FAILED, measured, required)
    if not soak.xid_measured or soak.ecc_uncorrected is None:
        # An unreadable kernel log or GPU counter is no proof of a clean run.
        if not soak.xid_measured and soak.ecc_uncorrected is None:
            reason = _("the soak could not read the kernel log (Xid) and the GPUs' ECC counters")
        elif not soak.xid_measured:
            reason = _("the soak could not read the kernel log (Xid)")
        else:
            reason = _("the soak could not read the GPUs' ECC counters")
        return Criterion("gpu_errors", title, NOT_MEASURED, measured, required, reason=reason)
    return Criterion("gpu_errors", title, PASSED, measured, required)


def checks_criterion(
    key: str, title: str, required: str, checks: Sequence[VerificationCheck]
) -> Criterion:
    """Green means every check passed; a warning is not green (docs/rules/acceptance.md)."""
    if not checks or any(c.status == "not_measured" for c in checks):
        missing = [c.title for c in checks if c.status == "not_measured"]
        reason = (
            _("not measured: %(checks)s") % {"checks": ", ".join(missing)}
            if missing
            else _("no verification yet")
        )
        return Criterion(key, title, NOT_MEASURED, required=required, reason=reason)
    bad = [c for c in checks if c.status != "pass"]
    measured = (
        "; ".join(f"{c.title}: {c.measured or _status_words(c.status)}" for c in bad)
        if bad
        else _("%(count)s checks green") % {"count": len(checks)}
    )
    return Criterion(key, title, FAILED if bad else PASSED, measured, required)


# A verification check's status in words, for a check that measured no value.
_CHECK_STATUS_WORDS = {
    "pass": _noop("pass"),
    "warn": _noop("warn"),
    "fail": _noop("fail"),
    "not_measured": _noop("not measured"),
}


def _status_words(status: str) -> str:
    return _(_CHECK_STATUS_WORDS[status]) if status in _CHECK_STATUS_WORDS else status


VERSION_KEYS = ("versions.driver", "versions.cuda")
ENVIRONMENT_KEYS = ("versions.shm", "versions.ulimits", "versions.clock_sync")


# --- the versions the plan expects (docs/rules/acceptance.md#versions-the-plan-expects) ---

# "name version" (or "name: version", "name=version"); the version starts with a digit.
_VERSION_ITEM = re.compile(r"(?P<name>.*?[^\s:=])\s*[\s:=]\s*[vV]?(?P<version>\d[0-9A-Za-z.+-]*)")
_NAME_SPACE = re.compile(r"[\s_-]+")
# What the harness measures, by the names a plan may give it (case-insensitive).
MEASURED_NAMES = {
    "driver": "driver",
    "nvidia driver": "driver",
    "gpu driver": "driver",
    "cuda": "cuda",
    "cuda runtime": "cuda",
    "cuda toolkit": "cuda",
    "python": "python",
    "torch": "torch",
    "pytorch": "torch",
    "cudnn": "cudnn",
    "nccl": "nccl",
    "cublas": "cublas",
}
# Serving runtimes, read from their installed distributions (harness README: environment).
MEASURED_NAMES |= {"vllm": "vllm", "sglang": "sglang"}
# The environment's software keys, per measured name (the driver comes from the inventory).
_SOFTWARE_KEYS = {
    "cuda": ("cuda_runtime", "torch_cuda"),
    "python": ("python",),
    "torch": ("torch",),
    "cudnn": ("cudnn",),
    "nccl": ("nccl",),
    "cublas": ("cublas",),
}
_SOFTWARE_KEYS |= {"vllm": ("vllm",), "sglang": ("sglang",)}
_SERVING_RUNTIMES = {"vllm", "sglang"}
# Read through PyTorch on the machine: absent when the harness found none.
_THROUGH_TORCH = {"cuda", "torch", "cudnn", "nccl", "cublas"}


def _name_key(name: str) -> str:
    return _NAME_SPACE.sub(" ", name.strip().lower())


def parse_versions(text: str) -> tuple[tuple[str, str], ...]:
    """'driver 550.127.05, CUDA 12.4; vLLM 0.6.4' → (('driver', '550.127.05'), ...);
    raises ValueError naming the item that is not a name and a version."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for part in re.split(r"[,;]", text or ""):
        item = " ".join(part.split())
        if not item:
            continue
        match = _VERSION_ITEM.fullmatch(item)
        if match is None or not re.search(r"[^\W\d_]", match.group("name")):
            raise ValueError(
                _("“%(item)s” is not a name and a version, e.g. “CUDA 12.4”") % {"item": item}
            )
        name, version = match.group("name"), match.group("version")
        if re.search(r"\d\.\d", name):
            raise ValueError(
                _("“%(item)s” holds more than one version: separate them with commas")
                % {"item": item}
            )
        if _name_key(name) in seen:
            raise ValueError(_("%(name)s is named twice") % {"name": name})
        seen.add(_name_key(name))
        found.append((name, version))
    return tuple(found)


def _cudnn(value) -> str:
    """cuDNN as torch reports it, a number (8902, 90100), in its dotted form (8.9.2, 9.1.0)."""
    text = str(value)
    if not text.isdigit():
        return text
    number = int(text)
    if number >= 10000:  # 9.x and later: major·10000 + minor·100 + patch
        return f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    return f"{number // 1000}.{number // 100 % 10}.{number % 100}"  # 8.x: major·1000 + …


def version_matches(stated: str, measured: str) -> bool:
    """Equal, or the measured version refines the stated one at a dot ("12.4" matches
    "12.4.1", never "12.40"); a local label after "+" ("2.5.1+cu124") refines it too."""
    stated, measured = stated.strip().lower(), measured.strip().lower()
    return measured == stated or measured.startswith((stated + ".", stated + "+"))


@dataclass(frozen=True)
class VersionItem:
    name: str  # as the plan writes it
    stated: str
    status: str  # passed / failed / not measured
    measured: str = ""
    reason: str = ""


def _measured_version(key: str, versions: MeasuredVersions) -> tuple[str, str]:
    """(the measured version, "") or ("", why it is not measured)."""
    if key == "driver":
        if not versions.inventory:
            return "", _("no inventory measured yet")
        return (str(versions.driver), "") if versions.driver else ("", _("not read"))
    software = versions.software
    if software is None:
        return "", _("no environment with software versions measured yet")
    for name in _SOFTWARE_KEYS[key]:
        value = software.get(name)
        if value not in (None, ""):
            return (_cudnn(value) if key == "cudnn" else str(value)), ""
    if key in _THROUGH_TORCH and not software.get("torch"):
        return "", _("read through PyTorch, which the harness did not find on the machine")
    if key in _SERVING_RUNTIMES:
        return "", _("not installed where the harness ran (run it where the runtime is)")
    return "", _("not read")


def version_item(name: str, stated: str, versions: MeasuredVersions | None) -> VersionItem:
    key = MEASURED_NAMES.get(_name_key(name))
    if key is None:
        reason = _("the harness does not report the %(name)s version") % {"name": name}
        return VersionItem(name, stated, NOT_MEASURED, reason=reason)
    if versions is None:
        return VersionItem(name, stated, NOT_MEASURED, reason=_("no verification yet"))
    measured, why = _measured_version(key, versions)
    if not measured:
        return VersionItem(name, stated, NOT_MEASURED, reason=why)
    status = PASSED if version_matches(stated, measured) else FAILED
    return VersionItem(name, stated, status, measured)


def plan_versions_criterion(
    expected: tuple[tuple[str, str], ...], versions: MeasuredVersions | None, error: str = ""
) -> Criterion | None:
    """Each version the plan expects against the one measured: a name the harness does not
    measure is "not measured", never a pass; None where the plan states none."""
    title = _("Versions the plan expects")
    if error:
        return Criterion(
            "plan_versions",
            title,
            NOT_MEASURED,
            required=_("as the plan states them"),
            reason=_("the plan's expected versions cannot be read: %(error)s") % {"error": error},
        )
    if not expected:
        return None
    items = [version_item(name, stated, versions) for name, stated in expected]
    required = _(
        "%(versions)s (each the measured version or its start at a dot: 12.4 matches 12.4.1)"
    )
    required %= {"versions": ", ".join(f"{name} {stated}" for name, stated in expected)}
    measured = "; ".join(
        f"{i.name} {i.measured}" if i.measured else _("%(name)s not measured") % {"name": i.name}
        for i in items
    )
    if not any(i.measured for i in items):
        measured = ""
    failed = [
        _("%(name)s: stated %(stated)s, measured %(measured)s")
        % {"name": i.name, "stated": i.stated, "measured": i.measured}
        for i in items
        if i.status == FAILED
    ]
    unmeasured = [f"{i.name}: {i.reason}" for i in items if i.status == NOT_MEASURED]
    reason = "; ".join(failed + unmeasured)
    if failed:
        status = FAILED
    elif unmeasured:
        status = NOT_MEASURED
    else:
        status = PASSED
    return Criterion("plan_versions", title, status, measured, required, reason)


def connectivity_layer(inputs: AcceptanceInputs) -> LayerState:
    checks = inputs.verification_checks
    plan = inputs.criteria
    plan_versions = plan_versions_criterion(
        plan.expected_versions, inputs.versions, plan.expected_versions_error
    )
    criteria = [
        health_criterion(inputs.soak),
        checks_criterion(
            "versions",
            _("Versions as expected"),
            _("driver and CUDA as declared"),
            [c for c in checks if c.key in VERSION_KEYS],
        ),
        *([plan_versions] if plan_versions is not None else []),
        checks_criterion(
            "environment",
            _("Environment self-check"),
            _("every check green"),
            [c for c in checks if c.key in ENVIRONMENT_KEYS],
        ),
        soak_criterion(inputs.soak, inputs.criteria.soak_minutes),
        gpu_errors_criterion(inputs.soak),
    ]
    return layer_state(CONNECTIVITY, criteria + manual_criteria(CONNECTIVITY, inputs.results))


# --- layer two: correctness ---------------------------------------------------


def correctness_criterion(
    measurement: CorrectnessMeasurement | None, required_pct: Decimal
) -> Criterion:
    title = _("Core set against the reference")
    required = _("≥ %(pct)s %% of the core set") % {"pct": f"{required_pct:g}"}
    if measurement is None:
        return Criterion(
            "core_set", title, NOT_MEASURED, required=required, reason=_("no correctness run yet")
        )
    if not measurement.verified:
        # The expected answers came only inside the bundle: whoever ran it wrote them too
        # (docs/rules/evidence.md#expected-answers).
        return Criterion(
            "core_set",
            title,
            NOT_MEASURED,
            required=required,
            reason=_(
                "not verified: the expected answers (%(reference)s) came only inside the "
                "bundle, so the run could not be judged; the server judges a run against the "
                "case's own core sample set, matched by its digest, or against a reference "
                "file a tech lead pinned with a baseline run"
            )
            % {"reference": measurement.reference_name or measurement.reference_sha256[:12]},
        )
    core = [item for item in measurement.items if item.core]
    if not core:
        return Criterion(
            "core_set",
            title,
            NOT_MEASURED,
            required=required,
            reason=_("the run has no core items"),
        )
    passed = sum(1 for item in core if item.passed)
    pct = Decimal(passed * 100) / Decimal(len(core))
    failing = [f"{i.item_id} ({i.reason or _('mismatch')})" for i in core if not i.passed]
    measured = _("%(passed)s of %(total)s (%(pct)s %%) against %(reference)s") % {
        "passed": passed,
        "total": len(core),
        "pct": formats.number(pct, 2),
        "reference": measurement.reference_name,
    }
    reason = _("mismatches: %(items)s") % {"items": ", ".join(failing[:10])} if failing else ""
    status = PASSED if pct >= required_pct else FAILED
    return Criterion("core_set", title, status, measured, required, reason)


def correctness_layer(inputs: AcceptanceInputs) -> LayerState:
    criteria = [correctness_criterion(inputs.correctness, inputs.criteria.correctness_pass_pct)]
    return layer_state(CORRECTNESS, criteria + manual_criteria(CORRECTNESS, inputs.results))


# --- layer three: performance baseline ----------------------------------------


def level_holds(level: LadderLevel, slo: Slo) -> bool | None:
    """None when P95 cannot be stated (too few samples); else whether every measured SLO holds."""
    if level.ttft_p95_ms is None or level.ttft_samples < P95_MIN_SAMPLES:
        return None
    if level.ttft_p95_ms >= slo.p95_ttft_ms:
        return False
    if (level.error_rate or 0) * 100 >= slo.error_rate_pct:
        return False
    return level.peak_memory_pct is None or level.peak_memory_pct < slo.peak_memory_pct


def safe_operating_level(levels: Iterable[LadderLevel], slo: Slo) -> int | None:
    """The highest concurrency at which every SLO holds, below the first level that breaks one.

    A level above the knee that happens to hold is not safe: the service
    already failed at a lower load (docs/rules/acceptance.md: the knee of the curve).
    """
    safe = None
    for level in sorted(levels, key=lambda lvl: lvl.concurrency):
        holds = level_holds(level, slo)
        if holds is None:
            continue
        if not holds:
            break
        safe = level.concurrency
    return safe


def level_shortfall(concurrency: int, level: LadderLevel | None) -> str:
    """Empty when the level has a P95; else what it lacks, with how many more requests to send."""
    if level is None:
        return _("%(level)s (not run; a P95 needs at least %(least)s requests)") % {
            "level": concurrency,
            "least": P95_MIN_SAMPLES,
        }
    if level.ttft_samples < P95_MIN_SAMPLES:
        return f"{concurrency} ({_samples_shortfall(level.ttft_samples)})"
    if level.ttft_p95_ms is None:
        return _("%(level)s (no time to first token recorded)") % {"level": concurrency}
    return ""


def _samples_shortfall(n: int) -> str:
    """How many requests a level has, the least a P95 needs and how many more to send."""
    return ngettext(
        "%(n)s request; a P95 needs at least %(least)s: send %(more)s more",
        "%(n)s requests; a P95 needs at least %(least)s: send %(more)s more",
        n,
    ) % {"n": n, "least": MIN_SAMPLES[95], "more": samples_missing(n, 95)}


def ladder_criterion(
    measurement: PerformanceMeasurement | None, ladder: tuple[int, ...]
) -> Criterion:
    title = _("Concurrency ladder measured")
    required = _("every level of %(ladder)s with n ≥ %(least)s") % {
        "ladder": "/".join(map(str, ladder)),
        "least": P95_MIN_SAMPLES,
    }
    if measurement is None or not measurement.levels:
        return Criterion("ladder", title, NOT_MEASURED, required=required, reason=_("no load test"))
    by_level = {lvl.concurrency: lvl for lvl in measurement.levels}
    missing = [level_shortfall(c, by_level.get(c)) for c in ladder]
    missing = [text for text in missing if text]
    if missing:
        return Criterion(
            "ladder",
            title,
            NOT_MEASURED,
            required=required,
            reason=_("levels not measured with enough samples: %(levels)s")
            % {"levels": ", ".join(missing)},
        )
    measured = "/".join(str(c) for c in sorted(by_level))
    return Criterion("ladder", title, PASSED, measured, required)


def safe_level_criterion(
    measurement: PerformanceMeasurement | None, slo: Slo, required_level: int | None
) -> Criterion:
    title = _("Safe operating level")
    required = (
        _("every SLO holds up to concurrency ≥ %(level)s") % {"level": required_level}
        if required_level
        else _("every SLO holds at one level at least")
    )
    required += " " + _(
        "(P95 TTFT < %(ttft)s ms, errors < %(errors)s %%, memory < %(memory)s %%)"
    ) % {
        "ttft": f"{slo.p95_ttft_ms:g}",
        "errors": f"{slo.error_rate_pct:g}",
        "memory": f"{slo.peak_memory_pct:g}",
    }
    graded = [] if measurement is None else [lvl for lvl in measurement.levels]
    if not any(level_holds(lvl, slo) is not None for lvl in graded):
        return Criterion("safe_level", title, NOT_MEASURED, required=required)
    safe = safe_operating_level(graded, slo)
    if safe is None:
        return Criterion(
            "safe_level", title, FAILED, _("none"), required, _("no level holds the SLOs")
        )
    ok = required_level is None or safe >= required_level
    measured = _("concurrency %(level)s") % {"level": safe}
    return Criterion("safe_level", title, PASSED if ok else FAILED, measured, required)


def memory_criterion(measurement: PerformanceMeasurement | None, slo: Slo) -> Criterion:
    title, required = _("Peak device memory under load"), f"< {slo.peak_memory_pct:g} %"
    shares = (
        []
        if measurement is None
        else [lvl.peak_memory_pct for lvl in measurement.levels if lvl.peak_memory_pct is not None]
    )
    if not shares:
        return Criterion(
            "peak_memory", title, NOT_MEASURED, required=required, reason=_("no GPU memory samples")
        )
    peak = max(shares)
    status = PASSED if peak < slo.peak_memory_pct else FAILED
    return Criterion("peak_memory", title, status, formats.percent(peak, 1, ratio=False), required)


# --- the reference training step (docs/rules/acceptance.md#training-thresholds) ---


def _training_unmeasured(training: TrainingMeasurement | None) -> str:
    """Why the training step says nothing of the cards ("" where it does)."""
    if training is None:
        return _("no reference training step run yet")
    if training.backend != "cuda":
        return _("the training step ran on the CPU, not on the cards")
    return ""


def training_throughput_criterion(
    training: TrainingMeasurement | None, minimum: Decimal | None
) -> Criterion | None:
    """Samples/s per card over every card (one card's where the run saw one); None where
    the plan requires none."""
    if minimum is None:
        return None
    key, title = "training_throughput", _("Training samples/s per card")
    required = _("≥ %(minimum)s samples/s per card over every card") % {
        "minimum": formats.number(minimum, -2)
    }
    unmeasured = _training_unmeasured(training)
    if training is None or unmeasured:
        return Criterion(key, title, NOT_MEASURED, required=required, reason=unmeasured)
    rate: float | None
    if training.cards is not None and training.per_card_samples_per_s is not None:
        rate, cards = training.per_card_samples_per_s, training.cards
    else:
        rate, cards = training.one_card_samples_per_s, 1
    if rate is None:
        return Criterion(key, title, NOT_MEASURED, required=required, reason=_("no step timed"))
    measured = ngettext(
        "%(rate)s samples/s per card on %(cards)s card",
        "%(rate)s samples/s per card over %(cards)s cards",
        cards,
    ) % {"rate": formats.number(rate, 1), "cards": cards}
    if not training.sound:
        reason = _("a loss was not a number, or the cards ended with different parameters")
        return Criterion(key, title, FAILED, measured, required, reason)
    status = PASSED if rate >= float(minimum) else FAILED
    return Criterion(key, title, status, measured, required)


def training_scaling_criterion(
    training: TrainingMeasurement | None, minimum_pct: Decimal | None
) -> Criterion | None:
    if minimum_pct is None:
        return None
    key, title = "training_scaling", _("Training scaling from one card to all")
    required = _("≥ %(minimum)s of the one-card rate on every card") % {
        "minimum": formats.percent(minimum_pct, -2, ratio=False)
    }
    unmeasured = _training_unmeasured(training)
    if training is None or unmeasured:
        return Criterion(key, title, NOT_MEASURED, required=required, reason=unmeasured)
    if training.cards is None or training.scaling_efficiency is None:
        reason = _("the run saw one card: nothing to scale")
        return Criterion(key, title, NOT_MEASURED, required=required, reason=reason)
    pct = training.scaling_efficiency * 100
    measured = _("%(pct)s over %(cards)s cards") % {
        "pct": formats.percent(pct, 1, ratio=False),
        "cards": training.cards,
    }
    status = PASSED if pct >= float(minimum_pct) else FAILED
    return Criterion(key, title, status, measured, required)


def _checkpoint_unmeasured(training: TrainingMeasurement | None) -> str:
    unmeasured = _training_unmeasured(training)
    if not unmeasured and training is not None and training.checkpoint_save_s is None:
        return _("the training step wrote no checkpoint")
    return unmeasured


def checkpoint_save_criterion(
    training: TrainingMeasurement | None, maximum_s: Decimal | None
) -> Criterion | None:
    if maximum_s is None:
        return None
    key, title = "checkpoint_save", _("Checkpoint save time")
    required = _("≤ %(seconds)s s") % {"seconds": formats.number(maximum_s, -2)}
    unmeasured = _checkpoint_unmeasured(training)
    if training is None or training.checkpoint_save_s is None or unmeasured:
        return Criterion(key, title, NOT_MEASURED, required=required, reason=unmeasured)
    measured = _("%(seconds)s s for %(size)s GB") % {
        "seconds": formats.number(training.checkpoint_save_s, 2),
        "size": formats.number((training.checkpoint_bytes or 0) / 1e9, 2),
    }
    status = PASSED if training.checkpoint_save_s <= float(maximum_s) else FAILED
    return Criterion(key, title, status, measured, required)


def checkpoint_restore_criterion(
    training: TrainingMeasurement | None, maximum_s: Decimal | None
) -> Criterion | None:
    if maximum_s is None:
        return None
    key, title = "checkpoint_restore", _("Checkpoint restore time")
    required = _("≤ %(seconds)s s, the state restored equal to the state saved") % {
        "seconds": formats.number(maximum_s, -2)
    }
    unmeasured = _checkpoint_unmeasured(training)
    if training is None or training.checkpoint_restore_s is None or unmeasured:
        return Criterion(key, title, NOT_MEASURED, required=required, reason=unmeasured)
    measured = _("%(seconds)s s for %(size)s GB") % {
        "seconds": formats.number(training.checkpoint_restore_s, 2),
        "size": formats.number((training.checkpoint_bytes or 0) / 1e9, 2),
    }
    if not training.restored_matches:
        reason = _("the restored state differs from the state saved")
        return Criterion(key, title, FAILED, measured, required, reason)
    status = PASSED if training.checkpoint_restore_s <= float(maximum_s) else FAILED
    return Criterion(key, title, status, measured, required)


def training_criteria(inputs: AcceptanceInputs, layer: str) -> list[Criterion]:
    """The plan's training thresholds of one layer: samples/s and scaling in the
    performance layer, the checkpoint in stability and recovery; a blank one is none."""
    plan, training = inputs.criteria, inputs.training
    if layer == PERFORMANCE:
        found = [
            training_throughput_criterion(training, plan.training_min_samples_per_s_per_card),
            training_scaling_criterion(training, plan.training_min_scaling_pct),
        ]
    else:
        found = [
            checkpoint_save_criterion(training, plan.checkpoint_max_save_s),
            checkpoint_restore_criterion(training, plan.checkpoint_max_restore_s),
        ]
    return [c for c in found if c is not None]


def performance_layer(inputs: AcceptanceInputs) -> LayerState:
    measurement, slo = inputs.performance, inputs.slo
    criteria = [
        ladder_criterion(measurement, inputs.criteria.ladder),
        safe_level_criterion(measurement, slo, inputs.criteria.required_safe_concurrency),
        memory_criterion(measurement, slo),
    ]
    criteria += training_criteria(inputs, PERFORMANCE)
    return layer_state(PERFORMANCE, criteria + manual_criteria(PERFORMANCE, inputs.results))


# --- layer four: stability and recovery ---------------------------------------


def fault_injections(results: Iterable[ResultFacts]) -> list[ResultFacts]:
    return [r for r in results if r.layer == STABILITY and r.fault_kind]


def stability_criteria(
    results: Iterable[ResultFacts], minimum: int, kinds: tuple[str, ...]
) -> list[Criterion]:
    injections = fault_injections(results)
    # Fewer injections than required, or a kind not yet injected, is work still
    # to do (in progress); only a failed, unresumed or duplicating one fails.
    count = Criterion(
        "fault_count",
        _("Fault injections"),
        PASSED if len(injections) >= minimum else NOT_MEASURED,
        f"{len(injections)}" if len(injections) >= minimum else "",
        f"≥ {minimum}",
        ""
        if len(injections) >= minimum
        else _("%(done)s of %(minimum)s done") % {"done": len(injections), "minimum": minimum},
    )
    done = {r.fault_kind for r in injections}
    missing = [k for k in kinds if k not in done]
    coverage = Criterion(
        "fault_kinds",
        _("Required kinds injected"),
        NOT_MEASURED if missing else PASSED,
        "" if missing else _fault_kinds(sorted(done)),
        _fault_kinds(kinds),
        _("missing: %(kinds)s") % {"kinds": _fault_kinds(missing)} if missing else "",
    )
    return [
        count,
        coverage,
        _each(injections, "resumed", _("Resumed from the latest checkpoint"), True, _("every one")),
        _each(injections, "no_duplicates", _("No duplicated data"), False, _("none duplicated")),
        _outcomes(injections, "fault_outcomes", _("Outcome of each injection")),
    ]


# Each kind of fault in words, as the acceptance page and the packet print it.
FAULT_KIND_WORDS = {
    "network": _noop("network jitter"),
    "node_killed": _noop("a node killed"),
    "maintenance": _noop("a maintenance window"),
    "other": _noop("other"),
}


def _fault_kinds(kinds) -> str:
    return ", ".join(_(FAULT_KIND_WORDS[k]) if k in FAULT_KIND_WORDS else k for k in kinds)


def _each(injections, key: str, title: str, wanted: bool, required: str) -> Criterion:
    attribute = "resumed_from_checkpoint" if key == "resumed" else "duplicated_data"
    if not injections:
        return Criterion(key, title, NOT_MEASURED, required=required)
    bad = [r.activity for r in injections if getattr(r, attribute) is (not wanted)]
    unknown = [r.activity for r in injections if getattr(r, attribute) is None]
    if bad:
        return Criterion(
            key, title, FAILED, _of(len(bad), len(injections)), required, "; ".join(bad)
        )
    if unknown:
        return Criterion(
            key,
            title,
            NOT_MEASURED,
            required=required,
            reason=_("not recorded for: %(activities)s") % {"activities": "; ".join(unknown)},
        )
    return Criterion(key, title, PASSED, _of(len(injections), len(injections)), required)


def _of(part: int, whole: int) -> str:
    return _("%(part)s of %(whole)s") % {"part": part, "whole": whole}


def _outcomes(results: list[ResultFacts], key: str, title: str) -> Criterion:
    failed = [r.activity for r in results if r.outcome != PASSED]
    required = _("every one passed")
    if not results:
        return Criterion(key, title, NOT_MEASURED, required=required)
    measured = _("%(ok)s of %(total)s passed") % {
        "ok": len(results) - len(failed),
        "total": len(results),
    }
    status = FAILED if failed else PASSED
    return Criterion(key, title, status, measured, required, "; ".join(failed))


def manual_criteria(layer: str, results: Iterable[ResultFacts]) -> list[Criterion]:
    """Engineers' checks of a layer: a failed one fails it; none stands in for a measurement."""
    mine = [r for r in results if r.layer == layer and not (layer == STABILITY and r.fault_kind)]
    if not mine:
        return []
    return [_outcomes(mine, f"{layer}.recorded", _("Engineers' recorded checks"))]


def stability_layer(inputs: AcceptanceInputs) -> LayerState:
    plan = inputs.criteria
    criteria = stability_criteria(inputs.results, plan.fault_minimum, plan.fault_kinds)
    criteria += training_criteria(inputs, STABILITY)
    return layer_state(STABILITY, criteria + manual_criteria(STABILITY, inputs.results))


# --- layer five: re-run after maintenance -------------------------------------

RERUN_GROUPS = (
    (
        "rerun_load",
        _noop("Load test against the baseline"),
        (
            baseline_rules.THROUGHPUT,
            baseline_rules.TTFT,
            baseline_rules.TPOT,
            baseline_rules.ERRORS,
        ),
    ),
    (
        "rerun_compute",
        _noop("Benchmarks against the baseline"),
        (baseline_rules.MATMUL, baseline_rules.BANDWIDTH),
    ),
)


def _equal_or_better(tolerances: baseline_rules.Tolerances) -> str:
    return _(
        "equal or better: throughput at most %(throughput)s lower, latency at most "
        "%(latency)s higher, errors at most %(points)s percentage points higher"
    ) % {
        "throughput": formats.percent(tolerances.throughput_pct, -2, ratio=False),
        "latency": formats.percent(tolerances.latency_pct, -2, ratio=False),
        "points": formats.number(tolerances.error_rate_points, -2),
    }


def rerun_metric_criterion(
    key: str, title: str, rows: list[baseline_rules.MetricRow], required: str
) -> Criterion | None:
    """None where neither run measured the group; not measured where only the baseline did."""
    compared = [r for r in rows if r.status != baseline_rules.NOT_COMPARED]
    if not compared:
        if any(r.baseline is not None for r in rows):
            return Criterion(
                key, title, NOT_MEASURED, required=required, reason=_("not measured in the re-run")
            )
        return None
    worse = [r for r in compared if r.regression]
    if worse:
        measured = _("%(worse)s of %(total)s metrics regressed") % {
            "worse": len(worse),
            "total": len(compared),
        }
        return Criterion(
            key, title, FAILED, measured, required, "; ".join(r.finding for r in worse)
        )
    measured = _("%(total)s metrics equal or better") % {"total": len(compared)}
    return Criterion(key, title, PASSED, measured, required)


def rerun_answers_criterion(comparison: baseline_rules.Comparison) -> Criterion | None:
    title, required = _("Answers against the baseline"), _("every answer right in the baseline")
    if not comparison.baseline_answered:
        return None
    if not comparison.answers_compared:
        return Criterion(
            "rerun_answers",
            title,
            NOT_MEASURED,
            required=required,
            reason=_("not measured in the re-run"),
        )
    wrong = comparison.wrong_answers
    kept = [a for a in comparison.answers if a.baseline_passed]
    measured = _("%(right)s of %(total)s still right") % {
        "right": len(kept) - len(wrong),
        "total": len(kept),
    }
    if wrong:
        reason = "; ".join(a.finding for a in wrong[:10])
        return Criterion("rerun_answers", title, FAILED, measured, required, reason)
    return Criterion("rerun_answers", title, PASSED, measured, required)


def maintenance_layer(inputs: AcceptanceInputs) -> LayerState:
    """Equal or better than the pinned baseline (docs/rules/evidence.md#baseline)."""
    rerun, manual = inputs.rerun, manual_criteria(MAINTENANCE, inputs.results)
    comparison = rerun.comparison if rerun is not None else None
    if comparison is None:
        waiting = (
            Criterion(
                "baseline",
                _("Baseline pinned"),
                NOT_APPLICABLE,
                reason=_("no baseline pinned: this layer applies once a tech lead pins one"),
            )
            if rerun is None
            else Criterion(
                "rerun",
                _("Run since the baseline"),
                NOT_APPLICABLE,
                reason=_("no run since the baseline yet"),
            )
        )
        status = layer_state(MAINTENANCE, manual).status if manual else NOT_APPLICABLE
        return LayerState(MAINTENANCE, status, (waiting, *manual))
    required = _equal_or_better(comparison.tolerances)
    criteria = [
        rerun_metric_criterion(
            key,
            _(title),
            [r for r in comparison.metrics if r.group in groups],
            required,
        )
        for key, title, groups in RERUN_GROUPS
    ]
    criteria.append(rerun_answers_criterion(comparison))
    found = [c for c in criteria if c is not None]
    if not found:
        found = [
            Criterion(
                "rerun",
                _("Run since the baseline"),
                NOT_MEASURED,
                required=required,
                reason=_("the re-run measured nothing the baseline measured"),
            )
        ]
    return layer_state(MAINTENANCE, found + manual)


# --- states ------------------------------------------------------------------


def layer_state(layer: str, criteria: list[Criterion]) -> LayerState:
    statuses = {c.status for c in criteria}
    if FAILED in statuses:
        status = FAILED
    elif NOT_MEASURED in statuses or not criteria:
        status = IN_PROGRESS
    else:
        status = PASSED
    return LayerState(layer, status, tuple(criteria))


def evaluate(inputs: AcceptanceInputs) -> tuple[LayerState, ...]:
    return (
        connectivity_layer(inputs),
        correctness_layer(inputs),
        performance_layer(inputs),
        stability_layer(inputs),
        maintenance_layer(inputs),
    )


def overall_status(layers: Sequence[LayerState]) -> str:
    """A layer that does not apply yet (no baseline pinned) holds nothing back."""
    statuses = {layer.status for layer in layers} - {NOT_APPLICABLE}
    if FAILED in statuses:
        return FAILED
    if statuses == {PASSED}:
        return PASSED
    return IN_PROGRESS


def parse_ladder(text: str) -> tuple[int, ...]:
    """'1, 4,8' → (1, 4, 8); raises ValueError on anything but positive integers."""
    levels = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise ValueError(_("%(part)s is not a positive whole number") % {"part": repr(part)})
        levels.append(int(part))
    if not levels:
        raise ValueError(_("the ladder is empty"))
    return tuple(sorted(set(levels)))

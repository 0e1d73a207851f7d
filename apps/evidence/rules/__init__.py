"""Verification rules: plain functions on plain data, each returning one or more checks.

A check is pass / warn / fail / not measured, with the measured value, the
expected value, the tolerance and the source of the rule. ``verify`` runs
every group and ``verdict`` turns the checks into the offer's verdict.
"""

from dataclasses import asdict, dataclass, field

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

RULES_VERSION = "evidence-rules/1"

PASS, WARN, FAIL, NOT_MEASURED = "pass", "warn", "fail", "not_measured"

# Without these the evidence cannot say the hardware is what was sold.
ESSENTIAL = ("identity.device_count", "identity.sku", "identity.memory", "performance.matmul")


@dataclass
class Check:
    key: str
    group: str
    title: str
    status: str
    measured: object = None
    expected: object = None
    tolerance: str = ""
    source: str = ""
    detail: str = ""
    causes: list = field(default_factory=list)
    next_steps: list = field(default_factory=list)
    findings: list = field(default_factory=list)  # the server's findings beside the client's

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Facts:
    """What the server read from one bundle, already recomputed from the raw data."""

    gpus: list = field(default_factory=list)
    gpu_count: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)
    driver: dict = field(default_factory=dict)
    shims: dict | None = None
    alloc_probe: list = field(default_factory=list)
    raw_xml_gpus: list | None = None
    raw_smi: list | None = None  # the nvidia-smi -q -x artifacts as the server read them
    client_findings: list = field(default_factory=list)  # shown beside, never judged with
    environment: dict | None = None
    bench: dict = field(default_factory=dict)
    cells: list = field(default_factory=list)
    levels: list = field(default_factory=list)
    netprobe: list = field(default_factory=list)
    authprobe: dict | None = None  # the endpoint security probes (None: the step did not run)
    # The open-loop rate search, recomputed (recompute.ratesearch; None: the step did not run).
    ratesearch: dict | None = None
    # Inside the node and the local disk, recomputed (None: not in the bundle).
    topology: dict | None = None  # from the raw `nvidia-smi topo -m`
    node: dict | None = None
    disk: dict | None = None
    # Between nodes (None: not run) and, in a gateway bundle, the round trips from the gateway.
    netpeer: dict | None = None
    gateway: list = field(default_factory=list)
    # The reference training step, recomputed (recompute_train; None: the step did not run).
    training: dict | None = None


@dataclass
class Context:
    """What the bundle is checked against: the offer's declared spec, SLOs, latency budget."""

    declared: dict = field(default_factory=dict)
    slo: dict = field(default_factory=dict)
    latency_target_ms: float | None = None
    matmul_bands: dict = field(default_factory=dict)
    environment_requirements: dict = field(default_factory=dict)
    # The case's requirement spec, as apps.evidence.requirement reads it (empty: none): its
    # floors (local_nvme_tb, inter_node_bandwidth_gbit…) and its tolerance.
    requirement: dict = field(default_factory=dict)


def check_modules() -> tuple:
    """The rule modules a verification runs, in the order their checks are listed; each has
    ``checks(facts, context) -> list[Check]``. Imported here, once: they import this module."""
    from apps.evidence.rules import (
        disk,
        identity,
        interconnect,
        network,
        performance,
        raw_inventory,
        security,
        service,
        throughput,  # the open-loop rate search
        training,
        versions,
    )

    found: tuple = (identity, raw_inventory, versions, performance, service, network, security)
    found += (throughput, interconnect, disk)  # the rate search; the node, the disk
    return found + (training,)  # the reference training step


def verify(facts: Facts, context: Context) -> list[Check]:
    from apps.evidence.troubleshooting import annotate

    checks = [check for module in check_modules() for check in module.checks(facts, context)]
    return [annotate(check) for check in checks]


# Judged by an approval gate of their own, not by the verdict (see rules.security).
OWN_GATE_GROUPS = ("security",)


def verdict(checks: list[Check]) -> str:
    """failed if any check fails; insufficient if an essential one was not measured;
    findings if any warns; verified otherwise. The endpoint security probes are left to
    their own gate."""
    checks = [c for c in checks if c.key.split(".", 1)[0] not in OWN_GATE_GROUPS]
    statuses = [c.status for c in checks]
    if FAIL in statuses:
        return "failed"
    for key in ESSENTIAL:
        mine = [c for c in checks if c.key == key or c.key.startswith(key + ".")]
        if not mine or all(c.status == NOT_MEASURED for c in mine):
            return "insufficient"
    if WARN in statuses:
        return "findings"
    return "verified"


def fmt(value, unit: str = "", digits: int = 1) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        value = f"{value:,.{digits}f}"
    return f"{value} {unit}".strip()

"""The commands the token page gives: the harness's whole `run`, with the case's settings, the
gateway probe, and the between-nodes pair where the offer declares an inter-node network.

One command runs everything the acceptance reads from a bundle: inventory,
environment, benchmarks, the load ladder, the rate search for the throughput at
the SLO (the case's SLO starts it), the soak, the correctness set, the network
and authentication probes, inside the node, the local disk and the reference
training step; then it uploads the bundle and waits for the server's verdict. What
the app knows is filled in (the case's P95 time-to-first-token SLO, the offer's
acceptance ladder and soak, the upload URL, the token and its nonce); what only the
person knows (the vendor's endpoint and model, unless given on the form) stays a
visible placeholder.
"""

import shlex
from dataclasses import dataclass

from apps.acceptance import rules as acceptance_rules
from apps.workloads.models import PlanWorkload

ENDPOINT_PLACEHOLDER = "<OPENAI_COMPATIBLE_URL>"
MODEL_PLACEHOLDER = "<MODEL_NAME>"
BASELINE_PLACEHOLDER = "<YOUR_BASELINE_URL>"
PLACEHOLDERS = frozenset({ENDPOINT_PLACEHOLDER, MODEL_PLACEHOLDER, BASELINE_PLACEHOLDER})
REFERENCE_FILE = "reference.json"
BUNDLE_FILE = "bundle.json"
# From the customer's gateway, and between two rented nodes (docs/rules/evidence.md#between-nodes).
GATEWAY_FILE = "gateway.json"
NETPEER_FILE = "netpeer.json"
PEER_PORT = 5201
PEER_PLACEHOLDER = f"<SECOND_NODE_ADDRESS>:{PEER_PORT}"
PLACEHOLDERS |= {PEER_PLACEHOLDER}
MULTI_NODE_NETWORKS = frozenset({"infiniband", "roce", "ethernet"})
HARNESS = ("python3", "diligence-harness.pyz")


@dataclass(frozen=True)
class RunSettings:
    case_id: int
    upload_url: str
    token: str
    nonce: str
    ladder: tuple[int, ...]
    soak_minutes: int
    slo_p95_ttft_ms: int
    endpoint: str = ""
    model: str = ""
    # The vendor's declared rate limit, so the security probe sends its burst over it.
    rate_limit_rps: str = ""
    # The digests of the case's sets the acceptance plan requires ("" where it names none):
    # the harness fetches them with the token, and the server refuses a run on other inputs.
    prompt_set_sha256: str = ""
    sample_set_sha256: str = ""
    # The declared spec says the API tokens are scoped: the 403 probe is required, and runs
    # only with a token without the permission (docs/rules/evidence.md#endpoint-security).
    tokens_scoped: bool = False
    # The inter-node network the offer declares: between-nodes commands where it has one.
    inter_node_network: str = ""

    @property
    def multi_node(self) -> bool:
        return self.inter_node_network in MULTI_NODE_NETWORKS


def _line(parts: list[str]) -> str:
    """Shell-quoted, except the placeholders, which stay readable to be replaced."""
    return " ".join(p if p in PLACEHOLDERS else shlex.quote(p) for p in parts)


def run_command(settings: RunSettings) -> str:
    parts = [*HARNESS, "run", "--case", str(settings.case_id)]
    parts += ["--endpoint", settings.endpoint or ENDPOINT_PLACEHOLDER]
    parts += ["--model", settings.model or MODEL_PLACEHOLDER]
    parts += ["--ladder", ",".join(str(c) for c in settings.ladder)]
    parts += ["--slo-ttft-ms", str(settings.slo_p95_ttft_ms)]
    parts += ["--soak-duration", f"{settings.soak_minutes}m"]
    if settings.rate_limit_rps:
        parts += ["--rate-limit-rps", settings.rate_limit_rps]
    if settings.prompt_set_sha256:
        parts += ["--prompt-set", f"case:{settings.prompt_set_sha256}"]
    if settings.sample_set_sha256:
        parts += ["--sample-set", f"case:{settings.sample_set_sha256}"]
    parts += ["--reference", REFERENCE_FILE]
    parts += ["--node", "--disk"]  # inside the node, the local disk
    parts += ["--train"]  # the reference training step
    parts += ["--upload", settings.upload_url, "--token", settings.token]
    parts += ["--nonce", settings.nonce, "--out", BUNDLE_FILE]
    return _line(parts)


def reference_command(settings: RunSettings) -> str:
    """Records the correctness reference on the team's own baseline, before the run."""
    parts = [*HARNESS, "correctness", "--endpoint", BASELINE_PLACEHOLDER]
    parts += ["--model", settings.model or MODEL_PLACEHOLDER]
    parts += ["--record-reference", REFERENCE_FILE]
    return _line(parts)


def _upload_parts(settings: RunSettings, out: str) -> list[str]:
    return [
        *("--upload", settings.upload_url, "--token", settings.token),
        *("--nonce", settings.nonce, "--out", out),
    ]


def gateway_command(settings: RunSettings) -> str:
    """Run on the customer's gateway host: the round trip to the vendor's endpoint, the only
    measurement that fills the network plan's gateway → remote service hop."""
    parts = [*HARNESS, "gateway", "--case", str(settings.case_id)]
    parts += ["--endpoint", settings.endpoint or ENDPOINT_PLACEHOLDER]
    return _line(parts + _upload_parts(settings, GATEWAY_FILE))


def serve_command(settings: RunSettings) -> str:
    """Run first on a second rented node: the peer the between-nodes step measures against."""
    return _line([*HARNESS, "net-serve", "--port", str(PEER_PORT)])


def peer_command(settings: RunSettings) -> str:
    """Run on the first node: throughput both ways, RTT, jitter and loss, and RDMA ports."""
    parts = [*HARNESS, "net-peer", "--case", str(settings.case_id), "--peer", PEER_PLACEHOLDER]
    return _line(parts + _upload_parts(settings, NETPEER_FILE))


def run_settings(*, case, offer, upload_url: str, token: str, nonce: str, endpoint="", model=""):
    """The case's SLO and the offer's acceptance plan (its defaults where it has none)."""
    plan = getattr(offer, "acceptance_plan", None) if offer is not None else None
    criteria = acceptance_rules.PlanCriteria()
    spec = getattr(offer, "declared_spec", None) if offer is not None else None
    rate = getattr(spec, "rate_limit_rps", None)
    required = _required_sets(plan)
    return RunSettings(
        case_id=case.pk,
        upload_url=upload_url,
        token=token,
        nonce=nonce,
        ladder=acceptance_rules.parse_ladder(plan.ladder) if plan else criteria.ladder,
        soak_minutes=plan.soak_minutes if plan else criteria.soak_minutes,
        slo_p95_ttft_ms=case.slo_p95_ttft_ms,
        endpoint=endpoint,
        model=model,
        rate_limit_rps=f"{rate.normalize():f}" if rate else "",
        prompt_set_sha256=required[0],
        sample_set_sha256=required[1],
        tokens_scoped=getattr(spec, "tokens_scoped", None) is True,
        inter_node_network=getattr(spec, "inter_node_network", "") or "",
    )


def _required_sets(plan) -> tuple[str, str]:
    """The digests of the prompt set and the core sample set the plan requires."""
    workload = (
        PlanWorkload.objects.filter(plan=plan).select_related("prompt_set", "sample_set").first()
        if plan is not None
        else None
    )
    if workload is None:
        return "", ""
    return (
        workload.prompt_set.sha256 if workload.prompt_set else "",
        workload.sample_set.sha256 if workload.sample_set else "",
    )

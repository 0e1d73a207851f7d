"""Composing an offer's verification from all its bundles (docs/rules/evidence.md#composition).

The harness measures in parts — a full run, a soak alone, a correctness run
alone — and each part of the verification takes the newest bundle that
measured it: identity and inventory from the newest run that saw GPUs, the
soak from the newest soak, correctness from the newest correctness run, the
load ladder from the newest load test, the throughput at the SLO from the newest
rate search. A bundle that measured less never
erases what another measured. The parts must come from one machine: a part
measured on another host or other GPUs is a finding that keeps the
verification from being confirmed.

Plain functions on plain data; ``apps.evidence.composition`` feeds them the
stored verifications and records the result.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop as _noop
from django.utils.translation import pgettext

from apps.evidence.rules import NOT_MEASURED, Check, verdict
from apps.evidence.wording import in_words

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

INVENTORY = "inventory"
ENVIRONMENT = "environment"
BENCH = "bench"
LOADTEST = "loadtest"
NETPROBE = "netprobe"
AUTHPROBE = "authprobe"
SOAK = "soak"
CORRECTNESS = "correctness"
RATESEARCH = "ratesearch"  # the open-loop rate search: throughput at the SLO
# Inside the node and the local disk: the topology apart from the copies, as a run
# without torch still reads it (docs/rules/evidence.md#inside-the-node).
TOPOLOGY = "topology"
NODE = "node"
DISK = "disk"
# Between nodes (net-peer) and the round trip from the customer's gateway (a gateway bundle).
NETPEER = "netpeer"
GATEWAY = "gateway"
# The reference training step: samples/s on one card and all, the checkpoint's round trip.
TRAINING = "training"

# Parts judged by the verification's own checks, in the order they are listed.
CHECK_SECTIONS: tuple[str, ...] = (INVENTORY, ENVIRONMENT, BENCH, LOADTEST, NETPROBE, AUTHPROBE)
CHECK_SECTIONS += (RATESEARCH, TOPOLOGY, NODE, DISK, NETPEER, GATEWAY, TRAINING)
# Parts measured elsewhere than the rented machine by design: never "another machine".
OFF_MACHINE_SECTIONS = frozenset({GATEWAY})
# Runs judged by the acceptance criteria: composed by presence, without checks here.
RUN_SECTIONS = (SOAK, CORRECTNESS)
SECTIONS = CHECK_SECTIONS + RUN_SECTIONS

# The step each check reads; the first matching prefix wins. The driver, the CUDA
# version the driver supports and what the raw nvidia-smi output says of them come
# with the inventory, the rest of `versions` with the environment step.
_PREFIXES = (
    ("identity.", INVENTORY),
    ("inventory.", INVENTORY),
    ("versions.driver", INVENTORY),
    ("versions.smi_", INVENTORY),  # read from the raw nvidia-smi output
    ("versions.cuda", INVENTORY),
    ("versions.", ENVIRONMENT),
    ("performance.", BENCH),
    ("service.throughput_at_slo", RATESEARCH),  # before the load test's "service."
    ("service.", LOADTEST),
    ("network.inter_node", NETPEER),
    ("network.gateway", GATEWAY),
    ("network.", NETPROBE),
    ("security.", AUTHPROBE),
    ("interconnect.topology", TOPOLOGY),
    ("interconnect.", NODE),
    ("disk.", DISK),
    ("training.", TRAINING),
)

# The verified numbers compared across a case, by the part that measured them.
HEADLINE_SECTIONS = {
    "gpus": INVENTORY,
    "gpu_names": INVENTORY,
    "matmul": BENCH,
    "bandwidth": BENCH,
    "max_output_tok_s": LOADTEST,
    "ttft_p50_ms_lowest_level": LOADTEST,
    "max_concurrency_within_slo": LOADTEST,
    "at_slo": LOADTEST,
    "goodput_at_slo": RATESEARCH,
}

OTHER_MACHINE = "other_machine"
HOST_NAME, GPUS = "host_name", "gpus"


def section_of(key: str) -> str:
    """The part of a run a check reads; a check of an unknown group is its own part."""
    for prefix, section in _PREFIXES:
        if key.startswith(prefix):
            return section
    return key.split(".", 1)[0]


@dataclass(frozen=True)
class Machine:
    """Where a run came from: the host's name and the GPUs it saw ("" / empty: unknown)."""

    host_name: str = ""
    gpu_uuids: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Contribution:
    """What one bundle measured, as composition reads it.

    ``checks`` and ``headline`` are the bundle's own (checks of parts it did not
    measure may be among them; they are ignored), ``runs`` the run parts it
    carries (soak, correctness), ``gpus_seen`` how many GPUs its inventory saw.
    """

    bundle: int
    sha256: str
    received_at: datetime
    measured_at: datetime
    checks: tuple[dict, ...] = ()
    headline: dict = field(default_factory=dict)
    runs: frozenset[str] = frozenset()
    gpus_seen: int = 0
    machine: Machine = Machine()

    @property
    def order(self) -> tuple[datetime, int]:
        """Newest by the server's clock, then by arrival: the harness's clock may be wrong."""
        return (self.received_at, self.bundle)

    def source(self) -> dict:
        return {
            "bundle": self.bundle,
            "sha256": self.sha256,
            "received_at": self.received_at.isoformat(),
            "measured_at": self.measured_at.isoformat(),
        }


def measured(check: dict) -> bool:
    """Whether a check measured something: graded, or carrying a value it could not grade
    (an RTT without a latency budget, a matmul rate without a datasheet peak)."""
    graded = (check.get("status") or NOT_MEASURED) != NOT_MEASURED
    return graded or check.get("measured") not in (None, "")


def measured_sections(checks) -> frozenset[str]:
    """The parts in which at least one check measured something."""
    return frozenset(section_of(c["key"]) for c in checks if measured(c))


def sections_of(contribution: Contribution) -> frozenset[str]:
    return measured_sections(contribution.checks) | contribution.runs


def pick(section: str, contributions: list[Contribution]) -> Contribution | None:
    """The newest bundle that measured this part; for the inventory, the newest that saw
    GPUs when any did (a run elsewhere that saw none says nothing of the rented cards)."""
    measuring = [c for c in contributions if section in sections_of(c)]
    if section == INVENTORY:
        measuring = [c for c in measuring if c.gpus_seen > 0] or measuring
    return max(measuring, key=lambda c: c.order, default=None)


def machine_differences(reference: Machine, other: Machine) -> list[dict]:
    """What tells two machines apart, compared only where both bundles know it."""
    found: list[dict] = []
    if (
        reference.host_name
        and other.host_name
        and reference.host_name.lower() != other.host_name.lower()
    ):
        found.append({"what": HOST_NAME, "this": other.host_name, "reference": reference.host_name})
    if reference.gpu_uuids and other.gpu_uuids and reference.gpu_uuids != other.gpu_uuids:
        found.append(
            {
                "what": GPUS,
                "this": sorted(other.gpu_uuids),
                "reference": sorted(reference.gpu_uuids),
            }
        )
    return found


def machine_findings(chosen: dict[str, Contribution]) -> list[dict]:
    """A finding per composed bundle run on another machine than the reference one: the
    bundle whose inventory identifies the hardware, else the newest composed bundle."""
    # The gateway probe runs on the customer's gateway on purpose
    # (docs/rules/evidence.md#composition).
    chosen = {s: c for s, c in chosen.items() if s not in OFF_MACHINE_SECTIONS}
    if not chosen:
        return []
    if INVENTORY in chosen:
        reference = chosen[INVENTORY]
    else:
        reference = max(chosen.values(), key=lambda c: c.order)
    parts: dict[int, list[str]] = {}
    bundles: dict[int, Contribution] = {}
    for section in SECTIONS:
        if section in chosen:
            parts.setdefault(chosen[section].bundle, []).append(section)
            bundles[chosen[section].bundle] = chosen[section]
    for section, contribution in chosen.items():  # parts of unknown groups, last
        if section not in SECTIONS:
            parts.setdefault(contribution.bundle, []).append(section)
            bundles[contribution.bundle] = contribution
    findings = []
    for bundle, contribution in bundles.items():
        if bundle == reference.bundle:
            continue
        differences = machine_differences(reference.machine, contribution.machine)
        if differences:
            findings.append(
                {
                    "kind": OTHER_MACHINE,
                    "bundle": contribution.source(),
                    "sections": parts[bundle],
                    "reference": reference.source(),
                    "reference_sections": parts[reference.bundle],
                    "differences": differences,
                }
            )
    return findings


@dataclass(frozen=True)
class Composition:
    verdict: str
    checks: list[dict]  # each names the bundle it comes from ("bundle": pk, or None)
    sources: dict[str, dict]  # part → the bundle it comes from
    headline: dict
    measured_at: datetime | None  # the oldest measurement the checks rely on
    findings: list[dict]


def _ordered_sections(contributions: list[Contribution], placeholders: Contribution) -> list[str]:
    seen = {section_of(c["key"]) for x in [*contributions, placeholders] for c in x.checks}
    return [*CHECK_SECTIONS, *sorted(seen - set(CHECK_SECTIONS) - set(RUN_SECTIONS))]


def compose(contributions: list[Contribution], *, placeholders: Contribution) -> Composition:
    """The verification of every part, each from the newest bundle that measured it.

    ``placeholders`` (the bundle being verified) stands in, unmeasured, for a part no
    bundle measured, so the checks still say what is missing.
    """
    check_sections = _ordered_sections(contributions, placeholders)
    chosen: dict[str, Contribution] = {}
    for section in [*check_sections, *RUN_SECTIONS]:
        picked = pick(section, contributions)
        if picked is not None:
            chosen[section] = picked
    checks: list[dict] = []
    for section in check_sections:
        source = chosen.get(section)
        found = source.checks if source is not None else placeholders.checks
        bundle = source.bundle if source is not None else None
        checks += [dict(c, bundle=bundle) for c in found if section_of(c["key"]) == section]
    headline = dict(placeholders.headline)
    for key, section in HEADLINE_SECTIONS.items():
        if section in chosen:
            headline[key] = chosen[section].headline.get(key)
    headline["statuses"] = {c["key"]: c["status"] for c in checks}
    measured = [chosen[s].measured_at for s in check_sections if s in chosen]
    return Composition(
        verdict=verdict([Check(c["key"], c.get("group", ""), "", c["status"]) for c in checks]),
        checks=checks,
        sources={section: c.source() for section, c in chosen.items()},
        headline=headline,
        measured_at=min(measured, default=None),
        findings=machine_findings(chosen),
    )


# --- what an approval relies on -----------------------------------------------


def relied_on(
    *, verdict: str, checks: list[dict], findings: list[dict] | None, standalone_sha256=None
) -> dict:
    """The values a decision on this verification relied on; a later verification with the
    same values (a soak, say, that changed no check) leaves the decision standing.

    A verification recorded before composition (``standalone_sha256``, its bundle's
    digest) cannot say which values a newer bundle kept: its bundle is a value too.
    """
    values: dict = {
        "verdict": verdict,
        # A check that measured nothing holds no value to rely on (its wording may vary
        # with the bundle standing in for a part no bundle measured).
        "checks": {
            c["key"]: [c.get("status"), c.get("measured"), c.get("expected")]
            for c in checks
            if measured(c)
        },
        "blocked": sorted(
            f"{f.get('kind')}:{(f.get('bundle') or {}).get('bundle')}" for f in findings or []
        ),
    }
    if standalone_sha256:
        values["bundle"] = standalone_sha256
    return values


# A verdict and a check's status in words, for the notes on what changed since a decision.
_VERDICT_WORDS = {
    "verified": _noop("verified"),
    "findings": _noop("findings"),
    "failed": _noop("failed"),
    "insufficient": _noop("insufficient"),
}
_STATUS_WORDS = {
    "pass": _noop("pass"),
    "warn": _noop("warn"),
    "fail": _noop("fail"),
    NOT_MEASURED: _noop("not measured"),
}


def _verdict_words(value) -> str:
    words = _VERDICT_WORDS.get(value)
    return pgettext("verdict", words) if words else str(value)


def _status_words(value) -> str:
    words = _STATUS_WORDS.get(value)
    return _(words) if words else str(value)


def value_changes(before: dict, after: dict, titles: dict | None = None) -> list[str]:
    """In plain words, in the reader's language, which relied-on values differ (empty: none).

    ``titles`` names each check by its key, as the verification's checks title them;
    a check without one is named by its key.
    """
    titles = titles or {}
    found = []
    if before.get("bundle") != after.get("bundle"):
        found.append(_("verified from another bundle"))
    if before.get("verdict") != after.get("verdict"):
        found.append(
            _("verdict %(before)s → %(after)s")
            % {
                "before": _verdict_words(before.get("verdict")),
                "after": _verdict_words(after.get("verdict")),
            }
        )
    was, now = before.get("checks") or {}, after.get("checks") or {}
    for key in sorted(set(was) | set(now)):
        if key not in now:
            found.append(_("%(check)s no longer checked") % {"check": titles.get(key, key)})
        elif key not in was:
            found.append(
                _("%(check)s newly checked (%(status)s)")
                % {"check": titles.get(key, key), "status": _status_words(now[key][0])}
            )
        elif was[key] != now[key]:
            (s0, m0, _e0), (s1, m1, _e1) = was[key], now[key]
            if s0 != s1:
                found.append(
                    _("%(check)s %(before)s → %(after)s")
                    % {
                        "check": titles.get(key, key),
                        "before": _status_words(s0),
                        "after": _status_words(s1),
                    }
                )
            elif m0 != m1:
                found.append(
                    _("%(check)s measured %(before)s → %(after)s")
                    % {"check": titles.get(key, key), "before": in_words(m0), "after": in_words(m1)}
                )
            else:
                found.append(
                    _("%(check)s expected value changed") % {"check": titles.get(key, key)}
                )
    if before.get("blocked") != after.get("blocked"):
        found.append(
            _("bundles from another machine") if after.get("blocked") else _("machine finding gone")
        )
    return found

"""Inside the node: the links between the cards, their bandwidth and the matmul repeats,
against the declared interconnect (docs/rules/evidence.md#inside-the-node).

Every figure is the server's own, recomputed from the bundle's raw artifacts
(``apps.evidence.recompute_node``): the link matrix from the raw
`nvidia-smi topo -m` output, bandwidths from each copy's bytes and nanoseconds,
the repeats from their digests. A bundle whose summaries claim more than its
raw timings give is judged on the raw timings.
"""

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

GROUP = "interconnect"
NVLINK, PCIE = "nvlink", "pcie"
# docs/rules/evidence.md#inside-the-node: datasheets state NVLink and PCIe bandwidth per card
# as both directions together (H100 SXM "900 GB/s" is 450 GB/s each way); a copy and the
# all-reduce bus bandwidth move data one way.
DIRECTIONS = 2
# docs/rules/evidence.md#inside-the-node: a healthy link copies at 75-90 % of its rate each
# way; from 70 % passes, from 50 % warns, below fails.
BANDWIDTH_PASS, BANDWIDTH_WARN = 0.70, 0.50
# docs/rules/evidence.md#inside-the-node: cards of different models may round differently,
# never by more than this share of the largest value.
INTEGRITY_REL_TOLERANCE = 1e-4
LISTED_PAIRS = 6  # pairs named in a detail; the rest are counted

# Stored in English and worded for the reader where shown (apps.evidence.wording).
TOPOLOGY_TITLE = phrase("Links between the cards against the declared interconnect")
TOPOLOGY_SOURCE = phrase(
    "the link matrix of nvidia-smi topo -m: NV# is a bonded set of NVLinks; PIX, PXB, PHB, "
    "NODE and SYS are PCIe paths"
)
EXPECT_NVLINK = phrase("NVLink (NV#) between every pair of cards")
EXPECT_PCIE = phrase("PCIe between the cards (NVLink passes too)")
NOTHING_DECLARED = phrase("no interconnect declared")
LINKS_MEASURED = phrase("%(cards)s cards, %(pairs)s pairs: %(links)s")
NO_TOPOLOGY = phrase("No nvidia-smi topo -m output in the bundle.")
ONE_CARD = phrase("One card: there is no pair of cards to link.")
WITHOUT_NVLINK = phrase("%(count)s of %(pairs)s pairs have no NVLink: %(which)s.")
MORE_THAN_PCIE = phrase("NVLink joins some or all cards: more than the declared PCIe.")
NOT_DECLARED = phrase("The declared spec names no NVLink or PCIe interconnect to hold this to.")

BANDWIDTH_TITLE = phrase("Bandwidth between the cards against the declared bandwidth")
BANDWIDTH_SOURCE = phrase(
    "copies between every pair of cards and the all-reduce bus bandwidth as nccl-tests "
    "defines it (algorithm bandwidth × 2(n − 1)/n), recomputed from the raw timings; NVIDIA "
    "datasheets state NVLink and PCIe bandwidth for both directions together"
)
WEAKEST_PAIR = phrase("weakest pair %(src)s → %(dst)s %(gbps)s GB/s")
BUS_BANDWIDTH = phrase("all-reduce bus bandwidth %(gbps)s GB/s over %(ranks)s cards")
OF_DECLARED = phrase("%(fraction)s of %(per_direction)s GB/s each way")
BANDWIDTH_EXPECTED = phrase(
    "≥ %(least)s of %(per_direction)s GB/s each way (the declared %(declared)s GB/s counts "
    "both directions)"
)
BANDWIDTH_BANDS = phrase("pass from %(pass)s, warn from %(warn)s, fail below")
NO_NODE = phrase("No measurement inside the node in the bundle.")
NOT_ON_GPUS = phrase("Not measured on the GPUs: %(reason)s.")
NO_PAIRS = phrase("One card, or every copy between cards failed: nothing to measure.")
NO_DECLARED_BANDWIDTH = phrase("The declared spec states no intra-node bandwidth to hold this to.")
GRADED_ON_PAIRS = phrase("Judged on the weakest pair of cards.")
GRADED_ON_BUS = phrase("Judged on the all-reduce bus bandwidth.")

INTEGRITY_TITLE = phrase("Repeated matmul results agree (silent corruption)")
INTEGRITY_SOURCE = phrase(
    "gpu-burn's comparison of repeated results and DCGM diagnostics: the same computation on "
    "the same inputs must give the same result, run after run and card after card"
)
INTEGRITY_EXPECTED = phrase("every repeat bitwise identical on each card; cards agree")
INTEGRITY_TOLERANCE = phrase(
    "repeats on one card: bitwise; between cards: within %(tolerance)s of the largest value"
)
REPEATS_AGREE = phrase("%(repeats)s repeats on each of %(cards)s cards: identical")
REPEATS_DISAGREE = phrase("%(device)s gave %(distinct)s different results in %(repeats)s repeats.")
CARDS_DIFFER = phrase("%(device)s differs from %(reference)s by %(diff)s of the largest value.")
CARDS_ROUND = phrase(
    "%(device)s differs from %(reference)s in the last bits (%(diff)s of the largest value): "
    "the same model with the same software should agree bitwise."
)
RESULTS_DIFFER = phrase("%(repeats)s repeats on each of %(cards)s cards: results differ")
NO_REPEATS = phrase("No matmul repeats in the bundle.")


def checks(facts: Facts, context: Context) -> list[Check]:
    declared = context.declared
    return [
        check_topology(facts.topology, declared.get("intra_node_interconnect") or ""),
        check_bandwidth(facts.node, _number(declared.get("intra_node_bandwidth_gbps"))),
        check_integrity(facts.node),
    ]


def _number(value) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _pct(value: float) -> str:
    return f"{value:.0%}"


def check_topology(topology: dict | None, declared: str) -> Check:
    check = Check(
        "interconnect.topology",
        GROUP,
        TOPOLOGY_TITLE,
        NOT_MEASURED,
        expected={NVLINK: EXPECT_NVLINK, PCIE: EXPECT_PCIE}.get(declared, NOTHING_DECLARED),
        tolerance=phrase("every pair of cards"),
        source=TOPOLOGY_SOURCE,
    )
    if topology is None:
        check.detail = NO_TOPOLOGY
        return check
    gpus, pairs = topology.get("gpus") or [], topology.get("pairs") or []
    if len(gpus) < 2:
        check.detail = ONE_CARD
        return check
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair["link"] or "?"] = counts.get(pair["link"] or "?", 0) + 1
    links = ", ".join(f"{link} × {n}" for link, n in sorted(counts.items()))
    check.measured = LINKS_MEASURED % {"cards": len(gpus), "pairs": len(pairs), "links": links}
    without = [p for p in pairs if p["kind"] != NVLINK]
    if declared == NVLINK:
        check.status = FAIL if without else PASS
        if without:
            named = [f"{p['a']}–{p['b']} ({p['link'] or '?'})" for p in without[:LISTED_PAIRS]]
            more = len(without) - len(named)
            which = ", ".join(named) + (f", +{more}" if more else "")
            check.detail = WITHOUT_NVLINK % {
                "count": len(without),
                "pairs": len(pairs),
                "which": which,
            }
    elif declared == PCIE:
        check.status = PASS
        if len(without) < len(pairs):
            check.detail = MORE_THAN_PCIE
    else:
        check.detail = NOT_DECLARED
    return check


def _weakest_pair(node: dict) -> dict | None:
    measured = [p for p in node.get("peer") or [] if p.get("median")]
    return min(measured, key=lambda p: p["median"]) if measured else None


def _bus(node: dict) -> dict | None:
    reduced = node.get("allreduce") or None
    if reduced and reduced.get("backend") == "nccl" and reduced.get("busbw_GBps"):
        return reduced
    return None


def _not_on_gpus(node: dict) -> str:
    reasons = [s["reason"] for s in node.get("skipped") or [] if s.get("reason")]
    reason = reasons[0] if reasons else phrase("the step ran without a CUDA device")
    return NOT_ON_GPUS % {"reason": reason.rstrip(".")}


def check_bandwidth(node: dict | None, declared_gbps: float | None) -> Check:
    check = Check(
        "interconnect.bandwidth",
        GROUP,
        BANDWIDTH_TITLE,
        NOT_MEASURED,
        tolerance=BANDWIDTH_BANDS % {"pass": _pct(BANDWIDTH_PASS), "warn": _pct(BANDWIDTH_WARN)},
        source=BANDWIDTH_SOURCE,
    )
    per_direction = declared_gbps / DIRECTIONS if declared_gbps else None
    if per_direction:
        check.expected = BANDWIDTH_EXPECTED % {
            "least": _pct(BANDWIDTH_PASS),
            "per_direction": f"{per_direction:g}",
            "declared": f"{declared_gbps:g}",
        }
    if node is None:
        check.detail = NO_NODE
        return check
    if node.get("backend") != "cuda":
        check.detail = _not_on_gpus(node)
        return check
    weakest, bus = _weakest_pair(node), _bus(node)
    parts = []
    if weakest is not None:
        parts.append(
            WEAKEST_PAIR
            % {"src": weakest["src"], "dst": weakest["dst"], "gbps": f"{weakest['median']:.1f}"}
        )
    if bus is not None:
        parts.append(BUS_BANDWIDTH % {"gbps": f"{bus['busbw_GBps']:.1f}", "ranks": bus["ranks"]})
    if not parts:
        check.detail = NO_PAIRS
        return check
    figure = weakest["median"] if weakest is not None else bus["busbw_GBps"]  # type: ignore[index]
    if not per_direction:
        check.measured = "; ".join(parts)
        check.detail = NO_DECLARED_BANDWIDTH
        return check
    fraction = figure / per_direction
    parts.append(OF_DECLARED % {"fraction": _pct(fraction), "per_direction": f"{per_direction:g}"})
    check.measured = "; ".join(parts)
    if fraction >= BANDWIDTH_PASS:
        check.status = PASS
    else:
        check.status = WARN if fraction >= BANDWIDTH_WARN else FAIL
    check.detail = GRADED_ON_PAIRS if weakest is not None else GRADED_ON_BUS
    return check


def check_integrity(node: dict | None) -> Check:
    check = Check(
        "interconnect.integrity",
        GROUP,
        INTEGRITY_TITLE,
        NOT_MEASURED,
        expected=INTEGRITY_EXPECTED,
        tolerance=INTEGRITY_TOLERANCE % {"tolerance": f"{INTEGRITY_REL_TOLERANCE:g}"},
        source=INTEGRITY_SOURCE,
    )
    if node is None:
        check.detail = NO_NODE
        return check
    if node.get("backend") != "cuda":
        check.detail = _not_on_gpus(node)
        return check
    runs = [r for r in (node.get("integrity") or {}).get("runs") or [] if r.get("repeats")]
    if not runs:
        check.detail = NO_REPEATS
        return check
    problems, warnings = [], []
    for run in runs:
        if run["distinct"] > 1:
            problems.append(
                REPEATS_DISAGREE
                % {"device": run["device"], "distinct": run["distinct"], "repeats": run["repeats"]}
            )
    reference = runs[0]
    for run in runs[1:]:
        if run["first"] == reference["first"]:
            continue
        diff = run.get("max_rel_diff")
        values = {
            "device": run["device"],
            "reference": reference["device"],
            "diff": f"{diff:.1e}" if isinstance(diff, int | float) else "?",
        }
        if not isinstance(diff, int | float) or diff > INTEGRITY_REL_TOLERANCE:
            problems.append(CARDS_DIFFER % values)
        else:
            warnings.append(CARDS_ROUND % values)
    repeats = min(r["repeats"] for r in runs)
    values = {"repeats": repeats, "cards": len(runs)}
    if not problems and not warnings:
        check.status, check.measured = PASS, REPEATS_AGREE % values
        return check
    check.status = FAIL if problems else WARN
    check.measured = RESULTS_DIFFER % values
    check.detail = " ".join(problems + warnings)
    return check

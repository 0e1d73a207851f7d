"""Network: measured RTT against the case's latency budget (seed 000 §4).

"If the measured round trip already takes more than half the budget, deploy
closer to the users first rather than squeezing the model."
"""

from apps.evidence.rules import NOT_MEASURED, PASS, WARN, Check, Context, Facts

SOURCE = "latency budget: a round trip over half the budget means serving from closer"


def checks(facts: Facts, context: Context) -> list[Check]:
    return [check_rtt(facts.netprobe, context.latency_target_ms)]


def check_rtt(probes: list[dict], target_ms: float | None) -> Check:
    check = Check(
        "network.rtt",
        "network",
        "Round-trip time against the latency budget",
        NOT_MEASURED,
        expected=f"≤ half of the {target_ms:g} ms budget ({target_ms / 2:g} ms)"
        if target_ms
        else "no latency budget in the case's network plan",
        tolerance="over half the budget is a finding; any loss is a finding",
        source=SOURCE,
    )
    measured = [p for p in probes if p["rtt_ms"].get("n")]
    if not measured:
        check.detail = "No network probe in the bundle."
        return check
    worst = max(measured, key=lambda p: p["rtt_ms"]["p50"])
    rtt = worst["rtt_ms"]["p50"]
    check.measured = f"{rtt:.1f} ms median to {worst['host']} (n = {worst['rtt_ms']['n']})"
    lossy = [p for p in probes if p.get("loss")]
    problems = [f"{p['host']}: {p['loss']:.0%} of connects failed" for p in lossy]
    if target_ms:
        share = rtt / target_ms
        check.measured += f", {share:.0%} of the budget"
        if rtt * 2 > target_ms:
            problems.append(
                f"RTT takes {share:.0%} of the {target_ms:g} ms budget: serve from a region "
                "closer to the users instead of squeezing the model."
            )
    elif not problems:
        check.detail = "RTT measured; the case's network plan has no latency budget to hold it to."
        return check
    check.status = WARN if problems else PASS
    check.detail = " ".join(problems)
    return check

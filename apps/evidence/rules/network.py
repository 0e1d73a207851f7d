"""Network: measured RTT against the case's latency budget (docs/rules/access.md#latency-budget).

"If the measured round trip already takes more than half the budget, deploy
closer to the users first rather than squeezing the model."
"""

from apps.evidence.rules import NOT_MEASURED, PASS, WARN, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

# Stored in English and worded for the reader where shown (apps.evidence.wording).
SOURCE = phrase("latency budget: a round trip over half the budget means serving from closer")
HALF_BUDGET = phrase("≤ half of the %(budget)s ms budget (%(half)s ms)")
NO_BUDGET = phrase("no latency budget in the case's network plan")
MEDIAN = phrase("%(rtt)s ms median to %(host)s (n = %(n)s)")
MEDIAN_SHARE = phrase("%(rtt)s ms median to %(host)s (n = %(n)s), %(share)s of the budget")
LOSS = phrase("%(host)s: %(loss)s of connects failed")
TOO_FAR = phrase(
    "RTT takes %(share)s of the %(budget)s ms budget: serve from a region closer to the users "
    "instead of squeezing the model."
)


def checks(facts: Facts, context: Context) -> list[Check]:
    return [check_rtt(facts.netprobe, context.latency_target_ms)]


def check_rtt(probes: list[dict], target_ms: float | None) -> Check:
    check = Check(
        "network.rtt",
        "network",
        phrase("Round-trip time against the latency budget"),
        NOT_MEASURED,
        expected=HALF_BUDGET % {"budget": f"{target_ms:g}", "half": f"{target_ms / 2:g}"}
        if target_ms
        else NO_BUDGET,
        tolerance=phrase("over half the budget is a finding; any loss is a finding"),
        source=SOURCE,
    )
    measured = [p for p in probes if p["rtt_ms"].get("n")]
    if not measured:
        check.detail = phrase("No network probe in the bundle.")
        return check
    worst = max(measured, key=lambda p: p["rtt_ms"]["p50"])
    rtt = worst["rtt_ms"]["p50"]
    values = {"rtt": f"{rtt:.1f}", "host": worst["host"], "n": worst["rtt_ms"]["n"]}
    check.measured = MEDIAN % values
    lossy = [p for p in probes if p.get("loss")]
    problems = [LOSS % {"host": p["host"], "loss": f"{p['loss']:.0%}"} for p in lossy]
    if target_ms:
        share = rtt / target_ms
        check.measured = MEDIAN_SHARE % {**values, "share": f"{share:.0%}"}
        if rtt * 2 > target_ms:
            problems.append(TOO_FAR % {"share": f"{share:.0%}", "budget": f"{target_ms:g}"})
    elif not problems:
        check.detail = phrase(
            "RTT measured; the case's network plan has no latency budget to hold it to."
        )
        return check
    check.status = WARN if problems else PASS
    check.detail = " ".join(problems)
    return check

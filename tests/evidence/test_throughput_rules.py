"""Throughput at the SLO: the rate search recomputed from its raw requests and judged against
the case's service levels and the declared throughput (docs/rules/evidence.md)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from apps.evidence import recompute
from apps.evidence.rules import Context, Facts, throughput
from apps.evidence.rules.composition import RATESEARCH, Contribution, compose, section_of
from tests.evidence.ratesearch_bundles import (
    STEP2_GOODPUT_REQ_S,
    STEP2_GOODPUT_TOK_S,
    ratesearch_result,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SLO = {"p95_ttft_ms": 1500, "error_rate_pct": Decimal("0.5"), "peak_memory_pct": 90}


def judged(result=None, *, slo=SLO, **declared) -> dict:
    rates, _disagreements = recompute.ratesearch(result or ratesearch_result())
    checks = throughput.checks(Facts(ratesearch=rates), Context(declared=declared, slo=slo))
    return {c.key: c for c in checks}


def test_the_server_recomputes_each_step_from_its_requests():
    rates, disagreements = recompute.ratesearch(ratesearch_result())
    assert disagreements == []
    step = rates["steps"][1]
    assert step["offered_rps"] == pytest.approx(20.0)
    assert step["ttft_ms"]["p95"] == pytest.approx(900.0) and step["ttft_ms"]["n"] == 130
    assert step["goodput_req_s"] == pytest.approx(STEP2_GOODPUT_REQ_S)
    assert step["goodput_tok_s"] == pytest.approx(STEP2_GOODPUT_TOK_S)


@pytest.mark.parametrize(
    "requests,tokens,expected",
    [
        ("15", "120", ("pass", "pass")),  # at least the declared figure
        (f"{STEP2_GOODPUT_REQ_S * 1.05:.2f}", "150", ("warn", "warn")),  # within 10 % below
        ("25", "300", ("fail", "fail")),  # more than 10 % below
    ],
)
def test_the_declared_throughput_against_the_goodput_at_the_slo(requests, tokens, expected):
    checks = judged(
        throughput_requests_per_s=Decimal(requests), throughput_tokens_per_s=Decimal(tokens)
    )
    rate = checks[throughput.RATE_KEY]
    assert rate.status == "pass"
    assert rate.measured.startswith("20.00 req/s offered, goodput 17.36 req/s")
    statuses = (checks[throughput.REQUESTS_KEY].status, checks[throughput.TOKENS_KEY].status)
    assert statuses == expected
    assert checks[throughput.REQUESTS_KEY].measured == "17.36 requests/s at 20.00 req/s offered"
    assert "vLLM's bench serve" in checks[throughput.REQUESTS_KEY].source
    assert "MLPerf Inference's server scenario" in checks[throughput.REQUESTS_KEY].source


def test_the_case_sets_the_slo_not_the_run():
    """A case stricter than the run's own limit: the 20/s step no longer holds."""
    checks = judged(slo={**SLO, "p95_ttft_ms": 800}, throughput_requests_per_s=Decimal("15"))
    assert checks[throughput.RATE_KEY].measured.startswith("10.00 req/s offered")
    assert checks[throughput.REQUESTS_KEY].status == "fail"


def test_errors_past_the_case_limit_fail_a_step():
    checks = judged(ratesearch_result(errors=1), throughput_requests_per_s=Decimal("1"))
    # One error in 130 is 0.77 %, over the 0.5 % limit, at every rate: none holds.
    assert checks[throughput.RATE_KEY].status == "fail"
    assert checks[throughput.RATE_KEY].measured == "none of 3 rates (lowest 10.00 req/s)"
    assert checks[throughput.REQUESTS_KEY].status == "fail"


@pytest.mark.parametrize(
    "result,declared,detail",
    [
        (None, {}, "No open-loop rate search"),  # the step did not run
        ("few", {"throughput_requests_per_s": Decimal("1")}, "enough requests for a P95"),
        ("ok", {}, "states no figure"),  # nothing declared: the goodput is shown, not judged
        ("uncapped", {"throughput_requests_per_s": Decimal("25")}, "capacity is above it"),
    ],
)
def test_not_measured_says_why(result, declared, detail):
    results = {
        "few": ratesearch_result(n=129),
        "ok": ratesearch_result(),
        "uncapped": ratesearch_result(steps=((10.0, 100.0, 20.0), (20.0, 900.0, 20.0))),
    }
    if result is None:
        checks = {c.key: c for c in throughput.checks(Facts(), Context(declared=declared, slo=SLO))}
    else:
        checks = judged(results[result], **declared)
    check = checks[throughput.REQUESTS_KEY]
    assert check.status == "not_measured"
    assert detail in check.detail
    if result == "ok":
        assert check.measured == "17.36 requests/s at 20.00 req/s offered"


def _contribution(n: int, hours: int, checks: list[dict], headline: dict) -> Contribution:
    at = T0 + timedelta(hours=hours)
    return Contribution(
        bundle=n, sha256=f"{n:064x}", received_at=at, measured_at=at, checks=tuple(checks),
        headline=headline,
    )  # fmt: skip


def test_the_checks_compose_from_the_newest_rate_search():
    assert {section_of(key) for key in (throughput.RATE_KEY, throughput.TOKENS_KEY)} == {RATESEARCH}
    assert section_of("service.ttft_p95.c1") == "loadtest"
    measured = [c.as_dict() for c in judged(throughput_requests_per_s=Decimal("15")).values()] + [
        {"key": "service.ttft_p95.c1", "status": "pass", "measured": "90 ms"}
    ]
    unmeasured = [
        c.as_dict() for c in judged(ratesearch_result(n=10), throughput_requests_per_s=1).values()
    ] + [{"key": "service.ttft_p95.c1", "status": "fail", "measured": "2,000 ms"}]
    goodput = {"rate_rps": 20.0, "goodput_req_s": 17.36}
    search = _contribution(1, 0, measured, {"goodput_at_slo": goodput})
    # A newer load test without enough rate-search requests erases nothing of the search.
    ladder = _contribution(2, 1, unmeasured, {"goodput_at_slo": None})
    composed = compose([search, ladder], placeholders=ladder)
    assert composed.sources[RATESEARCH]["bundle"] == 1
    assert composed.sources["loadtest"]["bundle"] == 2
    by_key = {c["key"]: c for c in composed.checks}
    assert by_key[throughput.REQUESTS_KEY]["status"] == "pass"
    assert by_key[throughput.REQUESTS_KEY]["bundle"] == 1
    assert by_key["service.ttft_p95.c1"]["bundle"] == 2
    assert composed.headline["goodput_at_slo"] == goodput

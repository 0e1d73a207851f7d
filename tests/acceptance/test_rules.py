"""The four layers' criteria, table-driven, with the edges of issue #9
(docs/rules/acceptance.md)."""

from decimal import Decimal

import pytest

from apps.acceptance import rules
from apps.acceptance.rules import FAILED, IN_PROGRESS, NOT_MEASURED, PASSED
from tests.acceptance.measures import THREE_FAULTS, correctness, fault, ladder, level, soak

SLO = rules.Slo(p95_ttft_ms=1500, error_rate_pct=0.5, peak_memory_pct=90)


@pytest.mark.parametrize(
    "measurement,expected",
    [
        (soak(minutes=30), PASSED),
        # Issue #9: one restart at minute 29 fails the 30-minute rule.
        (soak(minutes=30, restarts=[29]), FAILED),
        (soak(minutes=29.9), FAILED),
        # Continuous means continuous: a restart anywhere fails, even with 31 clean
        # minutes after it.
        (soak(minutes=60, restarts=[29]), FAILED),
        (soak(minutes=60, restarts=[59.5]), FAILED),
        # An outage anywhere fails as a restart does.
        (soak(minutes=41, outages=[(20, 21)]), FAILED),
        (soak(minutes=52, outages=[(20, 21)]), FAILED),
        (soak(minutes=30.0), PASSED),
        (None, NOT_MEASURED),
    ],
)
def test_thirty_minutes_without_a_restart(measurement, expected):
    assert rules.soak_criterion(measurement, 30).status == expected


def test_soak_window_is_reported_measured_against_required():
    criterion = rules.soak_criterion(soak(minutes=60, restarts=[29], outages=[(40, 41)]), 30)
    assert criterion.status == FAILED
    assert criterion.measured == (
        "29.0 min longest clean stretch of a 60.0 min window (1 restarts, 1 outages); "
        "events: restart at 29.0 min; outage 40.0–41.0 min"
    )
    assert "required ≥ 30 min with no restart, outage or vanished GPU" in criterion.explanation


def test_the_soak_report_speaks_chinese():
    from django.utils import translation

    with translation.override("zh-hans"):
        criterion = rules.soak_criterion(soak(minutes=60, restarts=[29], outages=[(40, 41)]), 30)
    assert criterion.title == "无重启连续运行"
    assert criterion.measured == (
        "在 60.0 分钟的窗口内，最长无故障时段为 29.0 分钟（重启 1 次，中断 1 次）"
        "；事件：第 29.0 分钟重启; 第 40.0–41.0 分钟中断"
    )
    assert criterion.required == "≥ 30 分钟，全程无重启、无中断、无 GPU 消失"


@pytest.mark.parametrize(
    "measurement,expected",
    [
        (soak(checks=(180, 180)), PASSED),
        (soak(checks=(180, 179)), FAILED),
        (soak(checks=(0, 0)), NOT_MEASURED),
        (None, NOT_MEASURED),
    ],
)
def test_health_checks(measurement, expected):
    assert rules.health_criterion(measurement).status == expected


@pytest.mark.parametrize(
    "measurement,expected",
    [
        (soak(), PASSED),
        (soak(xid=[(600.0, "GPU-1", 79)]), FAILED),
        (soak(ecc=1), FAILED),
        (None, NOT_MEASURED),
        # Unreadable counters or kernel log prove nothing: not measured, never a pass...
        (soak(ecc=None), NOT_MEASURED),
        (soak(xid_measured=False), NOT_MEASURED),
        # ...but an error seen by the part that could be read still fails.
        (soak(ecc=None, xid=[(60.0, "GPU-1", 48)]), FAILED),
        (soak(xid_measured=False, ecc=2), FAILED),
    ],
)
def test_gpu_errors_during_soak(measurement, expected):
    assert rules.gpu_errors_criterion(measurement).status == expected


def _checks(*statuses):
    keys = rules.VERSION_KEYS + rules.ENVIRONMENT_KEYS
    return tuple(rules.VerificationCheck(k, k, s, "x", "y") for k, s in zip(keys, statuses))


@pytest.mark.parametrize(
    "statuses,versions,environment",
    [
        (("pass",) * 5, PASSED, PASSED),
        (("fail", "pass", "pass", "pass", "pass"), FAILED, PASSED),
        # A warning is not green (docs/rules/acceptance.md).
        (("pass", "pass", "warn", "pass", "pass"), PASSED, FAILED),
        (("pass", "pass", "pass", "not_measured", "pass"), PASSED, NOT_MEASURED),
        ((), NOT_MEASURED, NOT_MEASURED),
    ],
)
def test_versions_and_environment_from_the_verification(statuses, versions, environment):
    inputs = rules.AcceptanceInputs(
        criteria=rules.PlanCriteria(), slo=SLO, soak=soak(), verification_checks=_checks(*statuses)
    )
    by_key = {c.key: c.status for c in rules.connectivity_layer(inputs).criteria}
    assert (by_key["versions"], by_key["environment"]) == (versions, environment)


@pytest.mark.parametrize(
    "run,required,expected",
    [
        (correctness(100, 100), Decimal("100"), PASSED),
        # Issue #9: a correctness set at 99 % fails the 100 % rule.
        (correctness(99, 100), Decimal("100"), FAILED),
        (correctness(99, 100), Decimal("99"), PASSED),
        # Only the core set counts.
        (correctness(20, 20, extra_non_core_failures=3), Decimal("100"), PASSED),
        (correctness(0, 0, extra_non_core_failures=3), Decimal("100"), NOT_MEASURED),
        (None, Decimal("100"), NOT_MEASURED),
    ],
)
def test_core_set_pass_rate(run, required, expected):
    assert rules.correctness_criterion(run, required).status == expected


def test_correctness_failure_names_the_mismatches():
    criterion = rules.correctness_criterion(correctness(99, 100), Decimal("100"))
    assert criterion.measured.startswith("99 of 100 (99.00 %)")
    assert "core-099 (answer differs)" in criterion.reason


@pytest.mark.parametrize(
    "levels,safe",
    [
        ([level(1), level(4), level(8), level(16), level(32)], 32),
        ([level(1), level(4), level(8, p95=1600), level(16), level(32)], 4),
        ([level(1), level(4, errors=0.005)], 1),  # exactly 0.5 % is not below 0.5 %
        ([level(1, n=12), level(4), level(8, p95=1500)], 4),  # too few samples: not graded
        ([level(1, p95=2000)], None),
        ([level(1), level(4, memory=91.0)], 1),
        ([], None),
    ],
)
def test_safe_operating_level(levels, safe):
    assert rules.safe_operating_level(levels, SLO) == safe


@pytest.mark.parametrize(
    "measurement,required,expected",
    [
        (ladder(level(1), level(4), level(8), level(16), level(32)), None, PASSED),
        (ladder(level(1), level(4), level(8), level(16), level(32)), 16, PASSED),
        (ladder(level(1), level(4), level(8), level(16, p95=1700), level(32)), 16, FAILED),
        (ladder(level(1, p95=1700)), None, FAILED),
        (ladder(level(1, n=10)), None, NOT_MEASURED),
        (None, None, NOT_MEASURED),
    ],
)
def test_safe_level_criterion(measurement, required, expected):
    assert rules.safe_level_criterion(measurement, SLO, required).status == expected


def test_ladder_must_be_measured_in_full():
    partial = ladder(level(1), level(4), level(8))
    criterion = rules.ladder_criterion(partial, (1, 4, 8, 16, 32))
    assert criterion.status == NOT_MEASURED
    assert "16 (not run; a P95 needs at least 130 requests), 32 (not run" in criterion.reason
    full = ladder(*(level(c) for c in (1, 4, 8, 16, 32)))
    assert rules.ladder_criterion(full, (1, 4, 8, 16, 32)).status == PASSED


@pytest.mark.parametrize(
    "samples,status,reason",
    [
        # Too few for a P95: not measured, never passed or failed, with what is missing.
        (0, NOT_MEASURED, "1 (0 requests; a P95 needs at least 130: send 130 more)"),
        (1, NOT_MEASURED, "1 (1 request; a P95 needs at least 130: send 129 more)"),
        (12, NOT_MEASURED, "1 (12 requests; a P95 needs at least 130: send 118 more)"),
        (129, NOT_MEASURED, "1 (129 requests; a P95 needs at least 130: send 1 more)"),
        (130, PASSED, ""),
        (400, PASSED, ""),
    ],
)
def test_a_level_below_the_p95_minimum_is_not_measured_and_says_how_many_more(
    samples, status, reason
):
    criterion = rules.ladder_criterion(ladder(level(1, n=samples)), (1,))
    assert criterion.status == status
    assert criterion.reason == (
        f"levels not measured with enough samples: {reason}" if reason else ""
    )


@pytest.mark.parametrize(
    "samples,p95,holds",
    [(129, 100.0, None), (129, 9000.0, None), (130, 100.0, True), (130, 9000.0, False)],
)
def test_a_p95_from_too_few_samples_neither_passes_nor_fails(samples, p95, holds):
    assert rules.level_holds(level(1, n=samples, p95=p95), SLO) is holds
    state = rules.safe_level_criterion(ladder(level(1, n=samples, p95=p95)), SLO, None)
    assert state.status == {None: NOT_MEASURED, True: PASSED, False: FAILED}[holds]


def test_performance_layer_is_in_progress_without_memory_samples():
    inputs = rules.AcceptanceInputs(
        criteria=rules.PlanCriteria(),
        slo=SLO,
        performance=ladder(*(level(c) for c in (1, 4, 8, 16, 32))),
    )
    state = rules.performance_layer(inputs)
    assert state.status == IN_PROGRESS
    assert any("Peak device memory" in r for r in state.reasons)
    with_memory = rules.AcceptanceInputs(
        criteria=rules.PlanCriteria(),
        slo=SLO,
        performance=ladder(*(level(c, memory=70.0) for c in (1, 4, 8, 16, 32))),
    )
    assert rules.performance_layer(with_memory).status == PASSED


@pytest.mark.parametrize(
    "results,expected",
    [
        # Issue #9: exactly three of the required kinds, all resumed, pass…
        (THREE_FAULTS, PASSED),
        # …and one with duplicated data fails.
        ((fault("network"), fault("node_killed"), fault("maintenance", duplicated=True)), FAILED),
        ((fault("network"), fault("node_killed", resumed=False), fault("maintenance")), FAILED),
        ((fault("network"), fault("node_killed"), fault("maintenance", outcome="failed")), FAILED),
        # Two of three done, or three without a maintenance window: still in progress.
        ((fault("network"), fault("node_killed")), IN_PROGRESS),
        ((fault("network"), fault("network"), fault("node_killed")), IN_PROGRESS),
        ((fault("network"), fault("node_killed"), fault("maintenance", resumed=None)), IN_PROGRESS),
        ((), IN_PROGRESS),
    ],
)
def test_stability_and_recovery(results, expected):
    inputs = rules.AcceptanceInputs(criteria=rules.PlanCriteria(), slo=SLO, results=results)
    assert rules.stability_layer(inputs).status == expected


def test_nothing_measured_is_in_progress_never_a_pass():
    layers = rules.evaluate(rules.AcceptanceInputs(criteria=rules.PlanCriteria(), slo=SLO))
    assert [layer.status for layer in layers] == [IN_PROGRESS] * 4 + [rules.NOT_APPLICABLE]
    assert all(c.status == NOT_MEASURED for layer in layers[:4] for c in layer.criteria)
    assert rules.overall_status(layers) == IN_PROGRESS


def test_engineers_failed_check_fails_a_layer_but_a_passed_one_does_not_replace_measurement():
    failed = rules.ResultFacts("correctness", "failed", "tokenizer spot check")
    passed = rules.ResultFacts("connectivity", "passed", "ran env self-check by hand")
    inputs = rules.AcceptanceInputs(
        criteria=rules.PlanCriteria(), slo=SLO, results=(failed, passed)
    )
    assert rules.correctness_layer(inputs).status == FAILED
    assert rules.connectivity_layer(inputs).status == IN_PROGRESS


def _all_passing(**overrides):
    values = dict(
        criteria=rules.PlanCriteria(),
        slo=SLO,
        soak=soak(minutes=45),
        correctness=correctness(50, 50),
        performance=ladder(*(level(c, memory=60.0) for c in (1, 4, 8, 16, 32))),
        verification_checks=_checks(*("pass",) * 5),
        results=THREE_FAULTS,
    )
    values.update(overrides)
    return rules.AcceptanceInputs(**values)


def test_overall_passes_only_when_every_layer_passes():
    assert rules.overall_status(rules.evaluate(_all_passing())) == PASSED
    one_restart = _all_passing(soak=soak(minutes=30, restarts=[29]))
    layers = rules.evaluate(one_restart)
    assert rules.overall_status(layers) == FAILED
    assert layers[0].reasons[0].startswith("Restart-free soak: measured 29.0 min")
    assert rules.overall_status(rules.evaluate(_all_passing(correctness=None))) == IN_PROGRESS


@pytest.mark.parametrize(
    "text,expected",
    [("1,4,8,16,32", (1, 4, 8, 16, 32)), (" 8, 1 ,4,4", (1, 4, 8))],
)
def test_parse_ladder(text, expected):
    assert rules.parse_ladder(text) == expected


@pytest.mark.parametrize("text", ["", "1,,4", "0,1", "a", "-1"])
def test_parse_ladder_refuses(text):
    with pytest.raises(ValueError):
        rules.parse_ladder(text)

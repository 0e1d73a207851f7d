"""The fifth layer, re-run after maintenance (docs/rules/evidence.md#baseline: equal to
or better than the pinned baseline), judged on plain values: not applicable until a
baseline is pinned and a run follows it, then failed by any regression and passed only
when every group the baseline measured holds within the plan's tolerances."""

import pytest

from apps.acceptance import rules
from apps.acceptance.rules import FAILED, IN_PROGRESS, NOT_APPLICABLE, NOT_MEASURED, PASSED
from apps.evidence.rules import baseline as baseline_rules
from tests.acceptance.measures import THREE_FAULTS
from tests.acceptance.test_rules import _all_passing
from tests.evidence.test_baselines import answers, level, summary

BASELINE = summary(level(4), matmul=700.0, correctness=answers(a=True, b=True))


def rerun(new: dict | None) -> rules.RerunMeasurement:
    comparison = None if new is None else baseline_rules.compare(BASELINE, new)
    return rules.RerunMeasurement(1, "a" * 64, 2 if new else None, "b" * 64, comparison)


def maintenance(**overrides) -> rules.LayerState:
    return rules.evaluate(_all_passing(**overrides))[-1]


def test_without_a_baseline_or_a_run_after_it_the_layer_holds_nothing_back():
    for measured in (None, rerun(None)):
        layers = rules.evaluate(_all_passing(rerun=measured))
        assert layers[-1].layer == rules.MAINTENANCE
        assert layers[-1].status == NOT_APPLICABLE and layers[-1].reasons == []
        assert rules.overall_status(layers) == PASSED


def test_a_failed_check_an_engineer_recorded_fails_the_layer_even_without_a_baseline():
    recorded = rules.ResultFacts("maintenance", "failed", "Smoke test after the window")
    layer = maintenance(results=(*THREE_FAULTS, recorded))
    assert layer.status == FAILED
    assert layer.reasons == [
        "Engineers' recorded checks: measured 0 of 1 passed, required every "
        "one passed — Smoke test after the window"
    ]


# (what the re-run measured, the layer's status, a reason it gives)
TABLE = [
    ("equal", summary(level(4), matmul=690.0, correctness=answers(a=True, b=True)), PASSED, ""),
    (
        "slower",
        summary(level(4, tok_s=700.0), matmul=700.0, correctness=answers(a=True, b=True)),
        FAILED,
        "Output tokens/s at concurrency 4 regressed: 1,000.00 tok/s in the baseline, "
        "700.00 tok/s now",
    ),
    (
        "one wrong answer",
        summary(level(4), matmul=700.0, correctness=answers(a=True, b=False)),
        FAILED,
        "Answer b regressed: right in the baseline, wrong now",
    ),
    (
        "no answers",
        summary(level(4), matmul=700.0),
        IN_PROGRESS,
        "Answers against the baseline: not measured — not measured in the re-run",
    ),
    (
        "no benchmark",
        summary(level(4), correctness=answers(a=True, b=True)),
        IN_PROGRESS,
        "Benchmarks against the baseline: not measured — not measured in the re-run",
    ),
]


@pytest.mark.parametrize("name,new,status,reason", TABLE, ids=[t[0] for t in TABLE])
def test_equal_or_better_than_the_baseline(name, new, status, reason):
    layer = maintenance(rerun=rerun(new))
    assert layer.status == status, name
    if reason:
        assert any(reason in text for text in layer.reasons), layer.reasons
    overall = rules.overall_status(rules.evaluate(_all_passing(rerun=rerun(new))))
    assert overall == status


def test_the_required_value_states_the_tolerances():
    layer = maintenance(rerun=rerun(BASELINE))
    [load] = [c for c in layer.criteria if c.key == "rerun_load"]
    assert load.status == PASSED and load.measured == "4 metrics equal or better"
    assert load.required == (
        "equal or better: throughput at most 10 % lower, latency at most 10 % higher, "
        "errors at most 0.1 percentage points higher"
    )
    assert all(c.status != NOT_MEASURED for c in layer.criteria)

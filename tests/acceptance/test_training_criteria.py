"""The plan's training thresholds as criteria: a blank one is none, a set one passes, fails
or waits on the reference training step the server recomputed; and the plan form."""

from dataclasses import replace
from decimal import Decimal

import pytest
from django.urls import reverse

from apps.acceptance import rules
from tests.acceptance.factories import approved_offer, make_plan

MEASURED = rules.TrainingMeasurement(
    bundle_id=7,
    bundle_sha256="b" * 64,
    backend="cuda",
    one_card_samples_per_s=100.0,
    cards=8,
    per_card_samples_per_s=92.5,
    scaling_efficiency=0.925,
    checkpoint_bytes=2_632_182_457,
    checkpoint_save_s=1.65,
    checkpoint_restore_s=0.91,
    restored_matches=True,
)
SLO = rules.Slo(p95_ttft_ms=1000, error_rate_pct=1, peak_memory_pct=90)


def _layers(training, **thresholds) -> dict:
    inputs = rules.AcceptanceInputs(
        criteria=rules.PlanCriteria(**thresholds), slo=SLO, training=training
    )
    return {layer.layer: layer for layer in rules.evaluate(inputs)}


def _criteria(training, **thresholds) -> dict:
    return {c.key: c for layer in _layers(training, **thresholds).values() for c in layer.criteria}


ALL = {
    "training_min_samples_per_s_per_card": Decimal("90"),
    "training_min_scaling_pct": Decimal("90"),
    "checkpoint_max_save_s": Decimal("2"),
    "checkpoint_max_restore_s": Decimal("1"),
}
KEYS = ("training_throughput", "training_scaling", "checkpoint_save", "checkpoint_restore")


def test_a_plan_without_training_thresholds_has_no_training_criteria():
    found = _criteria(MEASURED)
    assert not set(KEYS) & set(found)
    assert not set(KEYS) & set(_criteria(None))


def test_thresholds_met_pass_in_their_layers():
    layers = _layers(MEASURED, **ALL)
    performance = {c.key: c for c in layers["performance"].criteria}
    stability = {c.key: c for c in layers["stability"].criteria}
    assert performance["training_throughput"].status == rules.PASSED
    assert performance["training_scaling"].status == rules.PASSED
    assert performance["training_scaling"].measured == "92.5 % over 8 cards"
    assert stability["checkpoint_save"].status == rules.PASSED
    assert stability["checkpoint_save"].measured == "1.65 s for 2.63 GB"
    assert stability["checkpoint_restore"].status == rules.PASSED


@pytest.mark.parametrize(
    "key,threshold,value",
    [
        ("training_throughput", "training_min_samples_per_s_per_card", Decimal("93")),
        ("training_scaling", "training_min_scaling_pct", Decimal("95")),
        ("checkpoint_save", "checkpoint_max_save_s", Decimal("1.5")),
        ("checkpoint_restore", "checkpoint_max_restore_s", Decimal("0.9")),
    ],
)
def test_a_threshold_missed_fails_its_layer(key, threshold, value):
    found = _criteria(MEASURED, **{threshold: value})
    assert found[key].status == rules.FAILED
    assert "required" in found[key].explanation


def test_without_a_measurement_each_threshold_waits_and_holds_its_layer_in_progress():
    layers = _layers(None, **ALL)
    assert layers["performance"].status == rules.IN_PROGRESS
    found = _criteria(None, **ALL)
    for key in KEYS:
        assert found[key].status == rules.NOT_MEASURED
        assert found[key].reason == "no reference training step run yet"


def test_a_run_on_the_cpu_measures_nothing_of_the_cards():
    found = _criteria(replace(MEASURED, backend="cpu"), **ALL)
    assert {found[k].status for k in KEYS} == {rules.NOT_MEASURED}
    assert found["training_throughput"].reason == (
        "the training step ran on the CPU, not on the cards"
    )


def test_one_card_judges_its_own_rate_and_has_nothing_to_scale():
    one = replace(MEASURED, cards=None, per_card_samples_per_s=None, scaling_efficiency=None)
    found = _criteria(one, **ALL)
    assert found["training_throughput"].status == rules.PASSED
    assert found["training_throughput"].measured == "100.0 samples/s per card on 1 card"
    assert found["training_scaling"].status == rules.NOT_MEASURED
    assert found["training_scaling"].reason == "the run saw one card: nothing to scale"


def test_an_unsound_run_or_a_restore_that_differs_fails_whatever_the_figures():
    found = _criteria(replace(MEASURED, sound=False, restored_matches=False), **ALL)
    assert found["training_throughput"].status == rules.FAILED
    assert "not a number" in found["training_throughput"].reason
    assert found["checkpoint_restore"].status == rules.FAILED
    assert found["checkpoint_save"].status == rules.PASSED


def test_no_checkpoint_written_leaves_the_checkpoint_thresholds_unmeasured():
    found = _criteria(replace(MEASURED, checkpoint_save_s=None, checkpoint_restore_s=None), **ALL)
    assert found["checkpoint_save"].reason == "the training step wrote no checkpoint"
    assert found["checkpoint_restore"].status == rules.NOT_MEASURED


@pytest.mark.django_db
def test_the_plan_form_takes_the_thresholds_and_the_plan_shows_them(browser_as, people, tariq):
    _case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    url = reverse("acceptance:plan_edit", kwargs={"pk": plan.pk})
    form = browser_as("tariq").get(url).content.decode()
    assert 'name="training_min_samples_per_s_per_card"' in form
    body = {
        "soak_minutes": 30,
        "expected_versions": "",
        "correctness_pass_pct": "100",
        "ladder": "1,4,8,16,32",
        "fault_minimum": 3,
        "training_min_samples_per_s_per_card": "120",
        "training_min_scaling_pct": "90",
        "checkpoint_max_save_s": "",
        "checkpoint_max_restore_s": "30",
        "notes": "",
        "change_reason": "Training acceptance",
        "version": 1,
    }
    refused = browser_as("tariq").post(url, {**body, "training_min_scaling_pct": "120"})
    assert refused.status_code == 200
    assert "less than or equal to 100" in refused.content.decode()
    assert browser_as("tariq").post(url, body).status_code == 302
    plan.refresh_from_db()
    assert plan.training_min_samples_per_s_per_card == Decimal("120")
    assert plan.checkpoint_max_save_s is None
    page = browser_as("tariq").get(reverse("acceptance:plan", kwargs={"pk": plan.pk}))
    text = page.content.decode()
    assert "at least 120 samples/s per card over every card" in text
    assert "checkpoint restored within 30 s, equal to what was saved" in text
    assert "Training samples/s per card" in text  # the criterion, not measured yet
    history = plan.history.order_by("-history_id").first()
    assert history.training_min_scaling_pct == Decimal("90")

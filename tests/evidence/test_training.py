"""The reference training step: the server's figures from the raw step times, its checks,
a spoofed bundle failing on the raw figures alone, composition, and the acceptance plan's
thresholds judged against the measurement through HTTP.

The recorded example (harness/tests/fixtures/constructed, README there) is hand-made in
the harness's exact output format: eight H100 cards training the large reference model.
"""

import copy
import json
from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.evidence import bundle as bundle_reader
from apps.evidence import recompute_train
from apps.evidence.rules import Context, Facts, verify
from apps.evidence.rules.composition import Contribution, compose
from tests.acceptance.factories import approved_offer
from tests.evidence.conftest import HARNESS
from tests.evidence.factories import make_token, serialise

CONSTRUCTED = HARNESS / "tests" / "fixtures" / "constructed"
TRAIN = json.loads((CONSTRUCTED / "train-8x-h100-recorded-example.json").read_text())


def document(train: dict, *, nonce=None) -> dict:
    """A bundle as the harness assembles it, carrying the recorded training step."""
    from diligence_harness.bundle import assemble

    step = {
        "status": "ok",
        "reason": None,
        "started_utc": "2026-01-05T10:00:00.000Z",
        "finished_utc": "2026-01-05T10:02:00.000Z",
        "duration_s": 120.0,
        "result": train,
    }
    return assemble(
        steps={"train": step},
        findings=[],
        artifacts=[],
        argv=["diligence-harness", "train"],
        seeds={},
        case=None,
        nonce=nonce,
        started_utc="2026-01-05T10:00:00.000Z",
    )


def read(doc: dict):
    return bundle_reader.interpret(bundle_reader.read(serialise(doc)))


def checks(train: dict | None) -> dict:
    found = recompute_train.training(train)[0]
    return {c.key: c for c in verify(Facts(training=found), Context())}


# --- the server's figures -------------------------------------------------------------------


def test_samples_per_second_and_scaling_are_recomputed_from_each_ranks_step_times():
    reading = read(document(TRAIN))
    training = reading.summary["training"]
    one_ns = TRAIN["one_card"]["ranks"][0]["step_ns"]
    assert training["one_card"]["samples_per_s"] == pytest.approx(16 * 20 / (sum(one_ns) / 1e9))
    ranks = TRAIN["all_cards"]["ranks"]
    slowest = sum(max(r["step_ns"][i] for r in ranks) for i in range(20))
    every = training["all_cards"]
    assert every["cards"] == 8 and every["samples"] == 8 * 16 * 20
    assert every["samples_per_s"] == pytest.approx(8 * 16 * 20 / (slowest / 1e9))
    assert every["samples_per_s_per_card"] == pytest.approx(every["samples_per_s"] / 8)
    assert training["scaling_efficiency"] == pytest.approx(
        every["samples_per_s"] / (8 * training["one_card"]["samples_per_s"])
    )
    assert 0.92 < training["scaling_efficiency"] < 0.93
    saved = training["checkpoint"]
    size = TRAIN["checkpoint"]["bytes"]
    assert saved["save_s"] == TRAIN["checkpoint"]["save_ns"] / 1e9
    assert saved["restore_GBps"] == pytest.approx(size / TRAIN["checkpoint"]["restore_ns"])
    assert saved["restored_matches"] is True
    assert reading.disagreements == []


def test_a_sound_run_on_the_cards_passes_both_checks():
    found = checks(TRAIN)
    throughput, checkpoint = found["training.throughput"], found["training.checkpoint"]
    assert throughput.status == "pass"
    assert throughput.measured == (
        "92.5 samples/s per card over 8 cards, 99.8 on one card: scaling efficiency 92.7% "
        "(219.3 M-parameter model)"
    )
    assert checkpoint.status == "pass"
    assert checkpoint.measured == (
        "2.63 GB saved in 1.65 s (1.60 GB/s), restored in 0.91 s (2.90 GB/s)"
    )


def test_a_spoofed_training_claim_fails_from_the_raw_timings_alone():
    """The summaries claim twice the samples/s and perfect scaling; the raw step times and
    the checkpoint's digests say otherwise."""
    spoofed = copy.deepcopy(TRAIN)
    every = spoofed["all_cards"]
    every["samples_per_s"] *= 2
    every["samples_per_s_per_card"] *= 2
    every["scaling_efficiency"] = 1.0
    every["cards"] = 16
    spoofed["checkpoint"]["restored_sha256"] = "0" * 64
    reading = read(document(spoofed))
    lies = {(d["where"], d["metric"]) for d in reading.disagreements}
    assert lies == {
        ("train/all_cards", "samples_per_s"),
        ("train/all_cards", "samples_per_s_per_card"),
        ("train/all_cards", "cards"),
        ("train/all_cards", "scaling_efficiency"),
    }
    training = reading.summary["training"]
    assert training["all_cards"]["samples_per_s_per_card"] == pytest.approx(92.45, abs=0.01)
    found = {c.key: c for c in verify(reading.facts, Context())}
    assert found["training.checkpoint"].status == "fail"
    assert "does not bring the run back" in found["training.checkpoint"].detail
    assert found["training.checkpoint"].causes  # the troubleshooting table names causes


@pytest.mark.parametrize(
    "change,words",
    [
        (lambda t: t["all_cards"]["ranks"][2]["loss"].__setitem__(4, None), "1 steps ended"),
        (
            lambda t: t["all_cards"]["ranks"][5].__setitem__("params_sha256", "f" * 64),
            "different parameters",
        ),
    ],
)
def test_a_loss_that_is_not_a_number_or_cards_that_disagree_fail_the_step(change, words):
    broken = copy.deepcopy(TRAIN)
    change(broken)
    check = checks(broken)["training.throughput"]
    assert check.status == "fail" and words in check.detail


def test_a_run_on_the_cpu_or_on_one_card_is_not_judged_as_the_cards():
    cpu = copy.deepcopy(TRAIN) | {"backend": "cpu"}
    check = checks(cpu)["training.throughput"]
    assert check.status == "not_measured" and "Measured on the CPU" in check.detail
    assert check.measured  # shown, not judged
    one = copy.deepcopy(TRAIN) | {"all_cards": None}
    check = checks(one)["training.throughput"]
    assert check.status == "pass" and "One card: nothing to scale." in check.detail
    assert check.measured == "99.8 samples/s on one card (219.3 M-parameter model)"


def test_without_a_training_step_nothing_is_measured():
    found = checks(None)
    assert found["training.throughput"].status == "not_measured"
    assert found["training.checkpoint"].detail == "No checkpoint in the bundle."


def test_figures_that_are_not_numbers_are_not_read():
    odd = copy.deepcopy(TRAIN)
    odd["one_card"]["ranks"][0]["step_ns"] = ["1", True, -5]
    odd["checkpoint"]["bytes"] = "many"
    training, _ = recompute_train.training(odd)
    assert training["one_card"] is None and training["checkpoint"] is None
    assert training["scaling_efficiency"] is None


def _contribution(bundle: int, found: list) -> Contribution:
    from datetime import UTC, datetime, timedelta

    when = datetime(2026, 1, 5, tzinfo=UTC) + timedelta(hours=bundle)
    return Contribution(
        bundle=bundle, sha256=f"{bundle:064x}", received_at=when, measured_at=when,
        checks=tuple(found),
    )  # fmt: skip


def test_a_later_bundle_without_training_keeps_the_earlier_training():
    trained = [
        c.as_dict() for c in verify(Facts(training=recompute_train.training(TRAIN)[0]), Context())
    ]
    untrained = [c.as_dict() for c in verify(Facts(), Context())]
    composed = compose(
        [_contribution(1, trained), _contribution(2, untrained)],
        placeholders=_contribution(2, untrained),
    )
    by_key = {c["key"]: c for c in composed.checks}
    assert by_key["training.throughput"]["bundle"] == 1
    assert by_key["training.checkpoint"]["status"] == "pass"
    assert composed.sources["training"]["bundle"] == 1


# --- through the public API -------------------------------------------------------------------


def _upload(actor, case, offer, train: dict) -> int:
    issued = make_token(actor, case, offer)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issued.token}")
    raw = serialise(document(train, nonce=issued.record.nonce))
    response = client.post("/api/v1/evidence/", data=raw, content_type="application/json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def _criteria(state: dict) -> dict:
    return {c["key"]: c for layer in state["layers"] for c in layer["criteria"]}


@pytest.fixture(scope="module")
def _approved(module_people):
    """priya's case with its first offer approved, built once for the module's tests."""
    return approved_offer(module_people)


@pytest.fixture
def approved(_approved, db):
    """The module's approved case and offer, copies for one test (its writes are undone)."""
    return copy.deepcopy(_approved)


@pytest.mark.django_db
def test_the_plans_thresholds_judge_the_uploaded_training_step(
    approved, people, api_as, browser_as
):
    case, offer = approved
    tariq = api_as("tariq")
    created = tariq.post("/api/v1/acceptance-plans/", {"offer": offer.pk}, format="json")
    assert created.status_code == 201, created.content
    plan = created.json()
    assert plan["training_min_samples_per_s_per_card"] is None
    state = tariq.get(f"/api/v1/acceptance-plans/{plan['id']}/state/").json()
    assert not {"training_throughput", "checkpoint_save"} & set(_criteria(state))  # blank

    thresholds = {
        "training_min_samples_per_s_per_card": "90",
        "training_min_scaling_pct": "95",
        "checkpoint_max_save_s": "2",
        "checkpoint_max_restore_s": "1.5",
        "change_reason": "Training acceptance",
        "version": 1,
    }
    edited = tariq.patch(f"/api/v1/acceptance-plans/{plan['id']}/", thresholds, format="json")
    assert edited.status_code == 200, edited.content
    state = tariq.get(f"/api/v1/acceptance-plans/{plan['id']}/state/").json()
    waiting = _criteria(state)
    assert waiting["training_throughput"]["status"] == "not_measured"
    assert waiting["training_throughput"]["reason"] == "no reference training step run yet"

    bundle = _upload(people["tariq"], case, offer, TRAIN)
    state = tariq.get(f"/api/v1/acceptance-plans/{plan['id']}/state/").json()
    judged = _criteria(state)
    assert judged["training_throughput"]["status"] == "passed"
    assert judged["training_throughput"]["measured"] == "92.5 samples/s per card over 8 cards"
    assert judged["training_scaling"]["status"] == "failed"  # 92.7 % against 95 %
    assert judged["training_scaling"]["measured"] == "92.7 % over 8 cards"
    assert judged["checkpoint_save"]["status"] == "passed"
    assert judged["checkpoint_restore"]["status"] == "passed"
    layers = {layer["layer"]: layer["status"] for layer in state["layers"]}
    assert layers["performance"] == "failed"

    page = browser_as("tariq").get(reverse("acceptance:plan", args=[plan["id"]]))
    text = page.content.decode()
    assert "Training scaling from one card to all" in text
    assert "at least 90 samples/s per card over every card" in text
    bundle_page = browser_as("tariq").get(reverse("evidence:detail", args=[bundle]))
    assert bundle_page.status_code == 200
    body = bundle_page.content.decode()
    assert "Reference training step" in body and "the restored state equals the saved one" in body


@pytest.mark.django_db
def test_an_inflated_bundle_fails_the_threshold_it_claims_to_meet(approved, people, api_as):
    """The summaries claim 185 samples/s per card; the plan asks 150; the raw step times give
    92.5, so the criterion fails and the bundle is marked as edited."""
    case, offer = approved
    tariq = api_as("tariq")
    body = {"offer": offer.pk, "training_min_samples_per_s_per_card": "150"}
    body["checkpoint_max_restore_s"] = "5"
    plan = tariq.post("/api/v1/acceptance-plans/", body, format="json").json()
    spoofed = copy.deepcopy(TRAIN)
    spoofed["all_cards"]["samples_per_s"] *= 2
    spoofed["all_cards"]["samples_per_s_per_card"] *= 2
    spoofed["checkpoint"]["restored_sha256"] = "0" * 64
    bundle = _upload(people["tariq"], case, offer, spoofed)
    state = tariq.get(f"/api/v1/acceptance-plans/{plan['id']}/state/").json()
    judged = _criteria(state)
    assert judged["training_throughput"]["status"] == "failed"
    assert judged["training_throughput"]["measured"].startswith("92.5 samples/s")
    assert judged["checkpoint_restore"]["status"] == "failed"
    assert (
        judged["checkpoint_restore"]["reason"] == "the restored state differs from the state saved"
    )
    stored = tariq.get(f"/api/v1/evidence-bundles/{bundle}/").json()
    assert {d["metric"] for d in stored["client_summary_disagreements"]} == {
        "samples_per_s",
        "samples_per_s_per_card",
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    "field,value",
    [
        ("training_min_samples_per_s_per_card", "0"),
        ("training_min_scaling_pct", "100.5"),
        ("checkpoint_max_save_s", "86400.01"),
        ("checkpoint_max_restore_s", "-1"),
    ],
)
def test_a_threshold_out_of_bounds_is_refused_with_a_reason(approved, people, api_as, field, value):
    _case, offer = approved
    response = api_as("tariq").post(
        "/api/v1/acceptance-plans/", {"offer": offer.pk, field: value}, format="json"
    )
    assert response.status_code == 400 and field in response.json()


def test_decimal_thresholds_compare_with_the_float_figures():
    from apps.acceptance import rules

    measurement = rules.TrainingMeasurement(
        bundle_id=1, bundle_sha256="a" * 64, backend="cuda", one_card_samples_per_s=100.0,
        cards=8, per_card_samples_per_s=90.0, scaling_efficiency=0.9,
    )  # fmt: skip
    exact = rules.training_throughput_criterion(measurement, Decimal("90"))
    assert exact is not None and exact.status == rules.PASSED

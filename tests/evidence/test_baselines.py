"""Pinned baselines: the comparison rules table by table, the pin and unpin services, and every
baseline page and endpoint for every role."""

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from rest_framework.test import APIClient

from apps.core.services import StateConflict
from apps.evidence import baselines
from apps.evidence.models import Baseline
from apps.evidence.rules import baseline as rules
from apps.evidence.services import bundle_mark_demo
from tests.evidence.factories import make_token, record_composed
from tests.factories import FULL_SPEC, make_case, make_offer

ROLES = ["priya", "lena", "tariq", "aude", "ada"]
EVERYONE = set(ROLES)
TECH = {"tariq", "ada"}


def level(c, *, tok_s=1000.0, ttft_p95=400.0, tpot_p50=20.0, errors=0.0, n=200):
    return {
        "concurrency": c,
        "n": n,
        "errors": round(errors * n),
        "error_rate": errors,
        "ttft_ms": {"n": n, "p50": ttft_p95 / 2, "p95": ttft_p95},
        "tpot_ms": {"n": n, "p50": tpot_p50},
        "output_tok_s": {"n": 3, "mean": tok_s},
    }


def answers(**passed):
    return {
        "reference_sha256": "r" * 64,
        "items": [
            {
                "id": item,
                "core": True,
                "passed": ok,
                "expected": "391",
                "received": "391" if ok else "392",
                "reason": "" if ok else "differs by 1 (tolerance 0)",
            }
            for item, ok in passed.items()
        ],
    }


def summary(*levels, matmul=None, bandwidth=None, correctness=None) -> dict:
    bench = {}
    if matmul is not None:
        bench["matmul"] = [
            {"device": "cuda:0", "dtype": "bf16", "regime": "sustained", "median": matmul}
        ]
    if bandwidth is not None:
        bench["memory_bw"] = [{"device": "cuda:0", "kernel": "copy", "best": bandwidth}]
    found = {"levels": list(levels), "bench": bench, "cells": []}
    if correctness is not None:
        found["correctness"] = correctness
    return found


def row(comparison, group, where):
    return next(r for r in comparison.metrics if r.group == group and r.where == where)


# (what changed, the new level, the group, whether it regressed) at the 10 % default tolerances
LOAD_TABLE = [
    ("throughput down 9 %", level(4, tok_s=910.0), rules.THROUGHPUT, False),
    ("throughput down 11 %", level(4, tok_s=890.0), rules.THROUGHPUT, True),
    ("throughput up 30 %", level(4, tok_s=1300.0), rules.THROUGHPUT, False),
    ("P95 TTFT up 9 %", level(4, ttft_p95=436.0), rules.TTFT, False),
    ("P95 TTFT up 25 %", level(4, ttft_p95=500.0), rules.TTFT, True),
    ("P95 TTFT down by half", level(4, ttft_p95=200.0), rules.TTFT, False),
    ("TPOT up 50 %", level(4, tpot_p50=30.0), rules.TPOT, True),
    ("errors up 0.05 points", level(4, errors=0.0005), rules.ERRORS, False),
    ("errors up 0.5 points", level(4, errors=0.005), rules.ERRORS, True),
]


@pytest.mark.parametrize(
    "change,new_level,group,regressed", LOAD_TABLE, ids=[t[0] for t in LOAD_TABLE]
)
def test_each_load_metric_is_judged_in_its_direction_within_its_tolerance(
    change, new_level, group, regressed
):
    comparison = rules.compare(summary(level(4)), summary(new_level))
    judged = row(comparison, group, "4")
    assert judged.regression is regressed, change
    assert judged.direction == (rules.HIGHER if group == rules.THROUGHPUT else rules.LOWER)
    assert comparison.regressed is regressed
    assert bool(judged.finding) is regressed


def test_a_finding_names_the_metric_the_baseline_value_and_the_new_value():
    comparison = rules.compare(summary(level(4)), summary(level(4, tok_s=640.0)))
    [finding] = comparison.findings
    assert finding == (
        "Output tokens/s at concurrency 4 regressed: 1,000.00 tok/s in the baseline, "
        "640.00 tok/s now (-36.0 %; tolerance at most 10 % lower)"
    )
    assert row(comparison, rules.THROUGHPUT, "4").change_pct == pytest.approx(-36.0)


def test_the_plans_tolerances_decide():
    loose = rules.Tolerances(throughput_pct=Decimal("40"), latency_pct=Decimal("50"))
    comparison = rules.compare(
        summary(level(4)), summary(level(4, tok_s=640.0, ttft_p95=580.0)), loose
    )
    assert not comparison.regressed
    assert row(comparison, rules.TTFT, "4").tolerance == "at most 50 % higher"


def test_a_p95_on_too_few_requests_is_not_compared():
    comparison = rules.compare(summary(level(4)), summary(level(4, ttft_p95=900.0, n=40)))
    ttft = row(comparison, rules.TTFT, "4")
    assert ttft.status == rules.NOT_COMPARED and "130 needed" in ttft.reason
    assert not ttft.regression


def test_a_level_only_one_run_measured_is_not_compared():
    comparison = rules.compare(summary(level(4), level(8)), summary(level(4)))
    assert row(comparison, rules.THROUGHPUT, "8").status == rules.NOT_COMPARED
    assert row(comparison, rules.THROUGHPUT, "8").reason == "not measured in this run"


def test_matmul_and_bandwidth_are_higher_is_better():
    comparison = rules.compare(
        summary(matmul=700.0, bandwidth=3000.0), summary(matmul=560.0, bandwidth=2900.0)
    )
    assert row(comparison, rules.MATMUL, "bf16").regression
    assert not row(comparison, rules.BANDWIDTH, "").regression
    assert comparison.findings == [
        "BF16 matmul regressed: 700.00 TFLOP/s in the baseline, 560.00 TFLOP/s now "
        "(-20.0 %; tolerance at most 10 % lower)"
    ]


def test_an_answer_right_in_the_baseline_and_wrong_now_is_a_regression():
    comparison = rules.compare(
        summary(correctness=answers(a=True, b=False, c=True)),
        summary(correctness=answers(a=False, b=True, c=True)),
    )
    assert [a.item_id for a in comparison.wrong_answers] == ["a"]
    assert comparison.findings == [
        "Answer a regressed: right in the baseline, wrong now (expected “391”, received “392”)"
    ]


# --- services ---------------------------------------------------------------------


@pytest.fixture
def world(tariq):
    case = make_case(tariq)
    offer = make_offer(tariq, case, spec=FULL_SPEC)
    token = make_token(tariq, case, offer).record
    first = record_composed(offer, token, n=1, checks=[], summary=summary(level(4)))
    second = record_composed(offer, token, n=2, checks=[], summary=summary(level(4, tok_s=500)))
    return {"case": case, "offer": offer, "token": token, "first": first, "second": second}


def test_only_a_tech_lead_pins_and_a_reason_is_required(world, priya, tariq):
    with pytest.raises(PermissionDenied):
        baselines.baseline_pin(actor=priya, bundle=world["first"], offer=world["offer"], reason="x")
    with pytest.raises(ValidationError) as refused:
        baselines.baseline_pin(actor=tariq, bundle=world["first"], offer=world["offer"], reason=" ")
    assert "reason" in refused.value.message_dict
    assert not Baseline.objects.exists()


def test_demo_data_and_a_run_that_measured_nothing_are_refused(world, tariq):
    empty = record_composed(world["offer"], world["token"], n=3, checks=[], summary={"cells": []})
    with pytest.raises(ValidationError, match="compare with"):
        baselines.baseline_pin(actor=tariq, bundle=empty, offer=world["offer"], reason="r")
    demo = bundle_mark_demo(actor=tariq, bundle=world["first"], note="datasheet values")
    with pytest.raises(ValidationError, match="Demo data"):
        baselines.baseline_pin(actor=tariq, bundle=demo, offer=world["offer"], reason="r")


def test_a_run_of_another_offer_is_not_this_offers_baseline(world, tariq):
    other = make_offer(tariq, world["case"], spec=FULL_SPEC)
    with pytest.raises(ValidationError, match="another offer"):
        baselines.baseline_pin(actor=tariq, bundle=world["first"], offer=other, reason="r")


def test_pinning_replaces_with_history_and_the_later_run_is_compared(world, tariq):
    first = baselines.baseline_pin(
        actor=tariq, bundle=world["first"], offer=world["offer"], reason="Known good"
    )
    against = baselines.comparison_for_bundle(world["second"])
    assert against.state == baselines.COMPARED and against.comparison.regressed
    assert baselines.comparison_for_bundle(world["first"]).state == baselines.IS_BASELINE

    second = baselines.baseline_pin(
        actor=tariq, bundle=world["second"], offer=world["offer"], reason="After the upgrade"
    )
    first.refresh_from_db()
    assert not first.in_force and first.unpinned_by == tariq
    assert first.unpin_reason == "Replaced: After the upgrade"
    assert second.in_force
    # The older run is not compared with a baseline pinned after it.
    assert baselines.comparison_for_bundle(world["first"]).state == baselines.OLDER
    reasons = list(
        first.history.order_by("history_id").values_list("history_change_reason", flat=True)
    )
    assert reasons == [
        "Baseline pinned: Known good",
        f"Replaced by evidence {world['second'].sha256[:12]}",
    ]
    with pytest.raises(StateConflict):
        baselines.baseline_pin(
            actor=tariq, bundle=world["second"], offer=world["offer"], reason="Again"
        )


def test_the_cases_baseline_serves_an_offer_without_its_own(world, tariq):
    baselines.baseline_pin(actor=tariq, bundle=world["first"], offer=None, reason="Own hardware")
    against = baselines.comparison_for_bundle(world["second"])
    assert against.state == baselines.COMPARED and against.baseline.offer is None
    assert not against.comparison.tolerances.from_plan


def test_unpin_needs_a_reason_and_happens_once(world, tariq):
    baseline = baselines.baseline_pin(
        actor=tariq, bundle=world["first"], offer=world["offer"], reason="Known good"
    )
    with pytest.raises(ValidationError):
        baselines.baseline_unpin(actor=tariq, baseline=baseline, reason="")
    baselines.baseline_unpin(actor=tariq, baseline=baseline, reason="Wrong machine")
    with pytest.raises(StateConflict):
        baselines.baseline_unpin(actor=tariq, baseline=baseline, reason="Again")
    assert baselines.comparison_for_bundle(world["second"]).state == baselines.NO_BASELINE


# --- pages and API, for every role --------------------------------------------------


@pytest.fixture
def pinned(world, tariq):
    world["baseline"] = baselines.baseline_pin(
        actor=tariq, bundle=world["first"], offer=world["offer"], reason="Known good"
    )
    return world


@pytest.mark.parametrize("role", ROLES)
def test_pages_for_each_role(browser_as, pinned, role):
    client = browser_as(role)
    pages = [
        (reverse("evidence:detail", args=[pinned["second"].pk]), EVERYONE),
        (reverse("evidence:case", args=[pinned["case"].pk]), EVERYONE),
        (reverse("evidence:baseline-pin", args=[pinned["second"].pk]), TECH),
        (reverse("evidence:baseline-unpin", args=[pinned["baseline"].pk]), TECH),
    ]
    for url, allowed in pages:
        response = client.get(url)
        assert response.status_code == (200 if role in allowed else 403), (url, role)
    detail = client.get(pages[0][0]).content.decode()
    assert "Regressions against the baseline" in detail
    assert "Output tokens/s at concurrency 4 regressed" in detail
    assert (pages[2][0] in detail) is (role in TECH)


@pytest.mark.parametrize("role", ROLES)
def test_page_pin_and_unpin_for_each_role(browser_as, pinned, role):
    client = browser_as(role)
    response = client.post(
        reverse("evidence:baseline-pin", args=[pinned["second"].pk]),
        {"offer": pinned["offer"].pk, "reason": "Vendor's first accepted run"},
    )
    assert response.status_code == (302 if role in TECH else 403)
    in_force = Baseline.objects.get(offer=pinned["offer"], unpinned_at__isnull=True)
    assert in_force.bundle_id == (pinned["second"].pk if role in TECH else pinned["first"].pk)
    response = client.post(
        reverse("evidence:baseline-unpin", args=[in_force.pk]),
        {"reason": "Measured on the wrong host", "version": in_force.version},
    )
    assert response.status_code == (302 if role in TECH else 403)
    assert Baseline.objects.filter(unpinned_at__isnull=True).exists() is (role not in TECH)


def test_the_pin_page_shows_a_refusal_on_the_form(browser_as, pinned):
    response = browser_as("tariq").post(
        reverse("evidence:baseline-pin", args=[pinned["first"].pk]),
        {"offer": pinned["offer"].pk, "reason": "Again"},
    )
    assert response.status_code == 200
    assert "This run is already the baseline here." in response.content.decode()


def test_anonymous_visitors_are_sent_to_log_in_or_refused(client, pinned):
    page = client.get(reverse("evidence:baseline-pin", args=[pinned["second"].pk]))
    assert page.status_code == 302 and "login" in page["Location"]
    anonymous = APIClient()
    assert anonymous.get("/api/v1/baselines/").status_code == 401
    comparison = f"/api/v1/evidence-bundles/{pinned['second'].pk}/comparison/"
    assert anonymous.get(comparison).status_code == 401
    pin = {"bundle": pinned["second"].pk, "reason": "r"}
    assert anonymous.post("/api/v1/baselines/", pin, format="json").status_code == 401


@pytest.mark.parametrize("role", ROLES)
def test_api_for_each_role(api_as, pinned, role):
    api = api_as(role)
    listed = api.get("/api/v1/baselines/", {"case": pinned["case"].pk})
    assert listed.status_code == 200
    assert [b["bundle"] for b in listed.json()["results"]] == [pinned["first"].pk]

    body = api.get(f"/api/v1/evidence-bundles/{pinned['second'].pk}/comparison/")
    assert body.status_code == 200
    body = body.json()
    assert body["state"] == "compared" and body["regressed"] is True
    [throughput] = [m for m in body["metrics"] if m["metric"] == "throughput"]
    assert (throughput["baseline"], throughput["new"]) == (1000.0, 500.0)
    assert throughput["change_pct"] == -50.0 and throughput["direction"] == "higher"
    assert body["findings"][0].startswith("Output tokens/s at concurrency 4 regressed")

    pin = api.post(
        "/api/v1/baselines/",
        {"bundle": pinned["second"].pk, "offer": pinned["offer"].pk, "reason": "Upgrade"},
        format="json",
    )
    assert pin.status_code == (201 if role in TECH else 403), pin.content
    newest = Baseline.objects.filter(unpinned_at__isnull=True).get()
    unpin = api.post(f"/api/v1/baselines/{newest.pk}/unpin/", {"reason": "Bad run"}, format="json")
    assert unpin.status_code == (200 if role in TECH else 403), unpin.content
    if role in TECH:
        assert unpin.json()["in_force"] is False and unpin.json()["unpinned_by"] == role


def test_api_refusals_are_clear_and_write_nothing(api_as, pinned):
    api = api_as("tariq")
    assert (
        api.post("/api/v1/baselines/", {"bundle": pinned["second"].pk}, format="json").status_code
        == 400
    )
    missing = api.post("/api/v1/baselines/", {"bundle": 999999, "reason": "r"}, format="json")
    assert missing.status_code == 404
    again = api.post(
        "/api/v1/baselines/",
        {"bundle": pinned["first"].pk, "offer": pinned["offer"].pk, "reason": "r"},
        format="json",
    )
    assert again.status_code == 409
    assert Baseline.objects.count() == 1
    unpin = f"/api/v1/baselines/{pinned['baseline'].pk}/unpin/"
    assert api.post(unpin, {"reason": "x", "version": 99}, format="json").status_code == 409
    assert api.post(unpin, {"reason": "x"}, format="json").status_code == 200
    assert api.post(unpin, {"reason": "x"}, format="json").status_code == 409

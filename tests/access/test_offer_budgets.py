"""Each offer's latency budget: the RTT its newest gateway probe measured, the first-token
time its newest load test measured, the plan's typed values only as labelled estimates; the
rented machine's own probe is shown beside, never in the gateway → remote service hop."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.access.panels import case_panel
from apps.access.selectors import network_plan_of, plan_view
from tests.access.factories import make_plan
from tests.evidence.factories import make_token, record_composed
from tests.factories import make_case, make_offer, make_vendor

pytestmark = pytest.mark.django_db


def probe_summary(*medians_and_p95, n=130, section="gateway"):
    """A bundle's stored network section: one probed host per (median, p95); a gateway
    bundle's by default, else the rented machine's ``netprobe``."""
    probes = []
    for i, (median, p95) in enumerate(medians_and_p95):
        rtt = {"n": n, "p50": median, "p95": p95, "insufficient": [] if n >= 130 else ["p95"]}
        probes.append({"host": f"api-{i}.vendor.example:443", "rtt_ms": rtt, "loss": 0.0})
    return {"cells": [], section: probes}


RTT_CHECK = {
    "key": "network.gateway_rtt",
    "group": "network",
    "status": "pass",
    "measured": "measured",
}
MACHINE_RTT_CHECK = {
    "key": "network.rtt",
    "group": "network",
    "status": "pass",
    "measured": "measured",
}
TTFT_CHECK = {"key": "service.ttft_p95.c1", "group": "service", "status": "pass", "measured": "x"}


@pytest.fixture
def case(priya):
    return make_case(priya)


@pytest.fixture
def offers(priya, case):
    aurora = make_offer(priya, case, vendor=make_vendor(priya, name="Aurora Compute"))
    borealis = make_offer(priya, case, vendor=make_vendor(priya, name="Borealis GPU"))
    return aurora, borealis


@pytest.fixture
def measured(tariq, case, offers):
    """Aurora: an old probe, a newer probe, then a load test; Borealis: nothing."""
    aurora, _ = offers
    token = make_token(tariq, case, aurora).record
    now = timezone.now()
    record_composed(
        aurora,
        token,
        n=1,
        checks=[RTT_CHECK],
        summary=probe_summary((250.0, 300.0)),
        received_at=now - timedelta(days=2),
    )
    newest = record_composed(
        aurora,
        token,
        n=2,
        checks=[RTT_CHECK],
        # Two hosts probed: the slower median is the one the budget uses.
        summary=probe_summary((90.0, 95.0), (118.26, 139.2)),
        received_at=now - timedelta(days=1),
    )
    load = record_composed(
        aurora,
        token,
        n=3,
        checks=[TTFT_CHECK],
        headline={"gpus": 0, "ttft_p50_ms_lowest_level": 182.44},
        received_at=now,
    )
    return newest, load


def rows_of(case):
    return {row.offer_id: row for row in plan_view(network_plan_of(case)).offers}


def test_the_newest_probe_and_load_test_fill_the_offer_budget(tariq, case, offers, measured):
    aurora, borealis = offers
    network, load = measured
    make_plan(tariq, case, estimated_rtt_ms=Decimal("210"), queueing_and_first_token_ms=260)
    rows = rows_of(case)
    row = rows[aurora.pk]
    assert row.rtt.measured and row.rtt.bundle == network.pk and row.rtt.origin == "gateway"
    assert (row.rtt.ms, row.rtt.p95_ms) == (Decimal("118.3"), Decimal("139.2"))
    assert row.rtt.target == "api-1.vendor.example:443" and row.rtt.samples == 130
    assert row.rtt.bundle_label == network.sha256[:12]
    assert row.rtt.measured_at == network.run_finished_at
    assert row.queueing.measured and row.queueing.bundle == load.pk
    assert row.queueing.ms == Decimal("182.4")
    assert row.budget.total == Decimal("308.7") and row.verdict == "within_target"
    # Borealis has no evidence: both legs are the plan's estimates.
    other = rows[borealis.pk]
    assert other.rtt.estimate and other.rtt.ms == Decimal("210")
    assert other.queueing.estimate and other.queueing.ms == Decimal("260")
    assert other.verdict == "rtt_over_half"


def test_without_an_estimate_an_unmeasured_offer_is_incomplete(tariq, case, offers, measured):
    aurora, borealis = offers
    make_plan(tariq, case, estimated_rtt_ms=None, rtt_source="")
    rows = rows_of(case)
    assert rows[aurora.pk].verdict == "within_target"
    assert rows[borealis.pk].verdict == "incomplete"
    assert rows[borealis.pk].rtt.kind == "unknown"


def test_too_few_connects_hide_the_p95(tariq, case, offers):
    aurora, _ = offers
    token = make_token(tariq, case, aurora).record
    record_composed(
        aurora, token, n=9, checks=[RTT_CHECK], summary=probe_summary((100.0, 180.0), n=20)
    )
    make_plan(tariq, case)
    row = rows_of(case)[aurora.pk]
    assert row.rtt.ms == Decimal("100.0") and row.rtt.p95_ms is None and row.rtt.samples == 20


def test_a_bundle_without_a_probe_leaves_the_estimate(tariq, case, offers):
    aurora, _ = offers
    token = make_token(tariq, case, aurora).record
    record_composed(aurora, token, n=8, checks=[TTFT_CHECK], headline={"gpus": 0})
    make_plan(tariq, case)
    row = rows_of(case)[aurora.pk]
    assert row.rtt.estimate and row.rtt.ms == Decimal("120")
    # A load test without a first-token median leaves that estimate too.
    assert row.queueing.estimate and row.queueing.ms == Decimal("200")


def test_plan_page_shows_each_offer_with_its_bundle(browser_as, tariq, case, offers, measured):
    network, load = measured
    make_plan(tariq, case, estimated_rtt_ms=Decimal("210"), queueing_and_first_token_ms=260)
    page = browser_as("tariq").get(reverse("access:plan", kwargs={"pk": case.pk})).content.decode()
    assert "Aurora Compute" in page and "Borealis GPU" in page
    assert "118.3 ms median" in page and "139.2 ms P95" in page
    assert "measured from the gateway" in page
    assert reverse("evidence:detail", args=[network.pk]) in page
    assert network.sha256[:12] in page and load.sha256[:12] in page
    assert "TTFT median at the lowest load-test concurrency" in page
    assert "308.7 / 400 ms" in page and "478 / 400 ms" in page
    assert "within target" in page and "RTT over half the budget" in page
    assert "not measured for this offer: the plan's estimate" in page


def test_plan_page_in_chinese(browser_as, tariq, case, offers, measured):
    make_plan(tariq, case)
    client = browser_as("lena")
    page = client.get(
        reverse("access:plan", kwargs={"pk": case.pk}), HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()
    assert "118.3 ms 中位数" in page and "估计值" in page


def test_api_exposes_each_offer_budget(api_as, tariq, case, offers, measured):
    aurora, borealis = offers
    network, load = measured
    make_plan(tariq, case, estimated_rtt_ms=Decimal("210"), queueing_and_first_token_ms=260)
    body = api_as("aude").get(f"/api/v1/cases/{case.pk}/network-plan/").json()
    assert body["estimated_rtt_ms"] == "210.0"
    assert body["budget"]["total"] == "478.0"  # the estimates alone
    rows = {row["offer"]: row for row in body["offer_budgets"]}
    rtt = rows[aurora.pk]["gateway_to_remote_service"]
    assert rtt["kind"] == "measured" and rtt["ms"] == "118.3" and rtt["p95_ms"] == "139.2"
    assert rtt["origin"] == "gateway" and rows[aurora.pk]["rented_machine_rtt"] is None
    assert rtt["bundle"] == network.pk and rtt["bundle_sha256_prefix"] == network.sha256[:12]
    assert rtt["measured_at"] and rtt["probed_host"] == "api-1.vendor.example:443"
    assert rows[aurora.pk]["queueing_and_first_token"]["bundle"] == load.pk
    assert rows[aurora.pk]["verdict"] == "within_target"
    assert rows[aurora.pk]["budget"]["total"] == "308.7"
    assert rows[borealis.pk]["gateway_to_remote_service"]["kind"] == "estimate"
    assert rows[borealis.pk]["gateway_to_remote_service"]["bundle"] is None
    assert rows[borealis.pk]["verdict"] == "rtt_over_half"


def test_case_panel_names_each_unmeasured_offer(tariq, aude, case, offers, measured):
    make_plan(tariq, case, estimated_rtt_ms=Decimal("210"), queueing_and_first_token_ms=260)
    missing = case_panel(case, actor=aude).missing
    assert any("Borealis GPU" in line and "no RTT measured" in line for line in missing)
    assert not any("Aurora Compute" in line and "no RTT measured" in line for line in missing)
    assert any("Borealis GPU" in line and "closer to the users" in line for line in missing)


@pytest.mark.parametrize("probed_offers", [1, 3])
def test_query_counts_do_not_grow_with_the_offers(
    priya, tariq, case, browser_as, django_assert_max_num_queries, probed_offers
):
    for n in range(probed_offers):
        offer = make_offer(priya, case)
        token = make_token(tariq, case, offer).record
        record_composed(
            offer, token, n=100 + n, checks=[RTT_CHECK], summary=probe_summary((80.0, 90.0))
        )
    make_plan(tariq, case)
    plan = network_plan_of(case)
    with django_assert_max_num_queries(3):
        assert len(plan_view(plan).offers) == probed_offers
    client = browser_as("aude")
    with django_assert_max_num_queries(14):
        page = client.get(reverse("access:plan", kwargs={"pk": case.pk}))
    assert page.content.decode().count("80 ms median") == probed_offers


def test_a_probe_from_the_rented_machine_never_fills_the_gateway_hop(
    tariq, case, offers, browser_as, api_as
):
    aurora, _ = offers
    token = make_token(tariq, case, aurora).record
    machine = record_composed(
        aurora,
        token,
        n=20,
        checks=[MACHINE_RTT_CHECK],
        summary=probe_summary((0.3, 0.4), section="netprobe"),
    )
    make_plan(tariq, case, estimated_rtt_ms=Decimal("120"))
    row = rows_of(case)[aurora.pk]
    # The estimate stays: 0.3 ms on the machine itself says nothing of the gateway's hop.
    assert row.rtt.estimate and row.rtt.ms == Decimal("120")
    assert row.machine_rtt.ms == Decimal("0.3") and row.machine_rtt.origin == "rented_machine"
    assert row.machine_rtt.bundle == machine.pk
    page = browser_as("tariq").get(reverse("access:plan", kwargs={"pk": case.pk})).content.decode()
    assert "From the rented machine: 0.3 ms median" in page
    assert "not measured for this offer: the plan&#x27;s estimate" in page or (
        "not measured for this offer: the plan's estimate" in page
    )
    body = api_as("aude").get(f"/api/v1/cases/{case.pk}/network-plan/").json()
    [budget] = [b for b in body["offer_budgets"] if b["offer"] == aurora.pk]
    assert budget["gateway_to_remote_service"]["kind"] == "estimate"
    assert budget["rented_machine_rtt"]["origin"] == "rented_machine"
    assert budget["rented_machine_rtt"]["ms"] == "0.3"

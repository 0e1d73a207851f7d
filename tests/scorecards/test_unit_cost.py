"""Cost per unit of work: the offer's price over what its GPUs served within the SLOs."""

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.core.services import tracked_update
from apps.evidence.services import at_slo
from apps.packets.document import packet_document
from apps.packets.signing import get_signer
from apps.scorecards.pricing import cost_per_gpu_hour
from apps.scorecards.unit_cost import unit_cost
from tests.approvals.factories import make_verification
from tests.factories import FULL_SPEC, make_case, make_offer

# 2.50 a GPU-hour, billed by the hour, nothing prepaid.
PRICE = cost_per_gpu_hour(
    unit_price=Decimal("2.50"),
    billing_basis="per_hour",
    gpu_count=8,
    term_months=12,
    prepayment_ratio=Decimal(0),
)
AT_SLO = {"concurrency": 32, "output_tok_s": 1000.0, "req_s": 2.0, "gpus": 8}


def test_the_cost_per_unit_of_work_is_the_hour_of_the_gpus_over_the_work_they_served():
    unit, problem = unit_cost(PRICE, {"max_concurrency_within_slo": 32, "at_slo": AT_SLO})
    assert problem == "" and unit is not None
    assert PRICE.effective_cost_per_gpu_hour == Decimal("2.50")
    assert unit.per_hour == Decimal("20.00")  # 8 GPUs × 2.50
    # 20.00 an hour ÷ 3.6 million output tokens an hour, per million.
    assert unit.per_million_output_tokens.quantize(Decimal("0.0001")) == Decimal("5.5556")
    # 20.00 an hour ÷ 7,200 requests an hour, per thousand.
    assert unit.per_thousand_requests.quantize(Decimal("0.0001")) == Decimal("2.7778")


@pytest.mark.parametrize(
    "price,headline,problem",
    [
        (None, {"at_slo": AT_SLO}, "not priced"),
        (PRICE, {}, "no verified load test yet"),
        (PRICE, {"max_concurrency_within_slo": None}, "measured no level"),
        (PRICE, {"max_concurrency_within_slo": "none"}, "no load level held"),
        (PRICE, {"max_concurrency_within_slo": 32}, "verified before throughput"),
        (PRICE, {"max_concurrency_within_slo": 32, "at_slo": {**AT_SLO, "gpus": 0}}, "no GPUs"),
    ],
)
def test_without_what_it_needs_the_cost_per_unit_says_why(price, headline, problem):
    unit, why = unit_cost(price, headline)
    assert unit is None and problem in why


GOODPUT = {"rate_rps": 2.5, "goodput_req_s": 2.4, "goodput_tok_s": 1200.0, "gpus": 8}


def test_the_rate_searchs_goodput_at_the_slo_comes_first_and_says_so():
    headline = {"max_concurrency_within_slo": 32, "at_slo": AT_SLO, "goodput_at_slo": GOODPUT}
    unit, problem = unit_cost(PRICE, headline)
    assert problem == "" and unit.basis == "rate_search" and unit.concurrency is None
    assert unit.rate_rps == Decimal("2.5")
    # 20.00 an hour ÷ 4.32 million output tokens an hour, per million.
    assert unit.per_million_output_tokens.quantize(Decimal("0.0001")) == Decimal("4.6296")
    # A rate search run on its own saw no GPU: the cards the inventory counted serve it.
    alone = {"gpus": 8, "goodput_at_slo": {**GOODPUT, "gpus": 0}}
    assert unit_cost(PRICE, alone)[0].per_hour == Decimal("20.00")
    # No GPU counted anywhere: the ladder's figures, as before.
    unit, _problem = unit_cost(PRICE, {**headline, "goodput_at_slo": {**GOODPUT, "gpus": 0}})
    assert unit.basis == "ladder" and unit.concurrency == 32


def test_a_rate_not_measured_leaves_only_that_cost_out():
    unit, _problem = unit_cost(
        PRICE, {"max_concurrency_within_slo": 32, "at_slo": {**AT_SLO, "req_s": None}}
    )
    assert unit.per_thousand_requests is None and unit.per_million_output_tokens is not None


def _cell(round_, concurrency, tokens, requests, prompt_set="short"):
    return {
        "round": round_,
        "concurrency": concurrency,
        "prompt_set": prompt_set,
        "output_tok_s": tokens,
        "req_s": requests,
    }


def test_the_load_at_the_slo_averages_each_rounds_cells_then_the_rounds():
    reading = SimpleNamespace(
        facts=SimpleNamespace(
            gpus=[{}, {}],
            cells=[
                _cell(1, 4, 100.0, 1.0, "short"),
                _cell(1, 4, 300.0, 3.0, "long"),  # round 1: 200 tok/s, 2 req/s
                _cell(2, 4, 400.0, 4.0),  # round 2: 400 tok/s, 4 req/s
                _cell(1, 8, 9999.0, 99.0),  # a level that broke an SLO: not counted
            ],
        )
    )
    check = SimpleNamespace(measured=4)
    assert at_slo(reading, check) == {
        "concurrency": 4,
        "output_tok_s": 300.0,
        "req_s": 3.0,
        "gpus": 2,
    }
    assert at_slo(reading, SimpleNamespace(measured="none")) is None
    assert at_slo(reading, None) is None


@pytest.fixture
def verified_offer(priya, tariq):
    offer = make_offer(
        priya,
        make_case(priya),
        spec=FULL_SPEC,
        unit_price=Decimal("2.50"),
        billing_basis="per_hour",
        contract_term_months=12,
        prepayment_ratio=Decimal(0),
    )
    verification = make_verification(tariq, offer)
    tracked_update(
        verification,
        actor=tariq,
        reason="Load test read",
        fields={"headline": {"max_concurrency_within_slo": 32, "at_slo": AT_SLO}},
    )
    return offer


@pytest.mark.parametrize("role", ["priya", "lena", "tariq", "aude", "ada"])
def test_the_offer_page_shows_the_cost_per_unit_beside_the_price(browser_as, verified_offer, role):
    page = browser_as(role).get(reverse("offers:detail", args=[verified_offer.pk]))
    text = page.content.decode()
    assert "Cost per unit of work" in text
    assert "5.56" in text and "per million output tokens" in text
    assert "2.78" in text and "per thousand requests" in text
    assert "Measured at concurrency 32" in text


def test_the_offer_matrix_and_its_export_carry_the_cost_per_unit(browser_as, verified_offer):
    client = browser_as("priya")
    page = client.get(reverse("scorecards:matrix", args=[verified_offer.case_id]))
    assert "per million output tokens" in page.content.decode()
    csv = client.get(reverse("scorecards:matrix", args=[verified_offer.case_id]), {"format": "csv"})
    body = b"".join(csv.streaming_content) if csv.streaming else csv.content
    header, row = body.decode("utf-8-sig").splitlines()[:2]
    assert "Cost per million output tokens" in header and "5.56" in row


def test_the_cost_per_unit_is_said_in_chinese(browser_as, verified_offer):
    page = browser_as("priya").get(
        reverse("offers:detail", args=[verified_offer.pk]), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9"
    )
    text = page.content.decode()
    assert "单位工作量成本" in text and "每百万输出 token" in text
    assert "在满足服务水平的最高并发 32 下测得" in text


def test_the_packet_comparison_carries_the_cost_per_unit(verified_offer, priya, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    document = packet_document(
        verified_offer.case,
        number="DIL-2026-000077",
        requested_by=priya,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )
    chapter = next(c for c in document.chapters if "Comparison of offers" in c.title)
    assert "Cost per million output tokens" in chapter.html and "5.56" in chapter.html


def test_the_offer_page_says_the_cost_rests_on_the_rate_search(browser_as, verified_offer, tariq):
    verification = verified_offer.spec_verifications.latest("created_at")
    headline = {**verification.headline, "goodput_at_slo": GOODPUT}
    tracked_update(verification, actor=tariq, reason="Rate search", fields={"headline": headline})
    text = browser_as("priya").get(reverse("offers:detail", args=[verified_offer.pk])).text
    assert "measured by the open-loop rate search at 2.50 requests/s" in text
    assert "4.63" in text and "Measured at concurrency" not in text

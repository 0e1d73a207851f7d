"""The calculator in the browser and the API, and the demand on the case page."""

from decimal import Decimal

import pytest
from django.urls import reverse

from apps.sizing.models import ComputeDemand
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.pages import whole_case

# Llama 3.1 70B for 600 × 32k sequences on H200 (140.4 GiB as NVML reports):
# weights 70,553,706,496 × 2 B = 131.42 GiB; KV 2 × 80 × 8 × 128 × 2 B = 320 KiB/token
# = 10 GiB per 32,768-token sequence; 8 cards × 140.4 × 0.85 − 131.42 = 823.3 GiB
# → 82 sequences per instance → ⌈600 ÷ 82⌉ = 8 instances = 64 cards.
DEMAND = {
    "mode": "inference",
    "model_preset": "llama-3.1-70b",
    "weight_dtype": "bf16",
    "kv_dtype": "fp16",
    "context_tokens": 32768,
    "target_concurrency": 600,
    "tensor_parallel": 8,
    "card_memory_gib": "140.4",
    "reserve_pct": "15",
}


def test_the_calculator_page_shows_the_working(browser_as, people):
    page = browser_as("aude").get(reverse("sizing:calculator"), DEMAND).content.decode()
    assert "131.42 GiB" in page  # weights
    assert "327,680 bytes" in page  # KV per token
    assert "10.00 GiB" in page  # KV per sequence
    assert "<dd>82</dd>" in page  # sequences per instance
    assert "<strong>8</strong>" in page and "<strong>64</strong>" in page


def test_the_weights_only_failure_is_shown_as_a_failure(browser_as, people):
    # 70B bf16 on 2 × 80 GB at 128k context: weights fit, not one sequence does.
    params = {
        **DEMAND,
        "tensor_parallel": 2,
        "card_memory_gib": "79.6",
        "context_tokens": 131072,
        "target_concurrency": 1,
    }
    page = browser_as("aude").get(reverse("sizing:calculator"), params).content.decode()
    assert "Does not fit:" in page
    assert "Fits with weights only" in page


def test_a_custom_architecture_needs_its_numbers(browser_as, people):
    params = {**DEMAND, "model_preset": "", "layers": 32}
    response = browser_as("aude").get(reverse("sizing:calculator"), params)
    assert "parameters" in response.context["form"].errors


def test_tariq_saves_the_demand_and_the_case_compares_each_offer(browser_as, priya, tariq):
    case = make_case(priya)
    make_offer(priya, case, accelerator_count=64, spec=FULL_SPEC)
    small = make_offer(priya, case, accelerator_count=48, spec=FULL_SPEC)
    client = browser_as("tariq")
    response = client.post(
        f"{reverse('sizing:calculator')}?case={case.pk}", {**DEMAND, "case": case.pk}
    )
    assert response.status_code == 302
    demand = ComputeDemand.objects.get(case=case)
    assert demand.history.first().history_user == tariq

    page = whole_case(client, case.pk).content.decode()
    assert "This offer gives 8 instances, you need 8" in page
    assert "This offer gives 6 instances, you need 8" in page
    offer_page = client.get(reverse("offers:detail", kwargs={"pk": small.pk})).content.decode()
    assert "short by 2" in offer_page


def test_a_reader_cannot_save_a_demand(browser_as, priya):
    case = make_case(priya)
    response = browser_as("aude").post(reverse("sizing:calculator"), {**DEMAND, "case": case.pk})
    assert response.status_code == 403
    assert not ComputeDemand.objects.exists()


def test_the_api_computes_the_same_numbers(api_as, people):
    response = api_as("aude").post("/api/v1/sizing/", DEMAND, format="json")
    result = response.json()["result"]
    assert (result["sequences_per_instance"], result["instances"], result["total_cards"]) == (
        82,
        8,
        64,
    )
    assert result["kv_bytes_per_token"] == 327_680
    assert Decimal(result["kv_share"]) == Decimal("0.7144")


@pytest.mark.parametrize(
    "change,field",
    [
        ({"reserve_pct": "25"}, "reserve_pct"),
        ({"weight_dtype": "fp7"}, "weight_dtype"),
        (
            {
                "model_preset": "",
                "parameters": 7,
                "layers": 2,
                "hidden_size": 8,
                "attention_heads": 6,
                "kv_heads": 4,
                "head_dim": 2,
            },
            "kv_heads",
        ),
        ({"context_tokens": None}, "context_tokens"),
    ],
)
def test_the_api_names_the_bad_field(api_as, people, change, field):
    body = {k: v for k, v in {**DEMAND, **change}.items() if v is not None}
    response = api_as("aude").post("/api/v1/sizing/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_replacing_a_saved_demand_through_the_api_needs_a_reason(api_as, priya):
    case = make_case(priya)
    api = api_as("tariq")
    url = f"/api/v1/cases/{case.pk}/compute-demand/"
    assert api.put(url, DEMAND, format="json").status_code == 201
    assert api.put(url, {**DEMAND, "target_concurrency": 700}, format="json").status_code == 400
    response = api.put(
        url, {**DEMAND, "target_concurrency": 700, "change_reason": "Growth"}, format="json"
    )
    assert response.status_code == 428 and "version" in response.json()
    response = api.put(
        url,
        {**DEMAND, "target_concurrency": 700, "change_reason": "Growth", "version": 1},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["result"]["instances"] == 9

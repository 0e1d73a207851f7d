"""The calculator page and the sizing API at their input boundaries: never a 500.

A query naming no case is a 404; numbers past each input's bound are refused by name on
the page and in the API; at every bound at once the calculator still computes; and a
PUT of a custom model replaces a saved preset instead of being sized as that preset.
"""

import pytest
from django.urls import reverse

from apps.sizing.inputs import INPUT_MAX
from apps.sizing.models import ComputeDemand
from tests.factories import make_case
from tests.sizing.test_sizing_pages import DEMAND

pytestmark = pytest.mark.postgres

# Llama 3.1 8B's published shape, entered by hand as a custom model.
CUSTOM = {
    "model_name": "Our 8B",
    "parameters": 8_030_261_248,
    "layers": 32,
    "hidden_size": 4096,
    "attention_heads": 32,
    "kv_heads": 8,
    "head_dim": 128,
}
CUSTOM_DEMAND = {**{k: v for k, v in DEMAND.items() if k != "model_preset"}, **CUSTOM}
TRAINING = {
    "mode": "training",
    "weight_dtype": "bf16",
    "card_memory_gib": "140.4",
    "reserve_pct": "15",
    "micro_batch_sequences": 1,
    "sequence_tokens": 4096,
    "optimizer": "adamw",
    **CUSTOM,
}
HUGE = 10**30


@pytest.mark.parametrize("value", ["abc", "1.5", "1e3", "0", "-1", " ", "%00"])
def test_a_case_query_that_names_no_case_is_a_404(browser_as, people, value):
    response = browser_as("tariq").get(reverse("sizing:calculator") + f"?case={value}")
    assert response.status_code == 404


def test_a_case_query_that_names_a_case_shows_it(browser_as, priya):
    case = make_case(priya, name="Inference cluster")
    response = browser_as("tariq").get(reverse("sizing:calculator"), {"case": case.pk})
    assert response.status_code == 200
    assert response.context["case"] == case


@pytest.mark.parametrize("value", ["abc", "", "1.5"])
def test_saving_to_a_case_that_is_not_a_number_is_a_404(browser_as, people, value):
    response = browser_as("tariq").post(reverse("sizing:calculator"), {**DEMAND, "case": value})
    assert response.status_code == 404
    assert not ComputeDemand.objects.exists()


def test_a_saved_version_that_is_not_a_number_is_a_400_and_changes_nothing(browser_as, priya):
    case = make_case(priya)
    client = browser_as("tariq")
    url = f"{reverse('sizing:calculator')}?case={case.pk}"
    assert client.post(url, {**DEMAND, "case": case.pk}).status_code == 302
    response = client.post(
        url,
        {**DEMAND, "target_concurrency": 700, "case": case.pk, "version": "abc"},
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert response.status_code == 400
    assert "Version: Enter a whole number." in response.content.decode()
    demand = ComputeDemand.objects.get()
    assert (demand.version, demand.target_concurrency) == (1, 600)


@pytest.mark.parametrize("field", sorted(INPUT_MAX))
def test_the_page_refuses_a_number_past_its_bound_by_name(browser_as, people, field):
    base = TRAINING if field in ("micro_batch_sequences", "sequence_tokens") else CUSTOM_DEMAND
    response = browser_as("tariq").get(reverse("sizing:calculator"), {**base, field: HUGE})
    assert response.status_code == 200
    assert list(response.context["form"].errors) == [field]
    assert response.context["result"] is None


@pytest.mark.parametrize("field", sorted(INPUT_MAX))
def test_the_api_refuses_a_number_past_its_bound_by_name(api_as, people, field):
    base = TRAINING if field in ("micro_batch_sequences", "sequence_tokens") else CUSTOM_DEMAND
    response = api_as("tariq").post("/api/v1/sizing/", {**base, field: HUGE}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        field: [f"Ensure this value is less than or equal to {INPUT_MAX[field]}."]
    }
    over = api_as("tariq").post(
        "/api/v1/sizing/", {**base, field: INPUT_MAX[field] + 1}, format="json"
    )
    assert over.status_code == 400 and list(over.json()) == [field]


def test_the_api_refuses_a_huge_number_when_saving_a_demand(api_as, priya):
    case = make_case(priya)
    url = f"/api/v1/cases/{case.pk}/compute-demand/"
    response = api_as("tariq").put(url, {**CUSTOM_DEMAND, "layers": HUGE}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["layers"]
    assert not ComputeDemand.objects.exists()


@pytest.mark.parametrize("base", [CUSTOM_DEMAND, TRAINING], ids=["inference", "training"])
def test_every_input_at_its_bound_still_computes(api_as, people, base):
    at_bound = {
        **base,
        **{name: INPUT_MAX[name] for name in INPUT_MAX if name in base},
        "kv_heads": INPUT_MAX["attention_heads"],
        "weight_dtype": "fp32",
        "card_memory_gib": "99999.99",
    }
    if base["mode"] == "inference":
        at_bound["kv_dtype"] = "fp32"
    response = api_as("tariq").post("/api/v1/sizing/", at_bound, format="json")
    assert response.status_code == 200, response.content[:300]
    assert response.json()["result"]["in_gib"]


@pytest.mark.parametrize(
    "query",
    [
        {"mode": "inference", "card_memory_gib": "NaN"},
        {"mode": "inference", "reserve_pct": "Infinity"},
        {"mode": "inference", "card_memory_gib": "1e400"},
        {"mode": "inference", "layers": "9" * 5000},
        {"mode": "training", "optimizer": "xyz"},
        {"mode": "xyz"},
        {"mode": "inference", "model_preset": "../../etc"},
    ],
)
def test_malformed_queries_never_fail_the_page(browser_as, people, query):
    response = browser_as("tariq").get(reverse("sizing:calculator"), {**CUSTOM_DEMAND, **query})
    assert response.status_code == 200
    assert response.context["form"].errors


def test_unknown_query_parameters_are_ignored(browser_as, people):
    query = {**CUSTOM_DEMAND, "page": "abc", "month": "xyz", "version": "abc"}
    response = browser_as("tariq").get(reverse("sizing:calculator"), query)
    assert response.status_code == 200
    assert response.context["result"].total_cards > 0


def test_a_put_of_a_custom_model_replaces_the_saved_preset(api_as, priya):
    case = make_case(priya)
    api = api_as("tariq")
    url = f"/api/v1/cases/{case.pk}/compute-demand/"
    preset = api.put(url, DEMAND, format="json")
    assert preset.status_code == 201
    assert preset.json()["result"]["weights_bytes"] == 70_553_706_496 * 2
    response = api.put(
        url,
        {**CUSTOM_DEMAND, "version": preset.json()["version"], "change_reason": "Our own 8B"},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["inputs"]["model_preset"] == ""
    assert body["inputs"]["parameters"] == "8030261248"
    assert body["result"]["weights_bytes"] == 8_030_261_248 * 2
    demand = ComputeDemand.objects.get()
    assert (demand.model_preset, demand.parameters) == ("", 8_030_261_248)
    assert api.get(url).json()["result"]["weights_bytes"] == 8_030_261_248 * 2


def test_a_put_of_a_custom_model_without_its_numbers_is_refused_by_name(api_as, priya):
    case = make_case(priya)
    api = api_as("tariq")
    url = f"/api/v1/cases/{case.pk}/compute-demand/"
    assert api.put(url, DEMAND, format="json").status_code == 201
    partial = {k: v for k, v in CUSTOM_DEMAND.items() if k != "head_dim"}
    response = api.put(url, {**partial, "version": 1, "change_reason": "Our 8B"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"head_dim": ["required for a custom model (or choose a preset)"]}
    assert ComputeDemand.objects.get().model_preset == "llama-3.1-70b"


def test_a_put_leaving_out_training_fields_clears_them(api_as, priya):
    case = make_case(priya)
    api = api_as("tariq")
    url = f"/api/v1/cases/{case.pk}/compute-demand/"
    assert api.put(url, {**DEMAND, "micro_batch_sequences": 4}, format="json").status_code == 201
    response = api.put(
        url, {**DEMAND, "version": 1, "change_reason": "Inference only"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert ComputeDemand.objects.get().micro_batch_sequences is None

"""The case's requirement spec through HTTP: its page, its API, the offer page and the packet.

tariq (tech lead) owns the sizing, so he writes the requirement spec; priya, lena and
aude read it; ada may do anything. Every offer's declared spec is checked against it.
"""

from decimal import Decimal

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from apps.casework.packet.chapters import case_sections
from apps.sizing.models import RequirementSpec
from apps.sizing.services import compute_demand_save, requirement_spec_save
from tests.factories import FULL_SPEC, make_case, make_offer
from tests.sizing.test_fit import INFERENCE

READERS = ("priya", "lena", "tariq", "aude", "ada")
WRITERS = {"tariq", "ada"}
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
# What the sizing gives for Llama 3.1 70B, 600 × 32k sequences on 140.4 GiB cards.
FROM_SIZING = {
    "memory_per_card_gib": "140.40",
    "card_count": 64,
    "tensor_parallel": 8,
    "pipeline_parallel": 1,
    "data_parallel": 8,
    "cards_per_node": 8,
    "intra_node_interconnect": "nvlink",
}


@pytest.fixture
def world(priya, tariq):
    case = make_case(priya)
    compute_demand_save(actor=tariq, case=case, fields=INFERENCE)
    good = make_offer(priya, case, spec=FULL_SPEC)  # 64 × H200, nodes of 8, NVLink
    short = make_offer(
        priya,
        case,
        accelerator_count=32,
        spec={
            **FULL_SPEC,
            "memory_per_card_gib": Decimal("79.6"),
            "intra_node_interconnect": "pcie",
        },
    )
    return {"case": case, "good": good, "short": short}


def _saved(tariq, case, **changes):
    return requirement_spec_save(
        actor=tariq, case=case, fields={**FROM_SIZING, **changes}, reason="From the sizing"
    )


def _page(world) -> str:
    return reverse("sizing:requirement", kwargs={"case_pk": world["case"].pk})


# --- the page ---------------------------------------------------------------------------


@pytest.mark.parametrize("role", READERS)
def test_every_role_reads_the_requirement_page(browser_as, world, role):
    response = browser_as(role).get(_page(world))
    assert response.status_code == 200
    # Only those who own the sizing get the form.
    assert (b'name="card_count"' in response.content) is (role in WRITERS)


def test_anonymous_visitor_is_sent_to_sign_in(client, world):
    response = client.get(_page(world))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_before_saving_the_page_shows_what_the_sizing_gives(browser_as, world):
    html = browser_as("aude").get(_page(world)).content.decode()
    assert 'data-requirement-saved="no"' in html
    assert html.count('data-source="sizing"') == len(FROM_SIZING)
    assert "8 instances × 8 cards." in html


def test_tariq_saves_the_spec_from_the_sizing_and_every_offer_is_checked(browser_as, world, tariq):
    client = browser_as("tariq")
    form = client.get(_page(world)).context["form"]
    assert form.initial["card_count"] == 64  # prefilled from the sizing
    body = {name: value for name, value in FROM_SIZING.items()}
    response = client.post(_page(world), body)
    assert response.status_code == 302
    saved = RequirementSpec.objects.get(case=world["case"])
    assert (saved.card_count, saved.tensor_parallel, saved.cards_per_node) == (64, 8, 8)
    assert saved.history.first().history_user == tariq
    html = client.get(_page(world)).content.decode()
    assert html.count('data-source="sizing"') == len(FROM_SIZING)
    assert html.count('data-requirement="meets"') == 1
    assert html.count('data-requirement="short"') == 1
    assert "Card count: needs at least 64 cards; the offer declares 32 cards" in html


def test_an_item_changed_by_hand_says_so_and_what_the_sizing_gives(browser_as, world, tariq):
    spec = _saved(tariq, world["case"])
    response = browser_as("tariq").post(
        _page(world),
        {
            **FROM_SIZING,
            "card_count": 72,
            "version": spec.version,
            "change_reason": "Eight spare cards for failover",
        },
    )
    assert response.status_code == 302
    html = browser_as("aude").get(_page(world)).content.decode()
    assert "Set by hand; the sizing gives 64 cards" in html
    spec.refresh_from_db()
    assert spec.history.first().history_change_reason == "Eight spare cards for failover"
    assert spec.history.count() == 2


@pytest.mark.parametrize("role", ["priya", "lena", "aude"])
def test_readers_cannot_write_the_spec(browser_as, world, role):
    response = browser_as(role).post(_page(world), FROM_SIZING)
    assert response.status_code == 403
    assert not RequirementSpec.objects.exists()


def test_a_change_without_a_reason_or_on_a_stale_version_is_refused(browser_as, world, tariq):
    spec = _saved(tariq, world["case"])
    client = browser_as("tariq")
    no_reason = client.post(_page(world), {**FROM_SIZING, "version": spec.version})
    assert no_reason.status_code == 400
    assert "Say why" in no_reason.content.decode()
    stale = client.post(
        _page(world), {**FROM_SIZING, "version": spec.version - 1, "change_reason": "Again"}
    )
    assert stale.status_code == 409
    spec.refresh_from_db()
    assert spec.version == 1


def test_a_spec_that_contradicts_itself_is_refused_with_the_reason(browser_as, world):
    response = browser_as("tariq").post(_page(world), {**FROM_SIZING, "cards_per_node": 4})
    assert response.status_code == 400
    assert "cards per node must be at least 8" in response.content.decode()
    assert not RequirementSpec.objects.exists()


OUT_OF_RANGE = "The tolerance is a share from 0 to 50 %."


def test_the_tolerance_is_set_on_the_page_and_shown_with_the_items(browser_as, world):
    client = browser_as("tariq")
    assert b'name="tolerance_pct"' in client.get(_page(world)).content
    assert client.post(_page(world), {**FROM_SIZING, "tolerance_pct": 50}).status_code == 302
    assert RequirementSpec.objects.get(case=world["case"]).tolerance_pct == 50
    html = browser_as("aude").get(_page(world)).content.decode()
    assert 'data-tolerance="50"' in html and "<strong>Tolerance:</strong> 50 %." in html
    # 32 cards against 64: 50 % short, within a tolerance of 50 %.
    assert 'data-field="card_count" data-verdict="within_tolerance"' in html
    assert "within the spec&#x27;s 50 % tolerance, so the tech lead must accept it." in html


@pytest.mark.parametrize("tolerance", ["51", "-1"])
def test_a_tolerance_outside_0_to_50_is_refused_on_the_page(browser_as, world, tolerance):
    response = browser_as("tariq").post(_page(world), {**FROM_SIZING, "tolerance_pct": tolerance})
    assert response.status_code == 400
    assert response.context["form"].errors["tolerance_pct"] == [OUT_OF_RANGE]
    assert not RequirementSpec.objects.exists()


def test_a_tolerance_left_blank_on_the_page_is_none(browser_as, world):
    response = browser_as("tariq").post(_page(world), {**FROM_SIZING, "tolerance_pct": ""})
    assert response.status_code == 302
    assert RequirementSpec.objects.get(case=world["case"]).tolerance_pct == 0
    html = browser_as("aude").get(_page(world)).content.decode()
    assert "<strong>Tolerance:</strong> none. Every shortfall blocks." in html


def test_the_calculator_of_the_case_links_to_its_requirement_spec(browser_as, world):
    url = reverse("sizing:calculator") + f"?case={world['case'].pk}"
    assert _page(world) in browser_as("lena").get(url).content.decode()


# --- the offer page, in English and Chinese -------------------------------------------------


def test_the_offer_page_names_each_shortfall(browser_as, world, tariq):
    _saved(tariq, world["case"])
    client = browser_as("priya")
    short = client.get(reverse("offers:detail", kwargs={"pk": world["short"].pk}))
    html = short.content.decode()
    assert 'data-requirement="short"' in html
    assert "Memory per card: needs at least 140.4 GiB; the offer declares 79.6 GiB" in html
    assert "Intra-node interconnect: needs NVLink / NVSwitch class; the offer declares PCIe." in (
        html
    )
    good = client.get(reverse("offers:detail", kwargs={"pk": world["good"].pk}))
    assert 'data-requirement="meets"' in good.content.decode()
    chinese = client.get(reverse("offers:detail", kwargs={"pk": world["short"].pk}), **ZH)
    assert "单卡显存：至少需要 140.4 GiB；该报价声明为 79.6 GiB（缺口 60.8 GiB）。" in (
        chinese.content.decode()
    )


def test_the_offer_page_says_when_no_spec_is_saved(browser_as, world):
    html = browser_as("priya").get(reverse("offers:detail", kwargs={"pk": world["good"].pk}))
    assert "No requirement spec has been saved for this case yet." in html.content.decode()


# --- the packet's declared-spec chapter ------------------------------------------------------


def test_the_declared_spec_chapter_carries_the_requirement_and_each_check(world, tariq):
    _saved(tariq, world["case"], term_months=24, tolerance_pct=5)
    (chapter,) = [s for s in case_sections(world["case"]) if s.title == "Declared specs"]
    html = render_to_string(chapter.template, {**chapter.context, "section": chapter})
    assert "Requirement spec" in html
    assert 'data-tolerance="5"' in html and "<strong>Tolerance:</strong> 5 %." in html
    assert 'data-field="card_count" data-source="sizing"' in html
    assert 'data-field="term_months" data-source="hand"' in html
    assert html.count('data-requirement="short"') == 2  # both offers have a 12-month term
    assert "the offer&#x27;s term is 12 months (short by 12 months)" in html


# --- the API ----------------------------------------------------------------------------------


def _api_url(world) -> str:
    return f"/api/v1/cases/{world['case'].pk}/requirement-spec/"


@pytest.mark.parametrize("role", READERS)
def test_every_role_reads_the_spec_through_the_api(api_as, world, tariq, role):
    _saved(tariq, world["case"])
    response = api_as(role).get(_api_url(world))
    assert response.status_code == 200
    body = response.json()
    assert body["card_count"] == 64 and body["version"] == 1
    items = {item["field"]: item for item in body["items"]}
    assert items["card_count"]["from_sizing"] is True
    assert items["card_count"]["sizing_reason"] == "8 instances × 8 cards."
    offers = {row["offer"]: row for row in body["offers"]}
    assert offers[world["good"].pk]["meets"] is True
    short = offers[world["short"].pk]
    verdicts = {item["field"]: item["verdict"] for item in short["items"]}
    assert verdicts["card_count"] == "short" and verdicts["cards_per_node"] == "equal"
    assert len(short["shortfalls"]) == 3


def test_anonymous_api_calls_are_refused(client, world):
    assert client.get(_api_url(world)).status_code == 401
    assert client.put(_api_url(world), {}, content_type="application/json").status_code == 401


def test_no_saved_spec_is_not_found(api_as, world):
    assert api_as("aude").get(_api_url(world)).status_code == 404


@pytest.mark.parametrize("role", READERS)
def test_only_the_sizing_owners_write_through_the_api(api_as, world, role):
    response = api_as(role).put(_api_url(world), FROM_SIZING, format="json")
    if role in WRITERS:
        assert response.status_code == 201
        assert response.json()["card_count"] == 64
    else:
        assert response.status_code == 403
        assert not RequirementSpec.objects.exists()


def test_an_api_change_needs_version_and_reason_and_clears_what_it_leaves_out(api_as, world, tariq):
    spec = _saved(tariq, world["case"], term_months=12)
    api = api_as("tariq")
    body = {**FROM_SIZING, "card_count": 72}
    assert api.put(_api_url(world), body, format="json").status_code == 400  # no reason
    with_reason = {**body, "change_reason": "Spare cards"}
    assert api.put(_api_url(world), with_reason, format="json").status_code == 428  # no version
    stale = api.put(_api_url(world), {**with_reason, "version": 0}, format="json")
    assert stale.status_code == 409
    done = api.put(_api_url(world), {**with_reason, "version": spec.version}, format="json")
    assert done.status_code == 200
    spec.refresh_from_db()
    assert (spec.card_count, spec.term_months, spec.version) == (72, None, 2)


@pytest.mark.parametrize(
    "body,field",
    [
        ({**FROM_SIZING, "card_count": 8}, "card_count"),  # 8 × 1 × 8 = 64 in the plan
        ({**FROM_SIZING, "card_tier": "fastest"}, "card_tier"),
        ({**FROM_SIZING, "memory_per_card_gib": "-1"}, "memory_per_card_gib"),
        ({**FROM_SIZING, "card_count": 10**12}, "card_count"),
        ({**FROM_SIZING, "colour": "red"}, None),  # unknown names are ignored, as in DRF
    ],
)
def test_bad_input_is_refused_with_the_field_named(api_as, world, body, field):
    response = api_as("tariq").put(_api_url(world), body, format="json")
    if field is None:
        assert response.status_code == 201
        return
    assert response.status_code == 400 and field in response.json()
    assert not RequirementSpec.objects.exists()


@pytest.mark.parametrize("tolerance", [51, -1, "7.5"])
def test_a_tolerance_outside_0_to_50_is_refused_by_the_api(api_as, world, tolerance):
    body = {**FROM_SIZING, "tolerance_pct": tolerance}
    response = api_as("tariq").put(_api_url(world), body, format="json")
    assert response.status_code == 400
    expected = "A valid integer is required." if tolerance == "7.5" else OUT_OF_RANGE
    assert response.json()["tolerance_pct"] == [expected]
    assert not RequirementSpec.objects.exists()


def test_the_api_sets_the_tolerance_and_a_whole_spec_left_without_it_has_none(api_as, world, tariq):
    api = api_as("tariq")
    created = api.put(_api_url(world), {**FROM_SIZING, "tolerance_pct": 10}, format="json")
    assert created.status_code == 201 and created.json()["tolerance_pct"] == 10
    body = {**FROM_SIZING, "version": 1, "change_reason": "No slack after all"}
    changed = api.put(_api_url(world), body, format="json")
    assert changed.status_code == 200 and changed.json()["tolerance_pct"] == 0


def test_the_declared_throughput_is_part_of_the_declared_spec_api(api_as, world, tariq):
    _saved(tariq, world["case"], throughput_tokens_per_s="25000")
    offer = world["good"]
    response = api_as("tariq").patch(
        f"/api/v1/declared-specs/{offer.pk}/",
        {
            "throughput_tokens_per_s": "30000",
            "change_reason": "Vendor's load test figure",
            "version": offer.declared_spec.version,
        },
        format="json",
    )
    assert response.status_code == 200
    body = api_as("aude").get(_api_url(world)).json()
    row = next(r for r in body["offers"] if r["offer"] == offer.pk)
    verdicts = {item["field"]: item["verdict"] for item in row["items"]}
    assert verdicts["throughput_tokens_per_s"] == "over"


def test_the_cases_sizing_area_links_the_requirement_spec_and_states_the_availability_need(
    browser_as, world, priya
):
    from apps.core.services import tracked_update

    area = reverse("cases:area", kwargs={"pk": world["case"].pk, "area": "sizing"})
    body = browser_as("aude").get(area).content.decode()
    assert f'href="{_page(world)}"' in body
    assert "Availability needed" in body and "not stated" in body
    tracked_update(
        world["case"],
        actor=priya,
        reason="The service's availability need",
        fields={"availability_need_pct": Decimal("99.5")},
    )
    body = browser_as("aude").get(area).content.decode()
    assert "99.5 %" in body
    chinese = browser_as("aude").get(area, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "所需可用性" in chinese and "每个报价的声明规格逐项与之核对" in chinese

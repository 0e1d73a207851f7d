"""The reviewers' journey, as people do it, in a real browser."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.slow]

VENDORS = [
    ("Aurora Compute", "Singapore", "64", "3.10", "per_hour", "0.3", "12"),
    ("Borealis Cloud", "Japan", "64", "2150", "per_month", "0.5", "24"),
    ("Cumulus AI", "Malaysia", "48", "1150000", "reserved", "1", "12"),
]


def test_a_case_from_opening_to_comparison(
    transactional_db, people, page, live_server, sign_in, screenshot
):
    base = live_server.url
    sign_in("priya")
    page.click("text=New case")
    page.fill("#id_name", "Chat assistant on Llama 3.1 70B")
    page.fill("#id_requirements", "600 concurrent users at 32k context")
    page.click("button:has-text('Save')")
    expect(page.locator("h1")).to_contain_text("Chat assistant on Llama 3.1 70B")
    expect(page.locator("body")).to_contain_text("0 of 3 offers")
    case_url = page.url

    for name, jurisdiction, count, price, basis, prepay, term in VENDORS:
        page.goto(f"{base}/vendors/new/")
        page.fill("#id_name", name)
        page.fill("#id_jurisdiction", jurisdiction)
        page.click("button:has-text('Save')")
        expect(page.locator(".messages")).to_contain_text("Vendor added")
        page.goto(case_url)
        page.click("text=Add offer")
        page.select_option("#id_vendor", label=name)
        page.fill("#id_accelerator_model", "NVIDIA H200 SXM 141GB")
        page.fill("#id_accelerator_count", count)
        page.fill("#id_unit_price", price)
        page.select_option("#id_billing_basis", basis)
        page.fill("#id_prepayment_ratio", prepay)
        page.fill("#id_contract_term_months", term)
        page.click("button:has-text('Save')")
        expect(page.locator(".messages")).to_contain_text("Offer added")

    page.goto(case_url)
    expect(page.locator("body")).to_contain_text("3 offers compared")
    expect(page.locator("body")).to_contain_text("Unconfirmed")

    # A mistake is shown in place and nothing is saved.
    page.click("text=Edit case")
    page.fill("#id_slo_peak_memory_pct", "140")
    page.fill("#id_change_reason", "typo")
    page.click("button:has-text('Save')")
    expect(page.locator(".field.has-error")).to_contain_text("100")
    page.goto(case_url)

    for index, score in enumerate(("4", "3", "2")):
        page.goto(case_url)
        page.locator("table a").nth(index).click()
        page.click("text=Score this offer")
        for select in page.locator("form.card select").all():
            select.select_option(score)
        page.click("button:has-text('Save scorecard')")
        expect(page.locator(".messages")).to_contain_text("Scorecard saved")
    screenshot("comparison")
    expect(page.locator("body")).to_contain_text("leader")

    sign_in("tariq")
    page.goto(case_url)
    page.click(".actions >> text=Sizing")
    page.select_option("#id_model_preset", "llama-3.1-70b")
    page.fill("#id_card_memory_gib", "140.4")
    page.select_option("#id_kv_dtype", "fp16")
    page.fill("#id_context_tokens", "32768")
    page.fill("#id_target_concurrency", "600")
    page.fill("#id_tensor_parallel", "8")
    page.click("button:has-text('Calculate')")
    expect(page.locator("#result")).to_contain_text("Cards needed")
    screenshot("sizing")
    page.click("button:has-text('Save as the compute demand')")
    expect(page.locator(".messages")).to_contain_text("compute demand")
    shortfall = re.compile(r"This offer gives 6 instances, you need 8")
    expect(page.locator("body")).to_contain_text(shortfall)
    screenshot("case")

    sign_in("aude")
    page.goto(case_url)
    expect(page.locator("text=Add offer")).to_have_count(0)
    page.goto(f"{case_url}edit/")
    expect(page.locator("body")).to_contain_text("403")

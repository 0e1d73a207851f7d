"""The cost page, the case panel, the chart, the packet chapter and the demo data."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.costs.charts import spend_charts
from apps.costs.models import Budget, CostImport, CostPeriod, ThresholdAlert
from apps.costs.packet import packet_section
from apps.costs.selectors import cost_view, limits_of
from tests.costs.factories import CLEAN, IDLE, make_budget, make_import
from tests.factories import make_case, make_offer
from tests.pages import whole_case


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def case(priya):
    case = make_case(priya)
    make_budget(priya, case, offer=make_offer(priya, case))
    make_import(priya, case, ("2026-09", CLEAN), ("2026-10", IDLE))
    return case


def test_the_cost_page_shows_the_reconciliation_causes_and_chart(browser_as, case):
    page = browser_as("lena").get(reverse("costs:case", args=[case.pk])).content.decode()
    assert "Reconciliation by month" in page
    assert "Idle instances" in page and "61.9 % idle" in page
    # Billed and committed spend, grouped and with the currency, never as raw decimals.
    assert "145,252.00 USD" in page and "1,737,984.00 USD" in page
    assert "145252.00" not in page and "1737984.00" not in page
    assert page.count('class="threshold"') == 6  # 70/90/100 on both charts
    assert "<script" not in page.split("<main", 1)[-1]


@pytest.mark.parametrize("accept", ["en", "zh-CN,zh;q=0.9"])
def test_the_cost_page_writes_amounts_for_people_in_both_languages(browser_as, case, accept):
    client = browser_as("lena")
    page = client.get(reverse("costs:case", args=[case.pk]), HTTP_ACCEPT_LANGUAGE=accept)
    html = page.content.decode()
    assert "1,900,000.00 USD" in html  # the total budget
    assert "1900000" not in html.replace('value="1900000', "")


def test_the_packet_chapter_writes_amounts_for_people(case):
    section = packet_section(case)
    html = render_to_string(section.template, {"section": section})
    assert "145,252.00" in html
    assert "145252.00" not in html


def test_the_chart_draws_the_thresholds_at_their_share_of_the_budget(case):
    view = cost_view(case)
    monthly, cumulative = spend_charts(view.reconciliation, limits_of(view.budget))
    assert [t.label for t in monthly.thresholds] == ["70 %", "90 %", "100 %"]
    ys = [t.y for t in monthly.thresholds]
    assert ys[0] > ys[1] > ys[2]  # higher threshold, higher on the page
    bottom = monthly.bottom
    # A bar at 90.8 % of the monthly budget reaches above the 90 % line.
    assert monthly.bars[0].y < ys[1] < bottom
    assert len(cumulative.dots) == 2 and cumulative.points.count(",") == 2


def test_the_case_panel_names_what_needs_attention(browser_as, case):
    page = whole_case(browser_as("tariq"), case.pk).content.decode()
    assert "Cost guardrails" in page
    assert "Costs 2026-10: 5,840 instance-hours billed" in page
    assert "90 % of the monthly budget reached" in page


def test_the_packet_chapter_lists_the_bill_files_in_the_manifest(case):
    section = packet_section(case)
    cost_import = CostImport.objects.get()
    assert section.title == "Cost guardrails and reconciliation"
    assert section.manifest_files == [
        (f"bill-{cost_import.sha256[:16]}.csv", cost_import.storage_name, cost_import.sha256)
    ]
    html = render_to_string(section.template, {"section": section})
    assert "Idle instances" in html and cost_import.sha256 in html
    assert any(qs.exists() for qs in section.history_querysets)
    assert packet_section(make_case(case.owner)) is None


def test_the_packet_chapter_takes_a_fixed_number_of_queries(priya, case):
    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            packet_section(case)
        return len(ctx.captured_queries)

    few = count()
    make_import(priya, case, *[(f"2025-{m:02d}", CLEAN) for m in range(1, 13)])
    assert count() == few


def _import_demo_bills(case):
    """The demo bills nothing (no offer is approved): its bill file, imported here."""
    from django.utils import timezone

    from apps.costs.demo import bill_csv
    from apps.costs.services import cost_import_create, threshold_alerts_send

    cost_import_create(
        actor=case.owner,
        case=case,
        raw=bill_csv(timezone.localdate()),
        file_name="aurora-usage-and-bills.csv",
        source=CostImport.Source.UPLOAD,
        note="Vendor invoices with our monitoring export",
    )
    threshold_alerts_send(case=case)


def test_seed_demo_has_a_budget_and_its_bill_file_three_months_and_an_idle_one(demo_case):
    call_command("seed_demo", stdout=StringIO())  # a second run adds nothing
    case = demo_case
    # The chat case's budget and the speech-to-text case's, each once.
    assert Budget.objects.filter(case=case).count() == 1 and Budget.objects.count() == 2
    assert not CostImport.objects.exists()
    _import_demo_bills(case)
    assert CostImport.objects.count() == 1
    assert CostPeriod.objects.count() == 3
    view = cost_view(case)
    causes = [[c.key for c in row.causes] for row in view.reconciliation.periods]
    assert causes == [[], ["idle_instances"], ["long_contexts", "price_differs"]]
    assert ThresholdAlert.objects.filter(scope="month", threshold_pct=90).count() == 3
    section = packet_section(case)
    assert section is not None and len(section.manifest_files) == 1


def test_the_demo_packet_includes_the_reconciliation_and_the_bill_file(
    demo_case, settings, tmp_path
):
    from django.utils import timezone

    from apps.packets.document import packet_document
    from apps.packets.signing import get_signer

    settings.PACKET_SIGNING_DIR = tmp_path / "signing"
    case = demo_case
    _import_demo_bills(case)
    document = packet_document(
        case,
        number="DIL-2026-000009",
        requested_by=case.owner,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )
    assert "Cost guardrails and reconciliation" in document.html
    assert "Idle instances" in document.html and "Price differs from the contract" in document.html
    cost_import = CostImport.objects.get()
    [bill] = [f for f in document.manifest["evidence_files"] if f["name"].startswith("bill-")]
    assert bill["expected_sha256"] == cost_import.sha256 and bill["status"] == "ok"

"""The demo case's SoD violation was caught and withdrawn; its network plan holds a measured
RTT per offer (demo data), the typed RTT only an estimate."""

import pytest
from django.urls import reverse

from apps.access.selectors import (
    access_matrix_of,
    access_matrix_state,
    estimate_budget,
    network_plan_of,
    plan_view,
)
from apps.casework.demo import seed_demo

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_demo_matrix_and_plan(demo_case):
    case = demo_case
    assert access_matrix_state(case).holds
    # The version that granted cluster admin to data engineering stays in the history.
    matrix = access_matrix_of(case)
    assert matrix.history.filter(history_change_reason__startswith="Controls").exists()
    # On the typed estimates alone the RTT takes over half the budget ...
    budget = estimate_budget(network_plan_of(case))
    assert budget.over_target and budget.rtt_over_half
    # ... but each offer's RTT is measured (demo data), and they differ.
    rows = {row.offer.split(" — ")[0]: row for row in plan_view(network_plan_of(case)).offers}
    assert len(rows) == 3 and all(row.rtt.measured and row.rtt.demo for row in rows.values())
    assert all(row.rtt.bundle and row.rtt.measured_at for row in rows.values())
    assert all(row.queueing.estimate for row in rows.values())  # no demo load test
    assert rows["Aurora Compute Pte. Ltd."].verdict == "within_target"
    assert rows["Borealis GPU Cloud K.K."].verdict == "over_target"
    assert rows["Cumulus AI Infrastructure Sdn. Bhd."].verdict == "rtt_over_half"
    assert seed_demo().pk == case.pk  # a second run changes nothing


def test_demo_plan_page_shows_a_measured_rtt_per_offer(demo_case, client, django_user_model):
    case = demo_case
    client.force_login(django_user_model.objects.get(username="tariq"))
    page = client.get(reverse("access:plan", kwargs={"pk": case.pk})).content.decode()
    for row in plan_view(network_plan_of(case)).offers:
        assert f"{row.rtt.ms:f} ms median" in page
        assert reverse("evidence:detail", args=[row.rtt.bundle]) in page
    assert page.count("demo data, not measured on the vendor") == 3
    assert "210 ms" in page and "estimate" in page  # the typed RTT, labelled


def test_packet_chapter_shows_the_matrix_the_plan_and_their_history(demo_case):
    from django.template.loader import render_to_string

    from apps.access.packet import packet_section
    from tests.factories import make_case

    case = demo_case
    section = packet_section(case)
    html = render_to_string(section.template, {**section.context, "section": section})
    assert "No segregation-of-duties violation" in html
    # Aurora: 8 + 118.3 measured + 260 estimated; Cumulus's RTT takes over half.
    assert "386.3 / 400 ms" in html and "closer to the users" in html
    assert "118.3 ms median" in html and "estimate" in html
    # Every link says what it sends to the vendor.
    assert html.count("De-identified, synthetic or feature data only") == 3
    assert any(qs.exists() for qs in section.history_querysets)
    assert packet_section(make_case(case.owner)) is None


def test_demo_links_send_only_what_the_assessment_lets_leave(demo_case):
    """The demo's assessment keeps raw data at home; its plan's links say they send only
    de-identified data, so no data path holds the demo case back
    (docs/rules/access.md#data-paths)."""
    from apps.access.rules import DATA_LEAVES_FINDING, DATA_STAYS
    from apps.approvals.selectors import case_register
    from apps.assessments.rules import derived_constraints
    from apps.assessments.selectors import case_assessments

    case = demo_case
    [assessment] = case_assessments(case)
    assert DATA_STAYS in {c.key for c in derived_constraints(assessment.answer_map())}
    links = network_plan_of(case).links.all()
    assert {link.data_sent for link in links} == {"deidentified"}
    assert not [e for e in case_register(case) if e.rule.code == DATA_LEAVES_FINDING]

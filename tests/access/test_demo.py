"""The demo case's SoD violation was caught and withdrawn; its latency budget is over target."""

import pytest

from apps.access.selectors import (
    access_matrix_of,
    access_matrix_state,
    network_plan_budget,
    network_plan_of,
)
from apps.cases.demo import seed_demo

pytestmark = pytest.mark.django_db


def test_demo_matrix_and_plan():
    case = seed_demo()
    assert access_matrix_state(case).holds
    # The version that granted cluster admin to data engineering stays in the history.
    matrix = access_matrix_of(case)
    assert matrix.history.filter(history_change_reason__startswith="Controls").exists()
    budget = network_plan_budget(network_plan_of(case))
    assert budget.over_target and budget.rtt_over_half
    assert seed_demo().pk == case.pk  # a second run changes nothing


def test_packet_chapter_shows_the_matrix_the_plan_and_their_history():
    from django.template.loader import render_to_string

    from apps.access.packet import packet_section
    from tests.factories import make_case

    case = seed_demo()
    section = packet_section(case)
    html = render_to_string(section.template, {**section.context, "section": section})
    assert "No segregation-of-duties violation" in html
    assert "478 / 400 ms" in html and "closer to the users" in html
    assert any(qs.exists() for qs in section.history_querysets)
    assert packet_section(make_case(case.owner)) is None

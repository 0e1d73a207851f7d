"""The demo case carries one SoD violation and a latency budget over target."""

import pytest

from apps.access.rules import CLUSTER_ADMIN_WITH_DATA_WRITE
from apps.access.selectors import access_matrix_state, network_plan_budget, network_plan_of
from apps.cases.demo import seed_demo

pytestmark = pytest.mark.django_db


def test_demo_matrix_and_plan():
    case = seed_demo()
    [violation] = access_matrix_state(case).violations
    assert (violation.rule, violation.role) == (CLUSTER_ADMIN_WITH_DATA_WRITE, "data_engineer")
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
    assert "Data engineer holds cluster administration together with Data write." in html
    assert "478 / 400 ms" in html and "closer to the users" in html
    assert any(qs.exists() for qs in section.history_querysets)
    assert packet_section(make_case(case.owner)) is None

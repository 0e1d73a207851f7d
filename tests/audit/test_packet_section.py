from django.template.loader import render_to_string

from apps.audit.packet import packet_section
from apps.audit.services import chain_verification_run
from tests.factories import make_case


def test_the_packet_shows_the_chain_head_and_its_last_verification(priya):
    case = make_case(priya)
    section = packet_section(case)
    html = render_to_string(section.template, {"section": section, **section.context})
    assert "never run" in html
    chain_verification_run(actor=priya)
    make_case(priya)  # one more row after the verification
    section = packet_section(case)
    html = render_to_string(section.template, {"section": section, **section.context})
    assert section.context["chain"].head_hash in html
    assert "intact" in html
    assert section.context["chain"].rows_since >= 1

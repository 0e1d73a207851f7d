"""The demo case carries a prepared acceptance, and its packet the acceptance report."""

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.acceptance import packet, rules
from apps.acceptance.models import AcceptanceAttachment, AcceptancePlan, AcceptanceResult
from apps.acceptance.selectors import acceptance_state
from apps.cases.models import ProcurementCase
from apps.casework.demo import seed_demo
from apps.packets.document import packet_document
from apps.packets.signing import get_signer
from tests.acceptance.factories import approved_offer, make_plan, record_faults

pytestmark = pytest.mark.django_db


def test_demo_prepares_an_acceptance_honestly_and_runs_twice(demo_case):
    case = demo_case
    case.refresh_from_db()
    plan = AcceptancePlan.objects.get(case=case)
    assert str(plan.offer.vendor) == "Aurora Compute Pte. Ltd."
    state = acceptance_state(plan)
    # Aurora holds every gate but nobody has decided: nothing is accepted, nothing failed.
    assert case.status == ProcurementCase.Status.PENDING_APPROVAL
    assert state.approval is None and not state.accepted
    statuses = [layer.status for layer in state.layers]
    assert statuses == [rules.IN_PROGRESS] * 4 + [rules.NOT_APPLICABLE]  # no baseline pinned
    # The plan's versions, vLLM among them, as the demo node's environment states them.
    [versions] = [c for c in state.layers[0].criteria if c.key == "plan_versions"]
    assert versions.status == rules.PASSED
    assert "vLLM 0.6.4" in versions.measured and "NCCL 2.21.5" in versions.measured
    counts = (
        AcceptancePlan.objects.count(),
        AcceptanceResult.objects.count(),
        AcceptanceAttachment.objects.count(),
    )
    assert counts == (1, 2, 1)
    from apps.audit.sources import case_history_querysets

    timeline_models = {queryset.model for queryset in case_history_querysets(case)}
    assert {AcceptanceResult.history.model, AcceptanceAttachment.history.model} <= timeline_models
    assert seed_demo().pk == case.pk
    assert (
        AcceptancePlan.objects.count(),
        AcceptanceResult.objects.count(),
        AcceptanceAttachment.objects.count(),
    ) == counts


def test_demo_packet_contains_the_acceptance_report(demo_case, people):
    case = demo_case
    document = packet_document(
        case,
        number="DIL-2026-000009",
        requested_by=people["aude"],
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )
    html = document.html
    assert "Acceptance and load-test report" in html
    assert "prepared ahead of the decision" in html
    assert "node-kill-recovery.log" in html
    attachment = AcceptanceAttachment.objects.get()
    assert attachment.sha256 in html
    assert f"acceptance-{attachment.pk}-node-kill-recovery.log" in html  # in the manifest


def _render(section) -> str:
    return render_to_string(section.template, {**section.context, "section": section})


def test_packet_chapter_shows_ladder_safe_level_results_and_sign_off(
    people, tariq, tomas, passing_harness
):
    from apps.acceptance.services import acceptance_signoff

    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer, required_safe_concurrency=16)
    record_faults(tariq, plan)
    acceptance_signoff(actor=tomas, plan=plan, comment="Four layers pass")
    html = _render(packet.packet_section(case))
    assert "Safe operating level: concurrency 32." in html
    assert "safe operating level at least 16" in html
    assert "Signed off by Tomas" in html
    assert "Injected node_killed" in html
    assert packet.packet_section(case).manifest_files == []


def test_packet_chapter_queries_do_not_grow_with_results(people, tariq):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from apps.acceptance.services import acceptance_attachment_add

    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    counts = []
    for kinds in (("network",), ("node_killed", "maintenance", "other")):
        for result in record_faults(tariq, plan, kinds=kinds):
            acceptance_attachment_add(
                actor=tariq, result=result, upload=SimpleUploadedFile("r.log", b"r")
            )
        with CaptureQueriesContext(connection) as queries:
            section = packet.packet_section(case)
            _render(section)
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    assert len(section.manifest_files) == 4


def test_no_plan_no_chapter(people):
    case, _offer = approved_offer(people)
    assert packet.packet_section(case) is None

"""The packet chapters of contracts, assessments and evidence, rendered from real records."""

import hashlib
import json

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.assessments import packet as assessments_packet
from apps.casework.packet.chapters import PACKET_SECTION_PROVIDERS
from apps.contracts import packet as contracts_packet
from apps.contracts.services import red_flag_waive
from apps.core.services import tracked_create
from apps.evidence import packet as evidence_packet
from apps.evidence.models import EvidenceBundle, SpecVerification
from tests.assessments.factories import make_assessment
from tests.contracts.factories import item, make_checklist, set_statuses
from tests.evidence.factories import make_token
from tests.factories import FULL_SPEC, make_case, make_offer

CHECKS = [
    {
        "key": "identity.device_count",
        "group": "identity",
        "title": "Number of accelerators matches the offer",
        "status": "pass",
        "measured": 8,
        "expected": 8,
        "tolerance": "exact",
        "source": "Declared spec",
        "detail": "",
    },
    {
        "key": "performance.matmul",
        "group": "performance",
        "title": "Dense BF16 matmul throughput",
        "status": "fail",
        "measured": "610 TFLOPS",
        "expected": "≥ 800 TFLOPS",
        "tolerance": "-10 %",
        "source": "Vendor datasheet",
        "detail": "",
    },
]


def cell(concurrency: int, rnd: int = 1) -> dict:
    return {
        "key": f"r{rnd}-short-c{concurrency}",
        "round": rnd,
        "prompt_set": "short",
        "concurrency": concurrency,
        "n": 40,
        "errors": 0,
        "ttft_ms": {"p50": 20.0 * concurrency, "p95": 30.0 * concurrency, "insufficient": []},
        "tpot_ms": {"p50": 2.0 + concurrency},
        "output_tok_s": 100.0 * concurrency,
    }


def render(section) -> str:
    return render_to_string(section.template, {**section.context, "section": section})


def store_bundle(case, offer, *, n: int, verdict: str = "failed") -> EvidenceBundle:
    content = json.dumps({"bundle": n, "offer": offer.pk}).encode()
    sha256 = hashlib.sha256(content).hexdigest()
    stored = default_storage.save(f"evidence/{sha256}.json", ContentFile(content))
    token = make_token(case.owner, case, offer).record
    bundle = tracked_create(
        EvidenceBundle,
        actor=None,
        case=case,
        offer=offer,
        token=token,
        sha256=sha256,
        size=len(content),
        storage_name=stored,
        format_version="diligence-evidence/1",
        harness_version="0.1.0",
        received_at=timezone.now(),
        run_started_at=timezone.now(),
        run_finished_at=timezone.now(),
        host_id=f"host-{n:04d}",
        nonce=token.nonce,
        summary={"cells": [cell(1), cell(2), cell(4), cell(4, rnd=2)]},
    )
    tracked_create(
        SpecVerification,
        actor=None,
        bundle=bundle,
        offer=offer,
        verdict=verdict,
        checks=CHECKS,
        headline={},
        rules_version="evidence-rules/1",
    )
    return bundle


def contract_records(lena, case, offer):
    checklist = make_checklist(lena, offer=offer)
    set_statuses(lena, checklist, {"sla": "missing", "prepayment": "needs_negotiation"})
    red_flag_waive(actor=lena, item=item(checklist, "sla"), reason="Service credits suffice")
    red_flag_waive(actor=lena, item=item(checklist, "prepayment"), reason="Prepayment capped")
    set_statuses(lena, checklist, {"prepayment": "missing"}, reason="New draft")
    return checklist


def test_every_provider_module_is_listed():
    names = {module.__name__ for module in PACKET_SECTION_PROVIDERS}
    for name in ("apps.contracts.packet", "apps.assessments.packet", "apps.evidence.packet"):
        assert name in names


def test_contracts_section_shows_items_red_flags_and_waivers(priya, lena):
    case = make_case(priya)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    contract_records(lena, case, offer)

    section = contracts_packet.packet_section(case)
    html = render(section)

    assert "template version" in html
    assert "red flag, waived" in html  # sla: waived
    assert "Service credits suffice" in html
    assert "red flag</span>" in html  # prepayment: waiver lapsed, open again
    assert "Prepayment capped" in html and "lapsed on" in html
    assert "Status changed from needs_negotiation to missing" in html
    assert lena.username in html or lena.get_full_name() in html
    assert "blocks approval" in html


def test_contracts_section_without_checklist_says_so(priya):
    case = make_case(priya)
    make_offer(priya, case)
    html = render(contracts_packet.packet_section(case))
    assert "No clause checklist for this offer" in html


def test_assessment_section_shows_state_constraints_and_aid(priya, lena):
    case = make_case(priya)
    make_offer(priya, case, spec=FULL_SPEC)
    make_assessment(lena, case, signed=True)

    section = assessments_packet.packet_section(case)
    html = render(section)

    assert "signed off" in html and "Review by" in html
    assert "One audited entry point" in html  # every access must be logged
    assert "An aid to the legal reviewer, not a legal opinion." in html
    assert "Exit readiness" in html
    assert "Every exit-readiness question is answered." in html
    assert "Cleared for de-identified inference traffic." in html
    assert "the case assessment" in html


def test_assessment_section_names_an_offer_outside_the_jurisdiction(priya, lena):
    case = make_case(priya)
    make_offer(priya, case)  # vendor in Singapore
    make_assessment(lena, case, jurisdiction="China")
    html = render(assessments_packet.packet_section(case))
    assert "outside the case assessment" in html
    assert "not signed off" in html


def test_evidence_section_shows_verification_charts_and_lists_files(priya):
    case = make_case(priya)
    offer = make_offer(priya, case, spec=FULL_SPEC)
    bundle = store_bundle(case, offer, n=1)

    section = evidence_packet.packet_section(case)
    html = render(section)

    assert "Failed" in html
    assert "Dense BF16 matmul throughput" in html and "Vendor datasheet" in html
    assert bundle.sha256 in html
    assert "host-0001" in html
    charts = html.count("<svg") - html.count('<svg class="swatch"')  # legends' colour keys
    assert charts == 4  # TTFT P50, TTFT P95, TPOT, output tokens/s
    assert "TTFT P95 (ms)" in html and "Output tokens/s" in html
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert section.manifest_files == [
        (f"evidence-{bundle.sha256[:16]}.json", bundle.storage_name, bundle.sha256)
    ]
    assert default_storage.exists(bundle.storage_name)
    assert any(qs.filter(id=bundle.pk).exists() for qs in section.history_querysets)


def test_evidence_section_says_when_an_offer_has_none(priya):
    case = make_case(priya)
    make_offer(priya, case)
    section = evidence_packet.packet_section(case)
    assert "No evidence uploaded for this offer." in render(section)
    assert section.manifest_files == []


def _case_with_records(priya, lena, offers: int):
    case = make_case(priya)
    make_assessment(lena, case, signed=True)
    for n in range(offers):
        offer = make_offer(priya, case, spec=FULL_SPEC)
        contract_records(lena, case, offer)
        make_assessment(lena, case, offer=offer)
        store_bundle(case, offer, n=n + 1)
        store_bundle(case, offer, n=n + 100, verdict="verified")
    return case


@pytest.mark.parametrize("provider", [contracts_packet, assessments_packet, evidence_packet])
def test_query_count_does_not_grow_with_offers(priya, lena, provider):
    counts = []
    for offers in (1, 3):
        case = _case_with_records(priya, lena, offers)
        with CaptureQueriesContext(connection) as queries:
            section = provider.packet_section(case)
            render(section)
        counts.append(len(queries))
    assert counts[0] == counts[1], counts

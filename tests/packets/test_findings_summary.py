"""The packet's summary and its approval chapter read the findings register: every open
and every accepted finding, with what it weighs, its owners, its public source and, once
accepted, who accepted it, as which role, why and until when
(docs/rules/findings.md#in-the-packet)."""

import copy
import re
from datetime import timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from apps.approvals import packet as approvals_packet
from apps.approvals.acceptances import finding_accept
from apps.approvals.findings import Status
from apps.approvals.selectors import case_gates, case_register
from apps.cases.services import case_update
from apps.casework.packet.chapters import case_sections
from tests.approvals.factories import make_ready_case

SLA = "contracts.sla_below_need"
WHY = "The night shift tolerates an hour's outage"


@pytest.fixture(scope="module")
def _world(module_people):
    """The ready case whose need is above its contract's 99.99 % SLA, the first offer's
    finding accepted by procurement; the other offers' findings open."""
    priya = module_people["priya"]
    case, offer, _offers = make_ready_case(module_people)
    case = case_update(
        actor=priya,
        case=case,
        fields={"availability_need_pct": Decimal("99.999")},
        reason="The service runs the night shift",
    )
    until = timezone.localdate() + timedelta(days=60)
    finding_accept(
        actor=priya,
        case=case,
        code=SLA,
        offer_id=offer.pk,
        key="sla_availability_pct",
        role="procurement_reviewer",
        reason=WHY,
        expires_on=until,
    )
    return case, offer, until


@pytest.fixture
def world(_world, people):
    return copy.deepcopy(_world)


def _text(html: str) -> str:
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))
    return re.sub(r" ([:.,;)])", r"\1", text)


def _rendered(section) -> str:
    return _text(render_to_string(section.template, {**section.context, "section": section}))


def _summary(case) -> str:
    summary = case_sections(case)[0]
    assert summary.template == "packets/sections/summary.html"
    return _rendered(summary)


def test_the_summary_names_every_accepted_finding_with_who_why_and_until_when(world):
    case, offer, until = world
    text = _summary(case)
    accepted = text.split("Accepted findings", 1)[1].split("Waivers relied on", 1)[0]
    entry = next(e for e in case_register(case) if e.status is Status.ACCEPTED)
    assert entry.rule.code == SLA and entry.finding.offer_id == offer.pk
    assert f"{offer.vendor} — {entry.rule.title}: {entry.finding.message}" in accepted
    assert "Weighs: Needs acceptance. Owned by: Procurement reviewer." in accepted
    assert f"Source: {entry.rule.source}" in accepted
    on = entry.acceptances[0].accepted_on.isoformat()
    assert (
        f"Accepted by Priya as Procurement reviewer on {on}, in force until "
        f"{until.isoformat()}. Why: {WHY}"
    ) in accepted


def test_the_summary_lists_every_open_finding_by_offer(world):
    case, offer, _until = world
    text = _summary(case)
    blockers = text.split("Open blockers", 1)[1].split("Accepted findings", 1)[0]
    # The accepted offer holds every gate; the others' findings are each named.
    assert f"{offer.vendor}: none: every gate held" in blockers
    opened = [e for e in case_register(case) if e.blocking]
    assert opened
    for entry in opened:
        assert f"{entry.rule.title}: {_text(entry.line()).strip()}" in blockers
        assert f"Weighs: {entry.rule.severity_label}." in blockers
        assert f"Owned by: {', '.join(entry.rule.owner_labels)}." in blockers
    not_stated = next(e for e in opened if e.rule.code == "contracts.sla_not_stated")
    assert "Awaits acceptance by: Procurement reviewer." in not_stated.line()
    assert f"Source: {not_stated.rule.source}" in blockers


def test_the_approval_chapter_lists_the_register_of_each_offer(world):
    case, offer, _until = world
    text = _rendered(approvals_packet.packet_section(case))
    offers = case_gates(case)
    blocks = text.split("Findings register — ")[1:]
    assert len(blocks) == len(offers)
    for entry, block in zip(offers, blocks, strict=True):
        assert block.startswith(str(entry.offer.vendor))
        mine = block.split("Every decision", 1)[0].split("Gates — ", 1)[0]
        assert entry.findings
        for finding in entry.findings:
            assert f"{finding.rule.title}: {_text(finding.line()).strip()}" in mine
            assert finding.status_label in mine
    first = next(b for b in blocks if b.startswith(str(offer.vendor))).split("Gates — ", 1)[0]
    accepted = next(e for e in case_register(case) if e.status is Status.ACCEPTED)
    on = accepted.acceptances[0].accepted_on.isoformat()
    assert f"Accepted by Priya as Procurement reviewer on {on}" in first
    assert f"Why: {WHY}" in first

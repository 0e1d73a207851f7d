"""The packet opens with an executive summary drawn from the chapters that follow."""

import re
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone, translation

from apps.approvals.services import approval_decide, case_submit_for_approval
from apps.audit.selectors import chain_status
from apps.core.services import tracked_update
from apps.packets.document import packet_document
from apps.packets.signing import get_signer
from apps.scorecards.selectors import case_comparison
from tests.approvals.factories import make_ready_case
from tests.packets.factories import CHINESE_VENDOR, make_packet_case

pytestmark = pytest.mark.django_db


def _document(case, actor):
    return packet_document(
        case,
        number="DIL-2026-000007",
        requested_by=actor,
        packet_signer=get_signer(),
        generated_at=timezone.now(),
    )


def _text(html: str) -> str:
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))
    return re.sub(r" ([:.,;)])", r"\1", text)


def _summary(document) -> str:
    first = document.opening[0]
    assert first.number == 1
    assert document.sections[0].template == "packets/sections/summary.html"
    return _text(first.html)


def test_the_summary_comes_first_and_names_the_decision_and_the_recommended_offer(people):
    priya, tariq = people["priya"], people["tariq"]
    case, offer, made = make_ready_case(people)
    case = tracked_update(
        case,
        actor=priya,
        reason="Waiver",
        fields={"offer_minimum_waiver": "Only two vendors serve this region"},
    )
    case = case_submit_for_approval(actor=priya, case=case)
    approval_decide(actor=tariq, case=case, offer=offer, decision="approved", comment="Best value")
    case.refresh_from_db()
    document = _document(case, people["aude"])

    assert [c.title for c in document.opening] == ["Executive summary"]
    numbers = [c.number for c in document.opening + document.chapters]
    assert numbers == list(range(1, len(numbers) + 1))
    assert document.chapters[0].title == "Compute demand and sizing"
    text = _summary(document)
    # The decision in force, who decided it and when.
    assert "Decision in force Approved" in text
    assert f"Decided by {tariq.get_full_name() or tariq.username} on" in text
    # The recommended offer: the one that holds every gate, with its score and price.
    row = next(r for r in case_comparison(case).rows if r.offer.pk == offer.pk)
    assert f"Recommended offer {offer.vendor} — holds every gate" in text
    assert f"score {row.score.total} out of 100" in text
    cost = f"{row.price.effective_cost_per_gpu_hour:,.4f} {offer.currency}"
    assert f"effective cost per GPU-hour {cost}" in text
    # Its gates all hold: no blockers.
    assert f"Open blockers {offer.vendor}: none: every gate held" in text
    # The waiver relied on, the acceptance, the cost, the verdicts and the chain.
    assert "Waivers relied on Three-offer minimum: Only two vendors serve this region" in text
    assert "Acceptance No acceptance yet." in text
    assert "Cost position No budget." in text
    verdicts = text.split("Evidence verdicts", 1)[1].split("Audit chain head", 1)[0]
    assert f"{offer.vendor}: Verified" in verdicts
    for other in made[1:]:
        assert f"{other.vendor}: not verified" in verdicts
    assert chain_status().head_hash in text


def test_without_a_ready_offer_the_summary_lists_every_offers_blockers(people):
    aude = people["aude"]
    case = make_packet_case(people["priya"])
    document = _document(case, aude)
    text = _summary(document)
    assert "Decision in force No decision yet." in text
    assert "No offer holds every gate." in text
    approvals = next(s for s in document.sections if s.template == "approvals/packet_section.html")
    blockers = text.split("Open blockers", 1)[1].split("Waivers relied on", 1)[0]
    for entry in approvals.context["overview"].offers:
        assert str(entry.offer.vendor) in blockers
        for gate in entry.gates:
            if not gate.held:
                assert f"{gate.title}: {_text(gate.reason).strip()}" in blockers
    assert CHINESE_VENDOR in blockers
    assert "Waivers relied on None." in text


def test_the_demo_summary_in_chinese_states_acceptance_cost_and_verdicts(demo_case):
    case = demo_case
    auditor = get_user_model().objects.get(username="aude")
    with translation.override("zh-hans"):
        document = _document(case, auditor)
        text = _summary(document)
        assert document.opening[0].title == "执行摘要"
    state = next(
        s for s in document.sections if s.template == "acceptance/packet_section.html"
    ).context["states"][0]
    costs = next(s for s in document.sections if s.template == "costs/packet_section.html")
    budget = costs.context["view"].budget
    for label in ("现行决定", "推荐报价", "未解除的阻碍", "所依据的豁免", "验收", "成本状况"):
        assert label in text
    assert "尚无验收" not in text and str(state.plan.offer.vendor) in text
    assert "暂无预算" not in text
    # Amounts read as people write them, grouped by thousands, in Chinese as in English.
    assert budget.total_amount >= 1000
    assert f"总预算 {budget.total_amount:,.2f} {budget.currency}" in text
    assert f"{budget.total_amount:.2f}" not in text
    assert "证据结论" in text and "审计链头" in text
    assert "Executive summary" not in text and "Decision in force" not in text

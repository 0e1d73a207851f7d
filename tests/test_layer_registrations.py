"""The approval gates and issuing a packet ask the whole-case layer for what reads every
area; the layer registers it when it is ready (docs/layers.md)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from apps.approvals import gathering
from apps.casework import gates, stored_gates
from apps.casework.packet import chapters
from apps.packets import composition


def test_the_layer_registers_the_packets_chapters_when_it_is_ready():
    composer = composition.packet_composer()
    assert composer.document_sections is chapters.document_sections
    assert composer.has_chapters is chapters.document_has_chapters


def test_the_layer_registers_what_the_gates_read_when_it_is_ready(monkeypatch):
    # The pages a decision is taken on read the kept gates; everyone else gathers them.
    assert gathering.gate_gatherer() is stored_gates.gather
    assert stored_gates.gather_case_gates is gates.gather_case_gates
    asked = []
    monkeypatch.setattr(stored_gates, "gather_case_gates", lambda *args: asked.append(args))
    stored_gates.gather("case")
    assert asked == [("case", None)]


def test_a_document_asked_for_with_no_composer_fails_loudly(monkeypatch):
    monkeypatch.setattr(composition, "_composer", None)
    with pytest.raises(ImproperlyConfigured, match="apps.casework"):
        composition.packet_composer()


def test_gates_asked_for_with_no_gatherer_fail_loudly(monkeypatch):
    monkeypatch.setattr(gathering, "_gatherer", None)
    with pytest.raises(ImproperlyConfigured, match="apps.casework"):
        gathering.gate_gatherer()


def test_the_layer_registers_the_requirement_the_verification_reads(monkeypatch):
    from apps.casework import requirement as casework_requirement
    from apps.evidence import requirement

    assert requirement._reader is casework_requirement.case_requirement
    monkeypatch.setattr(requirement, "_reader", None)
    with pytest.raises(ImproperlyConfigured, match="apps.casework"):
        requirement.requirement_values(object())


def test_the_layer_registers_what_approval_policies_read_when_it_is_ready(monkeypatch):
    from apps.casework import policy_facts

    assert gathering.policy_facts_reader() is policy_facts.read
    monkeypatch.setattr(gathering, "_facts_reader", None)
    with pytest.raises(ImproperlyConfigured, match="apps.casework"):
        gathering.policy_facts_reader()
